"""How much more memory this process may use: its limits, read before the work.

A run is refused before it starts when its estimated memory (:mod:`hca.cli.estimate`) is
above what the process may still take, the smallest of:

* the address-space limit (``ulimit -v``, ``RLIMIT_AS``) less the address space in use
  (``VmSize``), and the data-segment limit (``ulimit -d``, ``RLIMIT_DATA``) less ``VmData``;
* the control group's limit (cgroup v2 ``memory.max`` less ``memory.current``, for the
  process's group and each group above it; cgroup v1 ``memory.limit_in_bytes`` less
  ``memory.usage_in_bytes``);
* the memory the kernel says is available (``MemAvailable`` of ``/proc/meminfo``).

The first bounds this process alone (every worker process has its own); the other two are
shared with the worker processes of ``--n-jobs``. Where a file cannot be read (another
system) that bound is left out.
"""

from __future__ import annotations

import os
import resource
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Headroom", "headroom", "process_status", "size_text"]

_PROC = Path("/proc")
_CGROUP = Path("/sys/fs/cgroup")


def size_text(n_bytes: float) -> str:
    """``"850 MB"`` or ``"2.4 GB"`` (powers of 1024)."""
    if n_bytes >= 1024**3:
        return f"{n_bytes / 1024**3:.1f} GB"
    return f"{max(n_bytes, 0) / 1024**2:,.0f} MB"


def process_status(proc: Path = _PROC) -> dict[str, int]:
    """``VmSize``, ``VmData``, ``VmRSS`` ... of this process in bytes (``/proc/self/status``;
    empty where there is none)."""
    out: dict[str, int] = {}
    try:
        text = (proc / "self" / "status").read_text()
    except OSError:
        return out
    for line in text.splitlines():
        key, _, rest = line.partition(":")
        parts = rest.split()
        if len(parts) == 2 and parts[1] == "kB" and parts[0].isdigit():
            out[key] = int(parts[0]) * 1024
    return out


def _read_int(path: Path) -> int | None:
    try:
        text = path.read_text().strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


def _cgroup_room(proc: Path = _PROC, root: Path = _CGROUP) -> tuple[int, str] | None:
    """The least room (limit less usage) of this process's control group and those above it."""
    try:
        lines = (proc / "self" / "cgroup").read_text().splitlines()
    except OSError:
        return None
    best: tuple[int, str] | None = None
    for line in lines:
        _, controllers, path = line.split(":", 2)
        if controllers == "":  # cgroup v2: limits on the group and every ancestor
            group = root / path.lstrip("/")
            while True:
                limit = _read_int(group / "memory.max")
                used = _read_int(group / "memory.current")
                if limit is not None and used is not None:
                    room = (limit - used, f"control group limit {size_text(limit)} (memory.max)")
                    best = room if best is None or room[0] < best[0] else best
                if group == root or root not in group.parents:
                    break
                group = group.parent
        elif "memory" in controllers.split(","):  # cgroup v1
            group = root / "memory" / path.lstrip("/")
            limit = _read_int(group / "memory.limit_in_bytes")
            used = _read_int(group / "memory.usage_in_bytes")
            if limit is not None and used is not None and limit < 1 << 60:
                room = (limit - used, f"control group limit {size_text(limit)}")
                best = room if best is None or room[0] < best[0] else best
    return best


def _available(proc: Path = _PROC) -> tuple[int, str] | None:
    try:
        text = (proc / "meminfo").read_text()
    except OSError:
        return None
    for line in text.splitlines():
        if line.startswith("MemAvailable:"):
            return int(line.split()[1]) * 1024, "memory available on this machine (MemAvailable)"
    return None


@dataclass(frozen=True)
class Headroom:
    """How many more bytes this process (``process``) and it with its workers (``shared``)
    may use, and what sets each bound (for messages)."""

    process: int | None
    process_what: str
    shared: int | None
    shared_what: str

    def for_run(self, main: float, workers: float) -> tuple[float, int, str] | None:
        """The first bound ``main`` bytes in this process and ``workers`` bytes in worker
        processes would exceed: ``(needed, room, what)``; None when both fit."""
        if self.process is not None and main > self.process:
            return main, self.process, self.process_what
        if self.shared is not None and main + workers > self.shared:
            return main + workers, self.shared, self.shared_what
        return None


def headroom(proc: Path = _PROC, root: Path = _CGROUP) -> Headroom:
    """The room left under every limit of the module docstring, now."""
    status = process_status(proc)
    own: list[tuple[int, str]] = []
    for rlimit, key, what in (
        (resource.RLIMIT_AS, "VmSize", "address-space limit (ulimit -v)"),
        (resource.RLIMIT_DATA, "VmData", "data-segment limit (ulimit -d)"),
    ):
        soft = resource.getrlimit(rlimit)[0]
        if soft != resource.RLIM_INFINITY and key in status:
            own.append((soft - status[key], f"{what} {size_text(soft)}"))
    shared = [b for b in (_cgroup_room(proc, root), _available(proc)) if b is not None]
    p = min(own) if own else None
    s = min(shared) if shared else None
    return Headroom(
        process=p[0] if p else None,
        process_what=p[1] if p else "",
        shared=s[0] if s else None,
        shared_what=s[1] if s else "",
    )


def rss() -> int:
    """This process's resident memory now, in bytes (0 where it cannot be read)."""
    status = process_status()
    if "VmRSS" in status:
        return status["VmRSS"]
    return int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss) * (
        1 if os.uname().sysname == "Darwin" else 1024
    )
