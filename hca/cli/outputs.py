"""The files ``python -m hca fit`` writes, written without harming what is there.

* A regular file (or a new name) is replaced atomically: the content goes to a temporary
  file in the same folder, renamed over the target once every output is ready.
* A symbolic link is followed: its target is written (atomically, next to the target when it
  is a regular file) and the link stays a link.
* A device node (``/dev/null``, ``/dev/stdout``, ...) or a FIFO is written through (opened
  for writing, never renamed over); a socket is refused.
* The command's own standard output (``/dev/stdout``, or the file stdout is redirected to)
  is written through stdout itself (appended, never truncated or replaced); the caller then
  prints its text report on stderr (:attr:`Output.stdout`). A write that fails (``/dev/full``)
  is one line naming the option and the cause.

:func:`check_output_path` checks a target before any work; :func:`write_outputs` writes
several outputs all or none (no rename happens before every content is ready and every
stream written).
"""

from __future__ import annotations

import os
import shutil
import stat
import sys
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from hca.validation import InputError

__all__ = ["Output", "check_output_path", "is_stdout", "write_atomic", "write_outputs"]


@dataclass(frozen=True)
class Output:
    """A checked output: the path given, where the bytes go, and whether it is a stream.

    Attributes
    ----------
    path : Path
        As given on the command line (its suffix selects a figure's format).
    target : Path
        ``path`` with symbolic links resolved: the file written.
    stream : bool
        True for a device node or a FIFO (written through, never replaced).
    option : str
        The option that named it, for messages.
    stdout : bool
        True when it is this process's standard output (``/dev/stdout``, or the file or
        pipe stdout goes to): written through ``sys.stdout``.
    """

    path: Path
    target: Path
    stream: bool
    option: str = "output"
    stdout: bool = False


def is_stdout(path: str | os.PathLike) -> bool:
    """Whether ``path`` is the file, pipe or device this process's stdout writes to (not
    ``/dev/null``: what goes there is dropped either way)."""
    try:
        target = os.stat(path)
        if os.path.samestat(target, os.stat(os.devnull)):
            return False
        return os.path.samestat(target, os.fstat(sys.stdout.fileno()))
    except (OSError, ValueError, AttributeError):  # absent path, or no real stdout
        return False


def _kind(target: Path) -> str | None:
    """``None`` (absent), ``"file"``, ``"folder"``, ``"stream"`` or ``"socket"``."""
    try:
        mode = os.stat(target).st_mode
    except (FileNotFoundError, NotADirectoryError):
        return None
    if stat.S_ISDIR(mode):
        return "folder"
    if stat.S_ISREG(mode):
        return "file"
    if stat.S_ISSOCK(mode):
        return "socket"
    return "stream"  # character or block device, FIFO


def check_output_path(
    path: str | os.PathLike,
    option: str,
    suffixes: Sequence[str] | None = None,
    inputs: Sequence[str | os.PathLike] = (),
) -> Output:
    """Check, before any work, that ``path`` can be written without harming it.

    Refuses a folder, a socket, a missing or non-folder parent, a place where no file can be
    created (probed with a temporary file, removed at once), an unwritable file or device,
    an unexpected suffix, a dangling link into a missing folder and an input file
    (``inputs``) that would be overwritten.
    """
    path = Path(path)
    if suffixes is not None and path.suffix.lower() not in suffixes:
        raise InputError(
            f"{option} {path}: the file name must end in "
            f"{', '.join(suffixes)} (got {path.suffix or 'no suffix'!r})"
        )
    if is_stdout(path):
        return Output(path, path, True, option, stdout=True)
    if _kind(path) == "stream":  # a device or FIFO, possibly through links (/dev/stdout)
        target = path
    else:
        target = Path(os.path.realpath(path)) if path.is_symlink() else path
    kind = _kind(target)
    via = f" (the link's target {target})" if target != path else ""
    if kind == "folder":
        raise InputError(f"{option} {path}: is a folder{via}; give a file name")
    if kind == "socket":
        raise InputError(f"{option} {path}: is a socket{via}; give a file, a device or a FIFO")
    for other in inputs:
        if kind is not None and Path(other).exists() and target.samefile(other):
            raise InputError(f"{option} {path}: would overwrite the input file")
    if kind is not None and not os.access(target, os.W_OK):
        what = "file" if kind == "file" else "device or FIFO"
        raise InputError(f"{option} {path}: the {what} exists and is not writable{via}")
    if kind == "stream":
        return Output(path, target, True, option)
    parent = target.parent
    if not parent.exists():
        raise InputError(f"{option} {path}: folder {parent} does not exist{via}")
    if not parent.is_dir():
        raise InputError(f"{option} {path}: {parent} is not a folder")
    try:
        with tempfile.NamedTemporaryFile(dir=parent, prefix=f".{target.name}.", suffix=".probe"):
            pass
    except OSError as err:
        raise InputError(
            f"{option} {path}: cannot write in {parent} ({err.strerror or type(err).__name__})"
        ) from None
    return Output(path, target, False, option)


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _temporary(out: Output) -> Path:
    """A new empty temporary file: next to the target, or in the temp folder for a stream."""
    folder = None if out.stream else out.target.parent
    fd, name = tempfile.mkstemp(dir=folder, prefix=f".{out.target.name}.", suffix=out.path.suffix)
    os.close(fd)
    return Path(name)


def _write_stream(out: Output, tmp: Path) -> None:
    """Copy ``tmp`` into the device or FIFO (opened for writing, never replaced), or into
    stdout through ``sys.stdout`` (at its position: nothing already written is lost)."""
    try:
        if out.stdout:
            sys.stdout.flush()
            with open(tmp, "rb") as src:
                shutil.copyfileobj(src, sys.stdout.buffer)
            sys.stdout.flush()
            return
        with open(tmp, "rb") as src, open(out.target, "wb") as dst:
            shutil.copyfileobj(src, dst)
    except OSError as err:
        raise OSError(
            f"{out.option} {out.path}: cannot write ({err.strerror or type(err).__name__})"
        ) from None


def write_outputs(outputs: Mapping[Output, Callable[[Path], None]]) -> list[Output]:
    """Write every output, all or none as far as files go.

    ``outputs`` maps each :class:`Output` to ``write(tmp)``, which fills a temporary file.
    Every content is made first, then streams are written through, then the temporary files
    are renamed over the regular targets (a link's target, the link kept). On failure the
    temporary files are removed and no regular file has been touched. Returns the outputs.
    """
    staged: list[tuple[Output, Path]] = []
    try:
        for out, write in outputs.items():
            tmp = _temporary(out)
            staged.append((out, tmp))
            write(tmp)
        for out, tmp in staged:
            if out.stream:
                _write_stream(out, tmp)
        for out, tmp in staged:
            if not out.stream:
                os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes it private
                os.replace(tmp, out.target)
    finally:
        for _, tmp in staged:
            tmp.unlink(missing_ok=True)
    return [out for out, _ in staged]


def write_atomic(out: Output, write: Callable[[Path], None]) -> None:
    """Write one output checked by :func:`check_output_path` (see :func:`write_outputs`)."""
    write_outputs({out: write})
