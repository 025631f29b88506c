"""What a callable learner *is* (:func:`code_of`), so that a sweep's results row is reused only for
the code that wrote it: its qualified name and a digest of its source file, else its source text,
else its compiled code (a script given on standard input, code run by exec)."""

from __future__ import annotations

import contextlib
import functools
import hashlib
import inspect
import os
import re
import types
from typing import Any, Callable

from replify.sources import label_of
from replify.wrapper import ReplicableFactory



def code_of(learner: Callable[..., Any]) -> str:
    """What a callable learner *is*, so that a results row is reused only for the code that wrote
    it: its qualified name and a sha256 digest of its code — the source file it is defined in (a
    change anywhere in that file counts), else its source text, else its compiled code — and of the
    arguments a ``functools.partial`` or the decorator form fixes. Two classes that share a
    qualified name (``__main__.Learner``, or ``mylearn.py:MyHedge`` from two folders) have the same
    code only when their files are the same; a class whose functions were not compiled from its
    module's file (code a script runs by exec is ``__main__``'s, and names the script's file) is
    known by its compiled code too."""
    inner, fixed = learner, []
    while True:
        if isinstance(inner, functools.partial):
            fixed.append(repr(sorted(inner.keywords.items())) + repr(inner.args))
            inner = inner.func
        elif isinstance(inner, ReplicableFactory):
            fixed.append(repr(sorted(inner.options.items())))
            inner = inner.__wrapped__
        else:
            break
    digest = hashlib.sha256()
    for part in fixed:
        digest.update(part.encode())
    digest.update(_code_bytes(inner))
    with contextlib.suppress(TypeError, OSError):  # which of the file's definitions (two lambdas share a file)
        digest.update(inspect.getsource(inner).encode())
    code = getattr(inner, "__code__", None)
    line = f", line {code.co_firstlineno}" if code is not None else ""
    module = getattr(inner, "__module__", None) or type(inner).__module__
    return f"{module}.{label_of(learner)}{line} sha256:{digest.hexdigest()[:16]}"


def _code_bytes(obj: Any) -> bytes:
    target = obj if inspect.isclass(obj) or inspect.isroutine(obj) else type(obj)
    try:
        source = inspect.getsourcefile(target)
        if source and os.path.isfile(source):
            if not inspect.isclass(target) or os.path.realpath(source) in (own := _own_files(target)):
                return _read(source)
            # A class's file is its module's: code run by exec in a script's ``__main__`` (a runner that
            # execs the files it is given) names the runner's file, the same for every script it runs.
            # Where its functions were compiled from (the files that still exist), and its compiled code.
            return b"|".join([_read(source)] + [_read(f) for f in sorted(own) if os.path.isfile(f)]
                             + [_compiled(obj, set())])
    except (TypeError, OSError):
        pass
    try:
        return inspect.getsource(obj).encode()
    except (TypeError, OSError):
        pass
    # No source to read (a script given on standard input or with -c, code run by exec): the compiled
    # code itself. Its pickle would not do: a class of ``__main__`` pickles by name, and two scripts'
    # ``__main__.Learner`` would be one learner.
    return _compiled(obj, set())


def _read(path: str) -> bytes:
    with open(path, "rb") as fh:
        return fh.read()


def _own_files(cls: type) -> set[str]:
    """The files the functions of a class's own body were compiled from, decorated ones unwrapped
    (real paths; a name such as ``<string>`` for code compiled from a string)."""
    files = set()
    for value in vars(cls).values():
        for f in (value.fget, value.fset, value.fdel) if isinstance(value, property) else (value,):
            f = getattr(f, "__func__", f)
            code = getattr(inspect.unwrap(f) if callable(f) else f, "__code__", None)
            if isinstance(code, types.CodeType):
                files.add(os.path.realpath(code.co_filename))
    return files


#: What a repr of an object without one holds that changes from run to run.
_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


def _repr(value: Any) -> bytes:
    """A value's repr, without what changes from run to run: addresses, and a set's order (string
    hashes are salted per process)."""
    if isinstance(value, (set, frozenset)):
        value = sorted(repr(v) for v in value)
    return _ADDRESS.sub("", repr(value)).encode()


def _compiled(obj: Any, seen: set[int]) -> bytes:
    """What ``obj`` computes, from its compiled code: a function's bytecode, constants, names,
    defaults, closure, the simple module constants it reads and the functions and classes defined
    beside it that it names; a class's own attributes and
    methods, and those of its bases defined beside it; an instance's class and attributes."""
    if id(obj) in seen:
        return b"<seen>"
    seen.add(id(obj))
    if isinstance(obj, types.CodeType):
        consts = b"|".join(_compiled(c, seen) if isinstance(c, types.CodeType) else _repr(c) for c in obj.co_consts)
        return b"code:" + obj.co_code + repr((obj.co_names, obj.co_varnames)).encode() + consts
    if isinstance(obj, (staticmethod, classmethod)):
        return _compiled(obj.__func__, seen)
    if isinstance(obj, property):
        return b"|".join(_compiled(f, seen) for f in (obj.fget, obj.fset, obj.fdel) if f is not None)
    if inspect.ismethod(obj):
        return _compiled(obj.__func__, seen)
    if inspect.isfunction(obj):
        names = set(obj.__code__.co_names)
        for const in obj.__code__.co_consts:  # the names nested functions and comprehensions read
            if isinstance(const, types.CodeType):
                names |= set(const.co_names)
        constants = sorted((k, repr(v)) for k, v in obj.__globals__.items()
                           if k in names and isinstance(v, (bool, int, float, complex, str, bytes, tuple, type(None))))
        # the functions and classes it names that are defined beside it (a script's helpers)
        beside = [k.encode() + b"=" + _compiled(v, seen) for k, v in sorted(obj.__globals__.items()) if k in names
                  and (inspect.isfunction(v) or inspect.isclass(v)) and getattr(v, "__module__", None) == obj.__module__]
        cells = beside + [_compiled(c.cell_contents, seen) if callable(c.cell_contents) else _repr(c.cell_contents)
                          for c in (obj.__closure__ or ())]
        return (b"function:" + _compiled(obj.__code__, seen) + b"|".join(cells)
                + _ADDRESS.sub("", repr((obj.__defaults__, obj.__kwdefaults__, constants))).encode())
    if inspect.isclass(obj):
        parts = [f"class:{obj.__module__}.{obj.__qualname__}".encode()]
        for base in obj.__mro__[1:]:
            parts.append(f"base:{base.__module__}.{base.__qualname__}".encode())
            if base.__module__ == obj.__module__:
                parts.append(_compiled(base, seen))
        for name, value in sorted(vars(obj).items()):
            if name in ("__dict__", "__weakref__", "__module__"):
                continue
            parts.append(name.encode() + b"=" + (_compiled(value, seen) if callable(value) or isinstance(
                value, (staticmethod, classmethod, property)) else _repr(value)))
        return b"|".join(parts)
    body = getattr(obj, "__dict__", None)
    return (_compiled(type(obj), seen) + b"|instance:"
            + _ADDRESS.sub("", repr(sorted((body or {}).items(), key=lambda kv: kv[0]))).encode())
