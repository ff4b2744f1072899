"""Results as plain data: one ``.npz`` file of numpy arrays and a JSON tree, no pickle.

The file holds two arrays: ``__data__``, the bytes of every numeric array of the result one
after the other (each at a multiple of 64 bytes), and ``__tree__``, the JSON text of the tree,
which names each array by its dtype (``"<f8"``), shape and offset. Reading thousands of small
arrays (an ensemble of 40 runs) from one buffer takes a fraction of the time of as many
``.npy`` members.

:func:`dumps` writes a result (a chapter's frozen dataclass, a fitted :class:`hca.HCA`, frames,
arrays, tuples, dicts, ...) as numeric arrays and a JSON description of how they fit
together; :func:`load` reads it back with ``numpy.load(allow_pickle=False)`` and
:func:`json.loads` and nothing else. Objects are rebuilt only from classes of ``hca`` that
are dataclasses or scikit-learn estimators, by setting their fields (no ``__init__``,
``__reduce__`` or ``__setstate__`` runs); a file naming anything else is refused. A value
that cannot be written this way (a function, a figure, a categorical column) raises
:class:`NotPlainError`, and the caller keeps the result in memory only.

The round trip is exact: arrays keep their dtype and bits, frames their columns, index,
dtypes (numpy and pandas' nullable and string dtypes) and ``attrs``, tuples stay tuples
(``tests/test_plain.py`` checks every chapter's results).
"""

from __future__ import annotations

import dataclasses
import importlib
import io
import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator

__all__ = ["NotPlainError", "load", "dumps", "loads"]

_TREE = "__tree__"
_DATA = "__data__"
_ALIGN = 64  # each array's offset in __data__: a multiple of this
# pandas dtypes rebuilt from their name (the values are stored as a list)
_EXTENSION = ("Int8", "Int16", "Int32", "Int64", "Float32", "Float64", "boolean", "string", "str")


class NotPlainError(TypeError):
    """A value that cannot be stored as plain data."""


# =========================================================================== writing
class _Writer:
    def __init__(self) -> None:
        self.arrays: dict[str, np.ndarray] = {}
        self.refs: dict[int, int] = {}  # id of a value written -> its number
        self.keep: list[Any] = []  # the values numbered (alive, so that no id is reused)
        self.open: set[int] = set()  # values being written (a cycle is refused)

    def array(self, a: np.ndarray) -> str:
        if a.dtype.hasobject or a.dtype.kind == "V":
            raise NotPlainError(f"array of dtype {a.dtype}")
        key = f"a{len(self.arrays)}"
        self.arrays[key] = np.asarray(a, order="C")
        return key

    def value(self, obj: Any) -> Any:
        """``obj`` as a JSON node; a value met again (the same object) as a reference."""
        if obj is None or isinstance(obj, (bool, str, int, float, np.generic, list)):
            return self.node(obj)
        if id(obj) in self.refs:
            return {"$": "ref", "@": self.refs[id(obj)]}
        if id(obj) in self.open:
            raise NotPlainError(f"{type(obj).__name__} that contains itself")
        self.open.add(id(obj))
        node = self.node(obj)
        self.open.discard(id(obj))
        self.refs[id(obj)] = node["@"] = len(self.keep)
        self.keep.append(obj)
        return node

    def node(self, obj: Any) -> Any:  # noqa: C901 - one branch per kind of value
        if obj is None or type(obj) in (bool, str, int):  # a subclass (a str Enum) is refused
            return obj
        if type(obj) is float:
            return obj if math.isfinite(obj) else {"$": "float", "v": repr(obj)}
        if isinstance(obj, np.generic):
            return {"$": "scalar", "a": self.array(np.asarray(obj))}
        if isinstance(obj, np.ndarray):
            if obj.dtype == object:
                return {
                    "$": "objects",
                    "shape": list(obj.shape),
                    "v": [self.value(x) for x in obj.flat],
                }
            return {"$": "array", "a": self.array(obj)}
        if isinstance(obj, pd.DataFrame):
            return {
                "$": "frame",
                "columns": self.index(obj.columns),
                "index": self.index(obj.index),
                "data": [self.column(obj.iloc[:, i]) for i in range(obj.shape[1])],
                "attrs": self.value(dict(obj.attrs)),
            }
        if isinstance(obj, pd.Series):
            return {
                "$": "series",
                "data": self.column(obj),
                "index": self.index(obj.index),
                "name": self.value(obj.name),
                "attrs": self.value(dict(obj.attrs)),
            }
        if isinstance(obj, pd.Index):
            return self.index(obj)
        if type(obj) is tuple:
            return {"$": "tuple", "v": [self.value(x) for x in obj]}
        if type(obj) is list:
            return [self.value(x) for x in obj]
        if type(obj) is dict:
            return {
                "$": "dict",
                "k": [self.value(k) for k in obj],
                "v": [self.value(v) for v in obj.values()],
            }
        if type(obj) in (set, frozenset):
            return {"$": type(obj).__name__, "v": [self.value(x) for x in obj]}
        if type(obj) is range:
            return {"$": "range", "v": [obj.start, obj.stop, obj.step]}
        cls = type(obj)
        if _allowed(cls):
            if dataclasses.is_dataclass(obj) and not hasattr(obj, "__dict__"):
                state = {f.name: getattr(obj, f.name) for f in dataclasses.fields(obj)}
            else:
                state = dict(vars(obj))
            return {
                "$": "object",
                "cls": f"{cls.__module__}:{cls.__qualname__}",
                "k": list(state),
                "v": [self.value(v) for v in state.values()],
            }
        raise NotPlainError(f"{cls.__module__}.{cls.__qualname__} is not plain data")

    def column(self, s: pd.Series) -> dict[str, Any]:
        dtype = s.dtype
        is_object = isinstance(dtype, np.dtype) and dtype.kind == "O"
        if isinstance(dtype, np.dtype) and not is_object:
            return {"dtype": "numpy", "a": self.array(s.to_numpy())}
        name = str(dtype)
        if is_object:
            return {"dtype": "object", "v": [self.value(x) for x in s.to_numpy()]}
        if name not in _EXTENSION or pd.api.types.pandas_dtype(name) != dtype:
            raise NotPlainError(f"column {s.name!r} of dtype {name}")
        values = s.astype(object).to_numpy()
        return {"dtype": name, "v": [None if x is pd.NA else self.value(x) for x in values]}

    def index(self, idx: pd.Index) -> dict[str, Any]:
        if type(idx) is pd.RangeIndex:
            return {
                "$": "rangeindex",
                "v": [idx.start, idx.stop, idx.step],
                "name": self.value(idx.name),
            }
        if isinstance(idx, pd.MultiIndex):
            return {
                "$": "multiindex",
                "levels": [self.index(level) for level in idx.levels],
                "codes": [self.array(np.asarray(c)) for c in idx.codes],
                "names": [self.value(n) for n in idx.names],
            }
        if type(idx) is not pd.Index:
            raise NotPlainError(f"index of type {type(idx).__name__}")
        return {
            "$": "index",
            "data": self.column(pd.Series(idx, copy=False)),
            "name": self.value(idx.name),
        }


def _allowed(cls: type) -> bool:
    """Classes rebuilt from a file: ``hca``'s own dataclasses and estimators."""
    module = getattr(cls, "__module__", "") or ""
    if not (module == "hca" or module.startswith("hca.")):
        return False
    return dataclasses.is_dataclass(cls) or issubclass(cls, BaseEstimator)


def dumps(obj: Any) -> bytes:
    """``obj`` as the bytes of an ``.npz`` file (its arrays, and its tree as JSON text).

    Raises
    ------
    NotPlainError
        If some part of ``obj`` is not plain data.
    """
    w = _Writer()
    root = w.value(obj)
    chunks: list[bytes] = []
    layout: dict[str, list[Any]] = {}
    offset = 0
    for key, a in w.arrays.items():
        pad = -offset % _ALIGN
        chunks.append(bytes(pad))
        offset += pad
        layout[key] = [a.dtype.str, list(a.shape), offset]
        chunks.append(a.tobytes())
        offset += a.nbytes
    tree = json.dumps({"arrays": layout, "root": root}, allow_nan=False)
    buf = io.BytesIO()
    np.savez(
        buf,
        **{
            _DATA: np.frombuffer(b"".join(chunks), dtype=np.uint8),
            _TREE: np.frombuffer(tree.encode("utf-8"), dtype=np.uint8),
        },
    )
    return buf.getvalue()


# =========================================================================== reading
class _Reader:
    def __init__(self, data: np.ndarray, layout: Any) -> None:
        if not isinstance(layout, dict):
            raise ValueError("not a stored result: no array layout")
        self.data = data
        self.layout = layout
        self.refs: dict[int, Any] = {}

    def array(self, key: str) -> np.ndarray:
        spec = self.layout.get(key) if isinstance(key, str) else None
        if not (isinstance(spec, list) and len(spec) == 3 and isinstance(spec[0], str)):
            raise ValueError(f"no array {key!r} in the file")
        dtype_name, shape, offset = spec
        try:
            dtype = np.dtype(dtype_name)
        except TypeError:
            raise ValueError(f"array {key!r}: unknown dtype {dtype_name!r}") from None
        if dtype.hasobject or dtype.kind == "V":
            raise ValueError(f"array {key!r}: dtype {dtype} is not plain data")
        if not (
            isinstance(shape, list)
            and all(type(n) is int and n >= 0 for n in shape)
            and type(offset) is int
            and offset >= 0
        ):
            raise ValueError(f"array {key!r}: invalid shape or offset")
        count = math.prod(shape)
        if offset + count * dtype.itemsize > self.data.size:
            raise ValueError(f"array {key!r} runs past the end of the data")
        return np.frombuffer(self.data, dtype=dtype, count=count, offset=offset).reshape(shape)

    def value(self, node: Any) -> Any:
        if isinstance(node, dict) and node.get("$") == "ref":
            if node.get("@") not in self.refs:
                raise ValueError(f"reference to an unknown value: {node.get('@')!r}")
            return self.refs[node["@"]]
        out = self.node(node)
        if isinstance(node, dict) and "@" in node:
            self.refs[node["@"]] = out
        return out

    def node(self, node: Any) -> Any:  # noqa: C901 - one branch per kind of value
        if node is None or isinstance(node, (bool, int, float, str)):
            return node
        if isinstance(node, list):
            return [self.value(x) for x in node]
        if not isinstance(node, dict):
            raise ValueError(f"not a stored value: {type(node).__name__}")
        kind = node.get("$")
        if kind == "float":
            return float(node["v"])
        if kind == "scalar":
            return self.array(node["a"])[()]
        if kind == "array":
            return self.array(node["a"])
        if kind == "objects":
            out = np.empty(len(node["v"]), dtype=object)
            for i, x in enumerate(node["v"]):
                out[i] = self.value(x)
            return out.reshape(tuple(node["shape"]))
        if kind == "frame":
            columns = self.index(node["columns"])
            index = self.index(node["index"])
            rows = pd.RangeIndex(len(index))
            data = {i: self.column(c, rows) for i, c in enumerate(node["data"])}
            frame = pd.DataFrame(data, index=rows) if data else pd.DataFrame(index=rows)
            frame.index = index
            frame.columns = columns
            frame.attrs.update(self.value(node["attrs"]))
            return frame
        if kind == "series":
            index = self.index(node["index"])
            s = self.column(node["data"], index)
            s.name = self.value(node["name"])
            s.attrs.update(self.value(node["attrs"]))
            return s
        if kind in ("index", "rangeindex", "multiindex"):
            return self.index(node)
        if kind == "tuple":
            return tuple(self.value(x) for x in node["v"])
        if kind == "dict":
            return {self.value(k): self.value(v) for k, v in zip(node["k"], node["v"])}
        if kind == "set":
            return {self.value(x) for x in node["v"]}
        if kind == "frozenset":
            return frozenset(self.value(x) for x in node["v"])
        if kind == "range":
            return range(*node["v"])
        if kind == "object":
            return self.instance(node)
        raise ValueError(f"unknown stored kind {kind!r}")

    def instance(self, node: dict[str, Any]) -> Any:
        cls = _class(node["cls"])
        obj = cls.__new__(cls)  # object.__new__ for dataclasses and estimators: no user code
        for name, v in zip(node["k"], node["v"]):
            if not isinstance(name, str):
                raise ValueError(f"{node['cls']}: field name {name!r}")
            object.__setattr__(obj, name, self.value(v))
        return obj

    def column(self, node: dict[str, Any], index: pd.Index | None) -> pd.Series:
        dtype = node["dtype"]
        if dtype == "numpy":
            return pd.Series(self.array(node["a"]), index=index, copy=False)
        values = [self.value(x) for x in node["v"]]
        if dtype == "object":
            data = np.empty(len(values), dtype=object)
            for i, x in enumerate(values):  # item by item: tuples stay tuples
                data[i] = x
            return pd.Series(data, index=index, dtype=object, copy=False)
        if dtype not in _EXTENSION:
            raise ValueError(f"unknown column dtype {dtype!r}")
        target = pd.api.types.pandas_dtype(dtype)
        values = [target.na_value if x is None else x for x in values]  # type: ignore[union-attr]
        return pd.Series(pd.array(values, dtype=target), index=index, copy=False)

    def index(self, node: dict[str, Any]) -> pd.Index:
        kind = node.get("$")
        if kind == "rangeindex":
            return pd.RangeIndex(*node["v"], name=self.value(node["name"]))
        if kind == "multiindex":
            return pd.MultiIndex(
                levels=[self.index(level) for level in node["levels"]],
                codes=[self.array(c) for c in node["codes"]],
                names=[self.value(n) for n in node["names"]],
                verify_integrity=False,
            )
        if kind == "index":
            s = self.column(node["data"], None)
            return pd.Index(
                s.to_numpy() if s.dtype == object else s.array,
                dtype=s.dtype,
                name=self.value(node["name"]),
                tupleize_cols=False,
            )
        raise ValueError(f"not a stored index: {kind!r}")


def _class(name: Any) -> type:
    """The class ``module:qualname`` of ``hca`` named in a file, if it may be rebuilt."""
    if not isinstance(name, str) or name.count(":") != 1:
        raise ValueError(f"not a class name: {name!r}")
    module, qualname = name.split(":")
    if not (module == "hca" or module.startswith("hca.")):
        raise ValueError(f"refusing to rebuild {name}: not a class of hca")
    private = any(p.startswith("_") for p in module.split("."))  # hca.__main__
    dunder = any(p.startswith("__") for p in qualname.split("."))
    if private or dunder or not all(p.isidentifier() for p in (module + "." + qualname).split(".")):
        raise ValueError(f"refusing to rebuild {name}: a private or invalid name")
    obj: Any = importlib.import_module(module)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    if not isinstance(obj, type) or obj.__module__ != module or not _allowed(obj):
        raise ValueError(f"refusing to rebuild {name}: not a dataclass or estimator of hca")
    return obj


def loads(data: bytes) -> Any:
    """The value :func:`dumps` wrote (``numpy.load(allow_pickle=False)``, then JSON).

    Raises
    ------
    ValueError
        If ``data`` is not such a file (a pickle, a truncated file, an unknown class).
    """
    with np.load(io.BytesIO(data), allow_pickle=False) as arrays:
        if _TREE not in arrays.files or _DATA not in arrays.files:
            raise ValueError("not a stored result: no tree or no data")
        raw, buffer = arrays[_TREE], arrays[_DATA]
    if raw.dtype != np.uint8 or raw.ndim != 1 or buffer.dtype != np.uint8 or buffer.ndim != 1:
        raise ValueError("not a stored result: the tree or the data is not bytes")
    tree = json.loads(raw.tobytes().decode("utf-8"))
    if not isinstance(tree, dict) or set(tree) != {"arrays", "root"}:
        raise ValueError("not a stored result: the tree has no root")
    return _Reader(buffer, tree["arrays"]).value(tree["root"])


def load(path: str | Path) -> Any:
    """:func:`loads` of the file ``path``."""
    return loads(Path(path).read_bytes())
