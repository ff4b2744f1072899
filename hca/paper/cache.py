"""Results computed once: read-only in the process, plain data on disk.

Each chapter's analysis is a pure function of the library's code, the pinned data, the setup
and the repetition settings. Two stores keep what the book computes from being computed twice,
and neither can run code when read nor be changed by a reader:

* :func:`cached` -- in one Python process, ``compute(*args)`` is computed once per
  ``(fingerprint, name, args)`` (the :func:`fingerprint` of the library's sources is part of the
  key, so a library edited in a long session computes anew). Every caller gets its own
  read-only view of the result (:func:`read_only`): numpy arrays are views with
  ``writeable=False``, frames and series are copies (copy-on-write, so no data is copied until
  someone writes), containers and other objects are fresh copies. A DataFrame sorted in place
  by one reader is not what the next reader sees.
* across processes (the notebooks of a book build and of ``make test``, the scorecard page
  and the intro), every result of :func:`cached` that is plain data -- numbers, arrays,
  frames, tuples, dicts, ``hca``'s own dataclasses and fitted estimators -- is also written
  under :func:`cache_dir` as one ``.npz`` file (:mod:`hca.paper.plain`: numpy arrays and a
  JSON tree, no pickle), keyed by the fingerprint, the name and the arguments; the next
  process reads it instead of computing it (``make book`` after ``make test`` computes no
  chapter again). :func:`stored_json` does the same for plain JSON (the scorecard rows a
  chapter computes). Reading a file runs ``numpy.load(allow_pickle=False)`` and
  :func:`json.loads` and rebuilds only ``hca``'s dataclasses and estimators, by setting
  their fields; a file that is not valid (truncated, foreign, a planted pickle, a class
  outside ``hca``) is ignored with a warning and the result recomputed. A lock file makes a
  second process wait for the first instead of computing the same result twice. A result
  that is not plain data is kept in memory only.

The disk store lives in ``_build/.hca_results`` of a checkout (removed with ``_build``);
``HCA_RESULTS_CACHE=off`` turns it off and ``HCA_RESULTS_CACHE=/some/dir`` moves it. An
installed package (not a checkout) keeps results in memory only unless ``HCA_RESULTS_CACHE``
names a folder.
"""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import json
import os
import platform
import tempfile
import types
import warnings
from collections.abc import Callable, Hashable
from functools import lru_cache
from importlib import metadata
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import pandas as pd
from filelock import FileLock

from hca.paper import plain

__all__ = [
    "cached",
    "cached_item",
    "stored_json",
    "json_plain",
    "read_only",
    "cache_dir",
    "fingerprint",
    "clear_memory",
]

T = TypeVar("T")

# (fingerprint, name, args) -> result; the results are handed out through read_only()
_MEMORY: dict[tuple[str, str, tuple[Hashable, ...]], Any] = {}
# the sources' (name, size, mtime) -> their fingerprint: one entry, the current sources
_SOURCES: dict[tuple[tuple[str, int, int], ...], str] = {}
# values handed out as they are (immutable, or code)
_AS_IS = (
    type(None),
    bool,
    int,
    float,
    complex,
    str,
    bytes,
    np.generic,
    type,
    types.FunctionType,
    types.BuiltinFunctionType,
    types.MethodType,
    types.ModuleType,
    range,
)
# the exact types of the commonest immutable leaves (checked without a call)
_LEAVES = frozenset({type(None), bool, int, float, str, np.float64, np.int64, np.bool_})
_CONTAINERS = frozenset({np.ndarray, tuple, list, dict})  # exact types never handed out as is
_PACKAGE = Path(__file__).resolve().parents[1]
_VERSIONED = (
    "numpy",
    "scipy",
    "scikit-learn",
    "pandas",
    "python-picard",
    "joblib",
    "threadpoolctl",
)
# Variables that change which floating-point code paths run (results may differ in the last
# bits, and a FastICA run may then end in another local optimum).
_ENVIRONMENT = (
    "OPENBLAS_CORETYPE",
    "OPENBLAS_L2_SIZE",
    "NPY_DISABLE_CPU_FEATURES",
    "NPY_ENABLE_CPU_FEATURES",
)


def _blas_kernels() -> str:
    """The BLAS libraries loaded and the kernels they chose for this CPU (threadpoolctl's
    ``architecture``, e.g. ``SkylakeX`` or ``Haswell``), and the machine's architecture."""
    from threadpoolctl import threadpool_info  # only when a key is first needed

    libs = sorted(
        f"{i.get('internal_api')}:{i.get('version')}:{i.get('architecture')}"
        for i in threadpool_info()
        if i.get("user_api") == "blas"
    )
    return f"{platform.machine()}|{';'.join(libs)}"


@lru_cache(maxsize=1)
def _environment() -> str:
    """Library versions, Python, the numerical environment variables and the BLAS kernels."""
    parts = []
    for dist in _VERSIONED:
        try:
            parts.append(f"{dist}={metadata.version(dist)}")
        except metadata.PackageNotFoundError:
            parts.append(f"{dist}=none")
    parts.append(platform.python_version())
    parts += [f"{var}={os.environ.get(var, '')}" for var in _ENVIRONMENT]
    parts.append(_blas_kernels())
    return "|".join(parts)


def fingerprint() -> str:
    """SHA-256 of the library's sources and tables (as they are now on disk), library
    versions, the numerical environment variables and the BLAS kernels in use (the results are
    read from ensembles so that verdicts do not depend on them, but single runs' numbers can).

    The sources are hashed again whenever a file's size or modification time changed (or a
    file came or went): an edited library gets a new fingerprint in the same process.
    """
    state = _sources()
    if state not in _SOURCES:
        h = hashlib.sha256()
        for name, _, _ in state:
            h.update(name.encode())
            h.update((_PACKAGE / name).read_bytes())
        h.update(_environment().encode())
        _SOURCES.clear()
        _SOURCES[state] = h.hexdigest()
    return _SOURCES[state]


def _sources() -> tuple[tuple[str, int, int], ...]:
    """The library's source files and tables (path relative to the package, size,
    modification time), sorted; ``__pycache__`` is not entered."""
    root = str(_PACKAGE)
    out = []
    for folder, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        rel = os.path.relpath(folder, root)
        for n in names:
            if n.endswith((".py", ".csv", ".json")):
                st = os.stat(os.path.join(folder, n))
                name = n if rel == "." else f"{rel}/{n}"
                out.append((name, st.st_size, st.st_mtime_ns))
    return tuple(sorted(out))


def cache_dir() -> Path | None:
    """Where plain-data results are stored on disk, or None (memory only); see the module
    docstring."""
    env = os.environ.get("HCA_RESULTS_CACHE")
    if env is not None:
        if env.strip().lower() in {"", "0", "off", "no", "false"}:
            return None
        return Path(env)
    repo = _PACKAGE.parent
    if (repo / "pyproject.toml").is_file() and (repo / "_config.yml").is_file():
        return repo / "_build" / ".hca_results"
    return None


def clear_memory() -> None:
    """Forget the in-process results (the disk store is left alone)."""
    _MEMORY.clear()


# =========================================================================== read-only copies
def read_only(value: T) -> T:
    """A copy of ``value`` that shares nothing a reader could change with it.

    numpy arrays become views with ``writeable=False`` (of arrays the store owns, so the
    flag cannot be set back), DataFrames, Series and Index objects shallow copies (pandas'
    copy-on-write copies the data only when one is written), tuples, lists, dicts and sets
    new containers of read-only items, dataclasses and other objects with a ``__dict__``
    copies whose attributes are read-only items; anything else a deep copy. Objects shared
    inside ``value`` stay shared in the copy.
    """
    return _walk(value, {}, freeze=False)


def _frozen(value: T) -> T:
    """An independent copy of ``value`` for the store: arrays copied and made read-only."""
    return _walk(value, {}, freeze=True)


def _walk(obj: Any, memo: dict[int, Any], *, freeze: bool) -> Any:
    cls = type(obj)
    if cls in _LEAVES or (cls not in _CONTAINERS and isinstance(obj, _AS_IS)):
        return obj
    key = id(obj)
    if key in memo:
        return memo[key]
    out: Any
    if cls is np.ndarray or isinstance(obj, np.ndarray):
        out = obj.copy() if freeze else obj.view()
        if freeze and obj.dtype == object:  # the items of an object array are copied too
            for i, item in enumerate(obj.flat):
                out.flat[i] = _walk(item, memo, freeze=freeze)
        out.setflags(write=False)
    elif cls is tuple:
        out = tuple([x if type(x) in _LEAVES else _walk(x, memo, freeze=freeze) for x in obj])
    elif cls is dict:
        out = memo[key] = {}
        for k, v in obj.items():
            out[k] = v if type(v) in _LEAVES else _walk(v, memo, freeze=freeze)
    elif cls is list:
        out = memo[key] = []
        out.extend([x if type(x) in _LEAVES else _walk(x, memo, freeze=freeze) for x in obj])
    elif isinstance(obj, (pd.DataFrame, pd.Series)):
        out = obj.copy(deep=freeze)
    elif isinstance(obj, pd.Index):
        out = obj.copy()
    elif isinstance(obj, tuple) and hasattr(obj, "_fields"):  # a namedtuple
        out = cls(*(_walk(x, memo, freeze=freeze) for x in obj))
    elif cls in (set, frozenset):
        out = cls(_walk(x, memo, freeze=freeze) for x in obj)
    elif hasattr(obj, "__dict__") or dataclasses.is_dataclass(obj):
        out = memo[key] = copy.copy(obj)
        if hasattr(obj, "__dict__"):
            for name, v in vars(obj).items():
                w = v if type(v) in _LEAVES else _walk(v, memo, freeze=freeze)
                object.__setattr__(out, name, w)
        else:  # a dataclass with slots
            for f in dataclasses.fields(obj):
                object.__setattr__(out, f.name, _walk(getattr(obj, f.name), memo, freeze=freeze))
    else:
        out = copy.deepcopy(obj)
    memo[key] = out
    return out


# =========================================================================== in the process
def cached(name: str, compute: Callable[..., T], *args: Hashable) -> T:
    """``compute(*args)``, computed once per process and library version; a read-only copy.

    Parameters
    ----------
    name : str
        Name of the result (e.g. ``"main_fits"``); part of the key.
    compute : callable
        A pure function of ``args``.
    *args
        Hashable arguments (frozen dataclasses, tuples, str, int).

    Returns
    -------
    A :func:`read_only` copy of the result: equal for the same ``(name, args)``, and nothing
    a caller does to it changes what the next caller gets.
    """
    return read_only(_held(name, compute, args))


def cached_item(name: str, compute: Callable[..., tuple[T, ...]], index: int, *args: Hashable) -> T:
    """Item ``index`` of ``compute(*args)`` (a tuple), as :func:`cached` holds it: only that
    item is copied for the caller (one setup's runs of a batch computed for two)."""
    return read_only(_held(name, compute, args)[index])


def _held(name: str, compute: Callable[..., T], args: tuple[Hashable, ...]) -> T:
    """The process's frozen copy of ``compute(*args)`` (computed or read from the store once)."""
    key = (fingerprint(), name, args)
    if key not in _MEMORY:
        _MEMORY[key] = _frozen(_stored(name, compute, args))
    return _MEMORY[key]  # type: ignore[no-any-return]


def _stored(name: str, compute: Callable[..., T], args: tuple[Hashable, ...]) -> T:
    """``compute(*args)``, read from or written to the disk store as plain data
    (:mod:`hca.paper.plain`: arrays and JSON, no pickle) when there is one. A result that is
    not plain data is kept in memory only; an unreadable file is ignored with a warning."""
    folder = cache_dir()
    if folder is None:
        return compute(*args)
    path = folder / f"{name}-{_key(name, args)}.npz"
    folder.mkdir(parents=True, exist_ok=True)
    with FileLock(str(folder / f"{path.stem}.lock")):  # a second process waits, then reads
        if path.is_file():
            try:
                return plain.load(path)  # type: ignore[no-any-return]
            except (OSError, ValueError, KeyError, TypeError, AttributeError) as err:
                warnings.warn(
                    f"ignoring unreadable stored result {path.name} ({type(err).__name__}: {err})",
                    RuntimeWarning,
                    stacklevel=3,
                )
        value = compute(*args)
        try:
            data = plain.dumps(value)
        except plain.NotPlainError:
            return value
        _write_atomically(folder, path, data)
        return value


def _write_atomically(folder: Path, path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file in ``folder`` (never half-written)."""
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{path.stem}-", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


# =========================================================================== on disk
def _key(name: str, args: tuple[Hashable, ...]) -> str:
    return hashlib.sha256(f"{fingerprint()}|{name}|{args!r}".encode()).hexdigest()[:20]


def stored_json(
    name: str,
    compute: Callable[..., Any],
    *args: Hashable,
    check: Callable[[Any], bool] = lambda data: True,
) -> Any:
    """``compute(*args)`` (plain JSON data: dicts, lists, str, numbers, None), computed once
    per build: stored as JSON under :func:`cache_dir` (and not at all without one).

    A stored file is read with :func:`json.load` and nothing else, and used only if
    ``check(data)`` holds; otherwise (a truncated or foreign file) it is ignored with a
    :class:`RuntimeWarning` and replaced by the recomputed result.
    """
    folder = cache_dir()
    if folder is None:
        return json_plain(compute(*args))
    key = _key(name, tuple(args))
    path = folder / f"{name}-{key}.json"
    folder.mkdir(parents=True, exist_ok=True)
    with FileLock(str(folder / f"{name}-{key}.lock")):
        if path.is_file():
            try:
                data = json.loads(path.read_text(encoding="utf-8"))
                if check(data):
                    return data
                problem = "not the expected shape"
            except (OSError, ValueError, UnicodeDecodeError) as err:
                problem = f"{type(err).__name__}: {err}"
            warnings.warn(
                f"ignoring unreadable stored result {path.name} ({problem})",
                RuntimeWarning,
                stacklevel=2,
            )
        data = json_plain(compute(*args))
        _write_atomically(folder, path, json.dumps(data).encode("utf-8"))
        return data


def json_plain(data: Any) -> Any:
    """``data`` as it reads back from JSON (tuples become lists), so that a stored and a
    freshly computed result are the same."""
    return json.loads(json.dumps(data, default=_json_default))


def _json_default(obj: Any) -> Any:
    if isinstance(obj, np.generic):
        return obj.item()
    raise TypeError(f"not plain data: {type(obj).__name__}")
