"""References to a user's own objects by name, as the command line and config files give them:
``"package.module:Name"`` (an importable module) and ``"path/to/file.py:Name"`` (a file, imported
as the module its stem names, its folder put on ``sys.path`` so that worker processes import it
too). What a referenced object *is* (a learner, an adversary) is decided by
:mod:`replify.sources`; here only how it is found."""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import io
import importlib.util
import sys
from pathlib import Path
from typing import Any, Callable

from replify.errors import InvalidArgumentError


def is_reference(text: Any) -> bool:
    """Whether ``text`` looks like ``"module:Name"`` or ``"file.py:Name"`` (registered names have no colon)."""
    return isinstance(text, str) and ":" in text and not text.startswith(":") and not text.endswith(":")


def load_reference(text: str, *, argument: str) -> Any:
    """The object named by ``"package.module:Name"`` or ``"path/to/file.py:Name"`` (``Name`` may be
    dotted: ``module:Outer.Inner``). A file is imported as the module named by its stem, its
    folder put on ``sys.path`` (so that worker processes import it too), unless another module
    already has that name, in which case it gets a name of its own."""
    where, _, name = text.rpartition(":")
    if "\x00" in text:  # no file system or module name holds one (Python's own error: "embedded null byte")
        raise InvalidArgumentError(f"{argument} {text!r}: expected 'package.module:Name' or 'path/to/file.py:Name' "
                                   "without NUL bytes")
    if not where or not name:
        raise InvalidArgumentError(
            f"{argument} {text!r}: expected 'package.module:Name' or 'path/to/file.py:Name'"
        )
    module = _import_file(where, argument=argument, text=text) if _is_path(where) else _import_module(
        where, argument=argument, text=text
    )
    obj: Any = module
    for part in name.split("."):
        if not hasattr(obj, part):
            public = sorted(k for k, v in vars(module).items() if not k.startswith("_") and callable(v)
                            and getattr(v, "__module__", module.__name__) == module.__name__)
            raise InvalidArgumentError(
                f"{argument} {text!r}: {getattr(module, '__file__', None) or module.__name__} has no {name!r}; "
                f"expected one of the names it defines: {', '.join(public) or '(none)'}"
            )
        obj = getattr(obj, part)
    return obj


def _is_path(where: str) -> bool:
    return where.endswith(".py") or "/" in where or "\\" in where


def _import_module(where: str, *, argument: str, text: str) -> Any:
    try:
        found = importlib.util.find_spec(where)
    except (ImportError, ValueError) as exc:
        found, why = None, str(exc)
    else:
        why = f"no module named {where!r}"
    if found is None:
        raise InvalidArgumentError(
            f"{argument} {text!r}: cannot import module {where!r} ({why}); expected an importable "
            "'package.module:Name', or a file 'path/to/file.py:Name'"
        )
    return _exec(importlib.import_module, where, argument=argument, text=text, source=where)


def _import_file(where: str, *, argument: str, text: str) -> Any:
    path = Path(where).expanduser().resolve()
    if path.suffix != ".py" or not path.is_file():
        raise InvalidArgumentError(
            f"{argument} {text!r}: {where!r} is not a Python file; expected 'path/to/file.py:Name' "
            f"(got {'a folder' if path.is_dir() else 'no such file' if not path.exists() else 'a file without .py'})"
        )
    name = path.stem
    found = sys.modules.get(name)
    if found is not None and _origin(found) == path:
        return found
    spec = None if not name.isidentifier() else _find_spec(name)
    if found is None and name.isidentifier() and (spec is None or _spec_origin(spec) == path):
        if str(path.parent) not in sys.path:
            sys.path.append(str(path.parent))
        return _exec(importlib.import_module, name, argument=argument, text=text, source=path)
    # the stem is another module's name: load this file under a name of its own
    unique = f"_replify_user_{name if name.isidentifier() else 'module'}_{hashlib.sha256(str(path).encode()).hexdigest()[:8]}"
    if unique in sys.modules:
        return sys.modules[unique]

    def load(module_name: str) -> Any:
        spec = importlib.util.spec_from_file_location(module_name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = module
        try:
            spec.loader.exec_module(module)
        except BaseException:
            del sys.modules[module_name]
            raise
        return module

    module = _exec(load, unique, argument=argument, text=text, source=path)
    _pickle_by_value(module)
    return module


def _pickle_by_value(module: Any) -> None:
    """A module loaded under a name of its own cannot be imported by worker processes: ask the
    pickler joblib and Dask use (cloudpickle, an optional dependency) to ship its objects by value."""
    for name in ("joblib.externals.cloudpickle", "cloudpickle"):
        try:
            pickler = importlib.import_module(name)
        except ImportError:
            continue
        register = getattr(pickler, "register_pickle_by_value", None)
        if callable(register):
            register(module)


def _exec(load: Callable[[str], Any], name: str, *, argument: str, text: str, source: Any) -> Any:
    """Import a user's file, which must never end replify or speak as replify: the file sees
    ``sys.argv`` as ``[its own path]`` while it runs (a command line parsed at import reads no
    argument of replify's, and its usage names the file); what it writes to stderr is kept and
    passed on; ``sys.exit`` (argparse exits so) becomes an error naming the file and its status,
    and a ``KeyboardInterrupt`` stays an interrupt but names the file it came from."""
    argv, captured = sys.argv, io.StringIO()
    sys.argv = [str(source)]
    try:
        with contextlib.redirect_stderr(captured):
            return load(name)
    except SystemExit as exc:
        said = captured.getvalue().strip()
        raise InvalidArgumentError(
            f"{argument} {text!r}: importing {str(source)!r} called sys.exit({exc.code!r})"
            + (f" after writing {said[-300:]!r}" if said else "")
            + "; expected a module that defines its learner without running a program (argparse and sys.exit "
            "belong under `if __name__ == \"__main__\":`)"
        ) from None
    except KeyboardInterrupt as exc:
        raise KeyboardInterrupt(f"importing {str(source)!r} (for {argument} {text!r}) raised KeyboardInterrupt") from exc
    except Exception as exc:  # the user's module failed as it ran: say so, with its own words
        raise InvalidArgumentError(
            f"{argument} {text!r}: importing {str(source)!r} raised {type(exc).__name__}: {exc}"
        ) from exc
    finally:
        sys.argv = argv
        said = captured.getvalue()
        if said and sys.exc_info()[0] is None:  # the file's own messages, passed on when its import succeeded
            sys.stderr.write(said)


def _find_spec(name: str) -> Any:
    try:
        return importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None


def _spec_origin(spec: Any) -> Path | None:
    origin = getattr(spec, "origin", None)
    return Path(origin).resolve() if origin else None


def _origin(module: Any) -> Path | None:
    file = getattr(module, "__file__", None)
    return Path(file).resolve() if file else None
