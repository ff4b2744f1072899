"""Chapter results computed once: memoised in the process and, in a checkout, on disk.

Each chapter's analysis (``hca.paper.<chapter>.run(setup, settings)``) is a pure function of
the library's code, the pinned data, the setup and the repetition settings. The scorecard, the
chapter notebooks and the intro all read the same results, so they are computed once:

* in one Python process, :func:`cached` returns the *same object* for the same
  ``(name, setup, settings)`` (the scorecard's value of a claim is the chapter's value, not a
  recomputation with copied settings);
* across processes (the notebooks of a book build, then ``make test``), the results are
  stored with :mod:`pickle` under :func:`cache_dir`, keyed by a :func:`fingerprint` of every
  source file and table of :mod:`hca`, the versions of the numerical libraries, the numerical
  environment (BLAS kernels actually chosen for the CPU, numpy's CPU-feature variables) and the
  arguments. Any change to the library gives a new key, so a
  stale result is never read. A lock file makes a second process wait for the first instead of
  computing the same result twice;
* a result that holds another cached result (a chapter's run holds the shared fit of
  :func:`hca.paper.replication.main_fit`, every run of an ensemble the same seed-free sweeps)
  stores it on disk as a reference to that result's own entry, so a result read from disk
  shares it exactly as a result computed in the process does (``run(s).fit is main_fit(s)``
  in every process), and each shared part is stored and read once.

The disk cache lives in ``_build/.hca_results`` of a checkout (removed with ``_build``);
``HCA_RESULTS_CACHE=off`` turns it off and ``HCA_RESULTS_CACHE=/some/dir`` moves it. An
installed package (not a checkout) memoises in memory only unless ``HCA_RESULTS_CACHE`` names
a folder.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import platform
import warnings
from collections.abc import Callable
from contextlib import contextmanager
from functools import lru_cache
from importlib import metadata
from pathlib import Path
from typing import Any, TypeVar

from filelock import FileLock

__all__ = ["cached", "cache_dir", "fingerprint", "clear_memory"]

T = TypeVar("T")

_MEMORY: dict[tuple, Any] = {}
# id of every object held in _MEMORY (a result, or an item of a result that is a tuple) ->
# (key in _MEMORY, reference stored on disk in place of the object: name, compute, args, item)
_ORIGIN: dict[int, tuple[tuple, tuple]] = {}
# values that are never stored as references (small immutable values shared by everything)
_ATOMIC = (type(None), bool, int, float, complex, str, bytes)
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
    import numpy  # noqa: F401  (loads the BLAS threadpoolctl inspects)
    from threadpoolctl import threadpool_info

    libs = sorted(
        f"{i.get('internal_api')}:{i.get('version')}:{i.get('architecture')}"
        for i in threadpool_info()
        if i.get("user_api") == "blas"
    )
    return f"{platform.machine()}|{';'.join(libs)}"


@lru_cache(maxsize=1)
def fingerprint() -> str:
    """SHA-256 of the library's sources and tables, library versions, the numerical
    environment variables and the BLAS kernels in use (the results are read from ensembles so
    that verdicts do not depend on them, but single runs' numbers can)."""
    h = hashlib.sha256()
    files = sorted(
        p
        for p in _PACKAGE.rglob("*")
        if p.is_file() and p.suffix in {".py", ".csv", ".json"} and "__pycache__" not in p.parts
    )
    for p in files:
        h.update(str(p.relative_to(_PACKAGE)).encode())
        h.update(p.read_bytes())
    for dist in _VERSIONED:
        try:
            h.update(f"{dist}={metadata.version(dist)}".encode())
        except metadata.PackageNotFoundError:
            h.update(f"{dist}=none".encode())
    h.update(platform.python_version().encode())
    for var in _ENVIRONMENT:
        h.update(f"{var}={os.environ.get(var, '')}".encode())
    h.update(_blas_kernels().encode())
    return h.hexdigest()


def cache_dir() -> Path | None:
    """Where results are stored on disk, or None (memory only); see the module docstring."""
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
    """Forget the in-process results (the disk cache is left alone)."""
    _MEMORY.clear()
    _ORIGIN.clear()


def _by_reference(compute: Callable) -> bool:
    """Whether ``compute`` can be stored by its import name (a module-level function)."""
    qualname = getattr(compute, "__qualname__", "<")
    return "<" not in qualname and getattr(compute, "__module__", None) is not None


def _remember(key: tuple, compute: Callable, value: Any) -> None:
    """Hold ``value`` under ``key`` and note where it (and each item of a tuple) came from."""
    _MEMORY[key] = value
    if not _by_reference(compute):
        return
    name, args = key[0], key[1:]
    items = enumerate(value) if isinstance(value, tuple) else ()
    for obj, ref in (
        (value, (name, compute, args, None)),
        *((v, (name, compute, args, i)) for i, v in items),
    ):
        if not isinstance(obj, _ATOMIC) and not (type(obj) is tuple and not obj):  # () is shared
            _ORIGIN[id(obj)] = (key, ref)


def _held(key: tuple, item: int | None) -> Any:
    value = _MEMORY[key]
    return value if item is None else value[item]


class _Pickler(pickle.Pickler):
    """Stores every other cached result inside ``top`` as a reference to its own entry."""

    def __init__(self, file: Any, top: Any) -> None:
        super().__init__(file, protocol=pickle.HIGHEST_PROTOCOL)
        self._top = top

    def persistent_id(self, obj: Any) -> tuple | None:
        origin = _ORIGIN.get(id(obj))  # called for every object: the common case first
        if origin is None or obj is self._top:
            return None
        key, ref = origin
        try:
            if _held(key, ref[3]) is not obj:  # an id reused by another object
                return None
        except (KeyError, IndexError, TypeError):
            return None
        return ref


class _Unpickler(pickle.Unpickler):
    """Resolves the references of :class:`_Pickler` through :func:`cached`."""

    def persistent_load(self, pid: Any) -> Any:
        name, compute, args, item = pid
        value = cached(name, compute, *args)
        return value if item is None else value[item]


def _dump(value: Any, path: Path) -> None:
    with open(path, "wb") as fh:
        _Pickler(fh, value).dump(value)


def _load(path: Path) -> Any:
    with open(path, "rb") as fh:
        return _Unpickler(fh).load()


@contextmanager
def _locked(path: Path):
    """An exclusive lock on ``path`` across processes (any platform, via :mod:`filelock`)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(path)):
        yield


def _key(name: str, args: tuple) -> str:
    return hashlib.sha256(f"{fingerprint()}|{name}|{args!r}".encode()).hexdigest()[:20]


def _from_disk(folder: Path, name: str, args: tuple, compute: Callable[[], T]) -> T:
    key = _key(name, args)
    path = folder / f"{name}-{key}.pickle"
    with _locked(folder / f"{name}-{key}.lock"):
        if path.is_file():
            try:
                return _load(path)
            except Exception as err:  # a truncated or foreign file: recompute it
                warnings.warn(
                    f"ignoring unreadable cached result {path.name} ({err})",
                    RuntimeWarning,
                    stacklevel=3,
                )
        value = compute()
        tmp = path.with_suffix(".tmp")
        _dump(value, tmp)
        os.replace(tmp, path)
        return value


def cached(name: str, compute: Callable[..., T], *args: Any) -> T:
    """``compute(*args)``, computed once per process and (in a checkout) once per build.

    Parameters
    ----------
    name : str
        Name of the result (e.g. ``"recovery"``); part of the key.
    compute : callable
        A pure function of ``args``.
    *args
        Hashable arguments with a deterministic ``repr`` (frozen dataclasses, str, int).

    Returns
    -------
    The result; the same object for the same ``(name, args)`` within a process.
    """
    key = (name, *args)
    if key in _MEMORY:
        return _MEMORY[key]
    folder = cache_dir()
    value = (
        compute(*args) if folder is None else _from_disk(folder, name, args, lambda: compute(*args))
    )
    _remember(key, compute, value)
    return value
