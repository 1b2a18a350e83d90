"""A canonical, JSON-able description of a study's settings, callables included.

:func:`canonical` describes a value so that two values with equal
descriptions compute the same thing, in this process or another one:

* numbers, strings, lists, dicts and sets map to themselves (sorted where
  Python's order depends on hashing; non-finite floats to ``"nan"``,
  ``"inf"``, ``"-inf"``), arrays and pandas objects to their values or a
  digest of them, dataclasses (kernels, estimators, scenarios) to their class
  and fields, classes and modules to their names;
* a Python function to its qualified name, a digest of its code object
  (bytecode, names and constants, nested code objects included; tagged with
  the interpreter, whose bytecode it is), its constants, defaults, the values
  of its closure variables and of the globals it reads (functions of its own
  module described in the same way, recursively; modules, classes and
  functions of other modules by name);
* a :func:`functools.partial` to its function, arguments and keywords; a
  bound method to its function and instance; a builtin to its name and, when
  it is bound to an object, that object;
* anything else to its class and ``repr``.

A value whose ``repr`` holds a memory address (``<Foo object at 0x...>``)
has no description that survives the process. It is refused with a
:class:`~kmtests.power.CheckpointError` naming where it was found, unless the
caller *vouches* for it (``vouched=True``, which ``power_curve`` does when it
is given a ``checkpoint_label``): it is then recorded as
``{"unidentified": <its class>}``.
"""

from __future__ import annotations

import dataclasses
import dis
import functools
import hashlib
import json
import math
import numbers
import sys
import types
from typing import Any, Iterator

import numpy as np

__all__ = ["CheckpointError", "canonical"]

_SMALL_ARRAY = 16
_SHOWN_TEXT = 60
_BUILTIN_TYPES = (types.BuiltinFunctionType, types.MethodWrapperType,
                  types.MethodDescriptorType, types.WrapperDescriptorType,
                  types.ClassMethodDescriptorType)
#: compiled functions (identified by their module, like builtins)
_COMPILED_FUNCTIONS = ("cython_function_or_method", "fused_cython_function")


class CheckpointError(ValueError):
    """A power-study checkpoint file cannot be used (other settings, corrupt, in use).

    Raised by :func:`kmtests.power.power_curve`; the message names the file
    and what is wrong with it (the settings that differ, the corrupt line, the
    process holding the lock).
    """

    __module__ = "kmtests.power"  # its public home


def _qualname(obj: Any) -> str:
    return f"{getattr(obj, '__module__', '?')}.{getattr(obj, '__qualname__', type(obj).__name__)}"


def canonical(value: Any, where: str = "value", *, vouched: bool = False) -> Any:
    """A JSON-able description of `value` that is equal for equal settings.

    Parameters
    ----------
    value : object
        The setting to describe.
    where : str
        Where `value` was given (``"test_kwargs"``, ``"tests['t']"``), for
        the error message.
    vouched : bool
        Record what cannot be identified as ``{"unidentified": <class>}``
        instead of refusing it.

    Returns
    -------
    object
        Made of None, bools, numbers, strings, lists and dicts.

    Raises
    ------
    CheckpointError
        When `value` holds something whose ``repr`` has a memory address and
        `vouched` is false.

    Examples
    --------
    >>> from kmtests.studies._checkpoint import canonical
    >>> canonical({"bandwidth": 1.5, "kernel": "gaussian", "lam": float("inf")})
    {'bandwidth': 1.5, 'kernel': 'gaussian', 'lam': 'inf'}
    >>> sorted(canonical(lambda x: x + 1.0))
    ['code', 'constants', 'function']
    """
    return _Describer(vouched).value(value, where, ())


class _Describer:
    """One description: the functions being described (cycles) and `vouched`."""

    def __init__(self, vouched: bool) -> None:
        self.vouched = vouched
        self._active: set[int] = set()

    # -- values ------------------------------------------------------------------------
    def value(self, v: Any, where: str, inside: tuple[str, ...]) -> Any:
        if v is None or isinstance(v, (bool, str)):
            return v
        if isinstance(v, (np.generic, numbers.Real)) and not isinstance(v, np.ndarray):
            return self._number(v, where, inside)
        if isinstance(v, np.ndarray):
            return self._array(v, where, inside)
        if isinstance(v, (list, tuple, dict, set, frozenset)):
            return self._container(v, where, inside)
        if dataclasses.is_dataclass(v) and not isinstance(v, type):
            fields = {f.name: getattr(v, f.name) for f in dataclasses.fields(v) if f.compare}
            return {"class": _qualname(type(v)), "fields": self._container(fields, where, inside)}
        if isinstance(v, type):
            return {"class": _qualname(v)}
        if isinstance(v, types.ModuleType):
            return {"module": v.__name__}
        described = self._callable(v, where, inside)
        if described is not None:
            return described
        return self._object(v, where, inside)

    def _number(self, v: Any, where: str, inside: tuple[str, ...]) -> Any:
        if isinstance(v, np.generic):
            return self.value(v.item(), where, inside)
        if isinstance(v, numbers.Integral):
            return int(v)
        f = float(v)
        return f if math.isfinite(f) else repr(f)

    def _array(self, v: np.ndarray, where: str, inside: tuple[str, ...]) -> Any:
        if v.dtype.kind == "O":  # the bytes of an object array are pointers
            items = self.value(v.tolist(), where, inside)
            return {"array_shape": list(v.shape), "dtype": "object",
                    "sha256": hashlib.sha256(_show(items).encode()).hexdigest()}
        if v.size <= _SMALL_ARRAY and v.dtype.kind in "biuf":
            return {"array": self.value(v.tolist(), where, inside), "dtype": str(v.dtype)}
        data = np.ascontiguousarray(v)
        return {"array_shape": list(v.shape), "dtype": str(v.dtype),
                "sha256": hashlib.sha256(data.tobytes()).hexdigest()}

    def _container(self, v: Any, where: str, inside: tuple[str, ...]) -> Any:
        if isinstance(v, dict):
            return {str(k): self.value(x, *_index(where, inside, k))
                    for k, x in sorted(v.items(), key=lambda kv: str(kv[0]))}
        if isinstance(v, (set, frozenset)):  # their order depends on string hashing
            return {"set": sorted((self.value(x, where, inside) for x in v), key=_show)}
        return [self.value(x, *_index(where, inside, i)) for i, x in enumerate(v)]

    def _object(self, v: Any, where: str, inside: tuple[str, ...]) -> Any:
        pandas = sys.modules.get("pandas")
        if pandas is not None and isinstance(v, (pandas.DataFrame, pandas.Series, pandas.Index)):
            return self._pandas(v, pandas, where, inside)
        text = repr(v)
        if " at 0x" in text:
            return self._unidentified(v, text, where, inside)
        return {"class": _qualname(type(v)), "repr": text}

    def _pandas(self, v: Any, pandas: Any, where: str, inside: tuple[str, ...]) -> Any:
        try:
            digest = pandas.util.hash_pandas_object(
                v, index=not isinstance(v, pandas.Index)).to_numpy()
        except TypeError:  # unhashable cells
            return self._unidentified(v, f"a {type(v).__name__} of unhashable values", where,
                                      inside)
        labels = repr([list(map(str, getattr(v, "columns", []))), str(getattr(v, "dtypes", ""))])
        return {"class": _qualname(type(v)), "shape": list(v.shape),
                "sha256": hashlib.sha256(digest.tobytes() + labels.encode()).hexdigest()}

    def _unidentified(self, v: Any, text: str, where: str, inside: tuple[str, ...]) -> Any:
        if self.vouched:
            return {"unidentified": _qualname(type(v))}
        what = f"`{where}`" + (": " + ", its ".join(inside) if inside else "")
        raise CheckpointError(
            f"{what} = {text} has no stable description (its repr changes from run to run), so "
            "a checkpoint cannot tell whether its rows were computed with the same one; "
            "describe it by a dataclass, a number or a string, pass `checkpoint_label=...` (a "
            "version label of your own, to change whenever it changes), or run without "
            "`checkpoint`.")

    # -- callables -------------------------------------------------------------------------
    def _callable(self, v: Any, where: str, inside: tuple[str, ...]) -> Any:
        if isinstance(v, functools.partial):
            return {"partial": self.value(v.func, where, (*inside, "the function")),
                    "args": self.value(list(v.args), where, (*inside, "the arguments")),
                    "keywords": self.value(dict(v.keywords), where, (*inside, "the keywords"))}
        if isinstance(v, types.MethodType):
            return {"method": self.value(v.__func__, where, inside),
                    "self": self.value(v.__self__, where, (*inside, "the instance"))}
        if isinstance(v, types.FunctionType):
            return self._function(v, where, inside)
        if isinstance(v, _BUILTIN_TYPES) or type(v).__name__ in _COMPILED_FUNCTIONS:
            return self._builtin(v, where, inside)
        return None

    def _builtin(self, v: Any, where: str, inside: tuple[str, ...]) -> Any:
        owner = getattr(v, "__self__", None)
        bound = not (owner is None or isinstance(owner, (types.ModuleType, type)))
        if bound:
            name = f"{_qualname(type(owner))}.{v.__name__}"
        elif hasattr(v, "__objclass__"):
            name = f"{_qualname(v.__objclass__)}.{v.__name__}"
        else:
            name = _qualname(v)
        out: dict[str, Any] = {"builtin": name}
        if bound:
            out["self"] = self.value(owner, where, (*inside, "the instance"))
        return out

    def _function(self, fn: types.FunctionType, where: str, inside: tuple[str, ...]) -> Any:
        name = _qualname(fn)
        if id(fn) in self._active:
            return {"function": name, "recursive": True}
        self._active.add(id(fn))
        try:
            code = fn.__code__
            out: dict[str, Any] = {"function": name,
                                   "code": f"{sys.implementation.cache_tag}:{_code_digest(code)}",
                                   "constants": [_shown(c) for c in code.co_consts]}
            if fn.__defaults__:
                out["defaults"] = self.value(list(fn.__defaults__), where,
                                             (*inside, "the defaults"))
            if fn.__kwdefaults__:
                out["kwdefaults"] = self.value(fn.__kwdefaults__, where,
                                               (*inside, "the defaults"))
            if fn.__closure__:
                out["closure"] = {
                    var: self.value(_cell(cell), where,
                                    (*inside, f"the closure variable `{var}`"))
                    for var, cell in zip(code.co_freevars, fn.__closure__)}
            globs = self._globals(fn, where, inside)
            if globs:
                out["globals"] = globs
            return out
        finally:
            self._active.discard(id(fn))

    def _globals(self, fn: types.FunctionType, where: str, inside: tuple[str, ...]
                 ) -> dict[str, Any]:
        """The globals `fn` reads (builtins left out)."""
        out = {}
        for var in sorted(set(_global_names(fn.__code__))):
            if var not in fn.__globals__:
                continue
            v = fn.__globals__[var]
            if isinstance(v, types.FunctionType) and v.__module__ != fn.__module__:
                out[var] = {"function": _qualname(v)}  # its module identifies it
            else:
                out[var] = self.value(v, where, (*inside, f"the global `{var}`"))
        return out


def _index(where: str, inside: tuple[str, ...], key: Any) -> tuple[str, tuple[str, ...]]:
    if inside:
        return where, (*inside[:-1], f"{inside[-1]}[{key!r}]")
    return f"{where}[{key!r}]", inside


def _cell(cell: Any) -> Any:
    try:
        return cell.cell_contents
    except ValueError:  # a variable not yet assigned
        return {"empty cell": True}


def _show(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


# -- code objects ------------------------------------------------------------------------------
def _code_digest(code: types.CodeType) -> str:
    """SHA-256 (64 bits shown) of what a code object computes: not its file or lines."""
    h = hashlib.sha256()
    parts = [code.co_code.hex(), code.co_argcount, code.co_posonlyargcount,
             code.co_kwonlyargcount, code.co_flags, code.co_names, code.co_varnames,
             code.co_freevars, code.co_cellvars]
    for part in [*map(repr, parts), *map(_const_text, code.co_consts)]:
        h.update(part.encode("utf-8", "backslashreplace") + b"\0")
    return h.hexdigest()[:16]


def _const_text(c: Any) -> str:
    if isinstance(c, types.CodeType):
        return "code:" + _code_digest(c)
    if isinstance(c, tuple):
        return "tuple(" + ",".join(_const_text(x) for x in c) + ")"
    if isinstance(c, frozenset):  # its order depends on string hashing
        return "frozenset(" + ",".join(sorted(_const_text(x) for x in c)) + ")"
    return f"{type(c).__name__}:{c!r}"


def _shown(c: Any) -> Any:
    """A constant of a code object as shown in the description (the digest has them all)."""
    if isinstance(c, types.CodeType):
        return f"<code {c.co_name}>"
    if isinstance(c, tuple):
        return [_shown(x) for x in c]
    if isinstance(c, frozenset):
        return sorted((_shown(x) for x in c), key=_show)
    if isinstance(c, str):
        return c if len(c) <= _SHOWN_TEXT else c[:_SHOWN_TEXT - 3] + "..."
    if isinstance(c, float) and not math.isfinite(c):
        return repr(c)
    if c is None or isinstance(c, (bool, int, float)):
        return c
    return repr(c)


def _global_names(code: types.CodeType) -> Iterator[str]:
    """Names of the globals read by `code` and its nested code objects."""
    for ins in dis.get_instructions(code):
        if ins.opname in ("LOAD_GLOBAL", "LOAD_NAME"):
            yield str(ins.argval)
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            yield from _global_names(c)
