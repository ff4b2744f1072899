"""Where ``python -m hca fit`` reads its CSV from: a regular file, or a pipe read once.

* A regular file is read where it is (``/dev/stdin`` redirected from a file is one too).
* ``-``, ``/dev/stdin`` on a pipe, a FIFO and a process substitution (``<(...)``,
  ``/dev/fd/63``) are streams: read once, into memory, before anything else, then parsed from
  there (at most :data:`MAX_STREAM_BYTES`).
* Anything else is refused in one line saying what it is: a folder, a character or block
  device (``/dev/zero``, a terminal), a socket, a loop of symbolic links, a link to nothing, a
  path that does not exist. Nothing is read from a device: ``/dev/zero`` never ends.
"""

from __future__ import annotations

import errno
import io
import os
import stat
import sys
from dataclasses import dataclass
from typing import BinaryIO

from hca.validation import InputError

__all__ = ["STDIN", "MAX_STREAM_BYTES", "Source", "open_source"]

#: The name that reads the CSV from standard input.
STDIN = "-"
#: A stream (pipe, FIFO, ``-``) longer than this is refused (it is held in memory, and the
#: fit needs several times the text's size): save it to a file instead.
MAX_STREAM_BYTES = 1 << 30
_CHUNK = 1 << 20


@dataclass(frozen=True)
class Source:
    """A readable CSV: its name for messages, and either a regular file's path or the bytes
    of a stream read once.

    Attributes
    ----------
    name : str
        As given on the command line (``"standard input"`` for ``-``).
    path : str or None
        A regular file, read where it is; None for a stream.
    data : bytes or None
        The stream's bytes (read once); None for a regular file.
    """

    name: str
    path: str | None = None
    data: bytes | None = None

    @property
    def stream(self) -> bool:
        """Whether the CSV came from a pipe, a FIFO or standard input."""
        return self.data is not None

    def open(self) -> BinaryIO:
        """A new binary reader of the whole CSV (as many times as needed)."""
        if self.data is not None:
            return io.BytesIO(self.data)
        assert self.path is not None
        return open(self.path, "rb")

    def __str__(self) -> str:
        return self.name


def _what(mode: int) -> str:
    """What a non-regular file is, in words."""
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a file"  # pragma: no cover - every kind of file is named above


def _missing(path: str, err: OSError) -> InputError:
    """The message of a path ``os.stat`` could not follow."""
    if err.errno == errno.ELOOP:
        return InputError(
            f"{path}: a loop of symbolic links (too many levels of symbolic links); "
            "point the link at the CSV file"
        )
    if isinstance(err, PermissionError):
        return InputError(f"{path}: permission denied (cannot look up the file)")
    if os.path.islink(path):
        return InputError(f"{path}: a symbolic link to {os.readlink(path)!r}, which does not exist")
    if err.errno == errno.ENOTDIR:
        return InputError(f"{path}: no such file (a part of the path is not a folder)")
    return InputError(f"{path}: no such file")


def _read_stream(name: str, fh: BinaryIO, limit: int) -> bytes:
    """Every byte of ``fh`` (at most ``limit``), read once."""
    chunks, size = [], 0
    while True:
        chunk = fh.read(_CHUNK)
        if not chunk:
            return b"".join(chunks)
        size += len(chunk)
        if size > limit:
            raise InputError(
                f"{name}: more than {limit / 1024**2:,.0f} MB from a pipe; save the CSV to a "
                "file and give its path"
            )
        chunks.append(chunk)


def _stdin(limit: int) -> Source:
    """``-``: standard input, read once when it is a pipe, a FIFO, a socket or a file."""
    name = "standard input"
    stdin = sys.stdin
    buffer = getattr(stdin, "buffer", None)
    try:
        mode = os.fstat(stdin.fileno()).st_mode
    except (AttributeError, ValueError, OSError, io.UnsupportedOperation):
        if buffer is None:  # e.g. a text stream put in place of stdin (tests, notebooks)
            return Source(name, data=stdin.read().encode("utf-8"))
        return Source(name, data=_read_stream(name, buffer, limit))
    if stdin.isatty():
        raise InputError(
            f"{STDIN}: standard input is a terminal, not a CSV; pipe the CSV in "
            "(cat board.csv | python -m hca fit - ...) or give its path"
        )
    if not (stat.S_ISFIFO(mode) or stat.S_ISREG(mode) or stat.S_ISSOCK(mode)):
        raise InputError(
            f"{STDIN}: standard input is not a regular file ({_what(mode)}); pipe the CSV "
            "in or give its path"
        )
    return Source(name, data=_read_stream(name, buffer or stdin, limit))


def open_source(path: str | os.PathLike, limit: int = MAX_STREAM_BYTES) -> Source:
    """Check ``path`` (``-`` for standard input) and make it a :class:`Source`.

    A regular file is checked, not read; a pipe or FIFO is read at once, into memory (at
    most ``limit`` bytes). Anything else raises a one-line :class:`InputError` saying what
    the path is.
    """
    name = os.fspath(path)
    if name == STDIN:
        return _stdin(limit)
    try:
        mode = os.stat(name).st_mode
    except OSError as err:
        raise _missing(name, err) from None
    if stat.S_ISREG(mode):
        return Source(name, path=name)
    if stat.S_ISDIR(mode):
        raise InputError(f"{name}: is a folder, not a CSV file")
    if stat.S_ISFIFO(mode):  # a pipe: /dev/stdin, <(...), a named FIFO
        try:
            with open(name, "rb") as fh:
                return Source(name, data=_read_stream(name, fh, limit))
        except OSError as err:
            raise InputError(
                f"{name}: cannot read the pipe ({err.strerror or type(err).__name__})"
            ) from None
    if stat.S_ISCHR(mode) and _is_terminal(name):
        raise InputError(
            f"{name}: a terminal, not a CSV; pipe the CSV in "
            "(cat board.csv | python -m hca fit - ...) or give its path"
        )
    raise InputError(
        f"{name}: not a regular file ({_what(mode)}); give a CSV file, or pipe the CSV in "
        f"with {STDIN}"
    )


def _is_terminal(name: str) -> bool:
    """Whether the character device ``name`` is a terminal (``/dev/stdin`` of an interactive
    shell resolves to ``/dev/pts/N``); decided from its name, never by opening it."""
    real = os.path.realpath(name)
    return real == "/dev/tty" or real.startswith(("/dev/pts/", "/dev/tty", "/dev/console"))
