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
    code only when their files are the same."""
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
    try:
        source = inspect.getsourcefile(obj if inspect.isclass(obj) or inspect.isroutine(obj) else type(obj))
        if source and os.path.isfile(source):
            with open(source, "rb") as fh:
                return fh.read()
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


#: What a repr of an object without one holds that changes from run to run.
_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


def _compiled(obj: Any, seen: set[int]) -> bytes:
    """What ``obj`` computes, from its compiled code: a function's bytecode, constants, names,
    defaults, closure and the simple module constants it reads; a class's own attributes and
    methods, and those of its bases defined beside it; an instance's class and attributes."""
    if id(obj) in seen:
        return b"<seen>"
    seen.add(id(obj))
    if isinstance(obj, types.CodeType):
        consts = b"|".join(_compiled(c, seen) if isinstance(c, types.CodeType) else _ADDRESS.sub("", repr(c)).encode()
                           for c in obj.co_consts)
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
        cells = [_compiled(c.cell_contents, seen) if callable(c.cell_contents) else
                 _ADDRESS.sub("", repr(c.cell_contents)).encode() for c in (obj.__closure__ or ())]
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
                value, (staticmethod, classmethod, property)) else _ADDRESS.sub("", repr(value)).encode()))
        return b"|".join(parts)
    body = getattr(obj, "__dict__", None)
    return (_compiled(type(obj), seen) + b"|instance:"
            + _ADDRESS.sub("", repr(sorted((body or {}).items(), key=lambda kv: kv[0]))).encode())
