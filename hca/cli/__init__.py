"""Command line: ``python -m hca <command>``.

Commands
--------
data
    Fetch (or find in ``$HCA_DATA_DIR``) and verify every pinned data file.
fit
    Run HCA on your own leaderboard CSV (:mod:`hca.cli.fit`).
scorecard
    The replication scorecard (:mod:`hca.cli.scorecard` declares its arguments, and runs
    :mod:`hca.paper.scorecard`).

Only the module of the command being run is imported, so ``--help`` is fast. Bad input
ends with one line ``error: ...`` on stderr and exit code 2, never a traceback: an
:class:`hca.validation.InputError` (or scikit-learn's ``InvalidParameterError``), an
``OSError`` (a file that cannot be read or written), or a ``ValueError``, ``TypeError`` or
``LookupError`` raised by hca's own code (:func:`is_user_error`). Anything else (a
``RuntimeError``, a ``MemoryError``, an error raised inside numpy, scipy or pandas, ...) is
a bug: its traceback is printed with a request to report it, and the exit code is 1 (set
``HCA_DEBUG=1`` to see the traceback of a user error too, before its one line). Python
warnings are printed as one-line notes (``note: ...``) once the command is done.

SIGTERM and SIGHUP stop a command as Ctrl-C does (:class:`Stopped`, a ``KeyboardInterrupt``):
joblib then kills its worker processes, and the command ends with one line and exit code
128 + the signal's number, leaving no process behind. Text that the terminal's encoding
cannot show (``PYTHONIOENCODING=ascii`` and a domain named "café") is printed with
backslash escapes instead of failing after the work.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import io
import os
import signal
import subprocess
import sys
import threading
import traceback
import warnings
from collections.abc import Callable, Iterator, Sequence
from typing import NoReturn

__all__ = ["main", "run", "register_command", "one_line", "is_user_error", "Stopped"]

#: Command -> (module that registers it, one-line help); the module is imported only when
#: the command runs.
COMMAND_MODULES: dict[str, tuple[str, str]] = {
    "data": ("hca.cli.data", "fetch and verify the pinned data files"),
    "fit": ("hca.cli.fit", "run HCA on your own leaderboard CSV"),
    "scorecard": (
        "hca.cli.scorecard",
        "the replication scorecard: every claim, ours vs the paper",
    ),
}

_COMMANDS: dict[
    str, tuple[Callable[[argparse.ArgumentParser], None], Callable[[argparse.Namespace], int], str]
] = {}

#: Exceptions reported as bad input (exit code 2) when hca's own code raised them
#: (:func:`is_user_error`); an ``OSError`` always is (a file the user named).
USER_ERRORS = (ValueError, TypeError, LookupError, OSError)
#: ``fit``'s work estimate is shown (a note) when the run may take longer than this (seconds).
ESTIMATE_NOTE_SECONDS = 30.0
MAX_MESSAGE = 600  # characters of an error message shown
#: Where bugs are reported.
BUG_REPORT = "please report it (with the traceback above and the command) to the hca developers"
_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _raised_in_hca(err: BaseException) -> bool:
    """Whether the innermost frame of ``err``'s traceback is in hca's own code."""
    tb = err.__traceback__
    if tb is None:
        return False
    while tb.tb_next is not None:
        tb = tb.tb_next
    filename = os.path.abspath(tb.tb_frame.f_code.co_filename)
    return filename.startswith(_PACKAGE_DIR + os.sep)


def is_user_error(err: BaseException) -> bool:
    """Whether ``err`` reports bad input (shown in one line, exit code 2) rather than a bug,
    by the rule of the module docstring (numpy's ``LinAlgError`` "Eigenvalues did not
    converge" or a pandas ``KeyError`` are bugs: raised outside hca's own code)."""
    if isinstance(err, OSError):
        return True
    validation = sys.modules.get("hca.validation")  # loaded if it raised (keeps --help light)
    if validation is not None and isinstance(
        err, (validation.InputError, validation.InvalidParameterError)
    ):
        return True
    return isinstance(err, USER_ERRORS) and _raised_in_hca(err)


def register_command(
    name: str,
    help: str,
    setup: Callable[[argparse.ArgumentParser], None],
    run: Callable[[argparse.Namespace], int],
) -> None:
    """Register a sub-command: ``setup`` adds its arguments, ``run`` executes it."""
    _COMMANDS[name] = (setup, run, help)


def one_line(err: BaseException | str, limit: int = MAX_MESSAGE) -> str:
    """An exception's message on one line (whitespace collapsed, at most ``limit`` chars)."""
    if isinstance(err, BaseException):
        text = str(err.args[0]) if isinstance(err, KeyError) and err.args else str(err)
        if isinstance(err, OSError) and err.strerror and err.filename:
            text = f"{err.filename}: {err.strerror}"
        text = text or type(err).__name__
        if isinstance(err, MemoryError):
            text = f"out of memory ({text})"
    else:
        text = err
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


class OneLineParser(argparse.ArgumentParser):
    """An argument parser whose errors are one line (``error: ...``) and exit code 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"error: {self.prog}: {one_line(message)} (see --help)\n")


class Stopped(KeyboardInterrupt):
    """A command stopped by a signal (SIGTERM, SIGHUP): raised in the main thread so that
    everything unwinds as after Ctrl-C (joblib kills its workers)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum

    @property
    def name(self) -> str:
        return signal.Signals(self.signum).name


#: The signals that stop a command cleanly (those the platform has).
STOP_SIGNALS = tuple(
    getattr(signal, name) for name in ("SIGTERM", "SIGHUP") if hasattr(signal, name)
)


@contextlib.contextmanager
def stop_on_signals() -> Iterator[None]:
    """Within the block, SIGTERM and SIGHUP raise :class:`Stopped` in the main thread (once:
    a second signal while stopping is ignored); the previous handlers come back after it.
    Off the main thread (where Python cannot set handlers) nothing changes."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum: int, frame: object) -> None:
        for sig in STOP_SIGNALS:
            signal.signal(sig, signal.SIG_IGN)
        raise Stopped(signum)

    previous = {sig: signal.signal(sig, stop) for sig in STOP_SIGNALS}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


@contextlib.contextmanager
def escaped_output() -> Iterator[None]:
    """Within the block, text that stdout's or stderr's encoding cannot represent is written
    with backslash escapes (``caf\\xe9``) instead of raising ``UnicodeEncodeError``; the
    streams' error handlers come back after it."""
    changed = []
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper) and stream.errors == "strict":
            try:
                stream.reconfigure(errors="backslashreplace")
            except (ValueError, OSError):  # pragma: no cover - a detached or closed stream
                continue
            changed.append(stream)
    try:
        yield
    finally:
        for stream in changed:
            try:
                stream.reconfigure(errors="strict")
            except (ValueError, OSError):  # pragma: no cover
                pass


def _say(line: str) -> None:
    """One line on stderr, even when stderr is gone (a hung-up terminal)."""
    try:
        print(line, file=sys.stderr, flush=True)
    except (OSError, ValueError):
        pass


def _load_command(name: str | None) -> None:
    """Import the module of ``name`` (if it is a known command): it registers the command."""
    if name in COMMAND_MODULES and name not in _COMMANDS:
        module = COMMAND_MODULES[name][0]
        try:
            importlib.import_module(module)
        except ModuleNotFoundError as err:
            if err.name != module:
                raise


def build_parser(command: str | None = None) -> OneLineParser:
    """The parser; only ``command``'s arguments are set up (the others are listed)."""
    parser = OneLineParser(
        prog="python -m hca",
        description="Hierarchical Component Analysis of LLM leaderboards (Jin et al., 2025).",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="command")
    names = list(COMMAND_MODULES) + [n for n in _COMMANDS if n not in COMMAND_MODULES]
    for name in names:
        help_ = _COMMANDS[name][2] if name in _COMMANDS else COMMAND_MODULES[name][1]
        p = sub.add_parser(name, help=help_, description=help_)
        if name == command and name in _COMMANDS:
            _COMMANDS[name][0](p)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``python -m hca``; returns the exit code."""
    with stop_on_signals(), escaped_output():
        try:
            return _main(argv)
        except Stopped as stop:  # a signal before or after the command's own handling
            _say(f"error: stopped by {stop.name}")
            return 128 + stop.signum


def _main(argv: Sequence[str] | None) -> int:
    """:func:`main` inside its signal handlers and output encoding."""
    argv = list(sys.argv[1:] if argv is None else argv)
    command = next((a for a in argv if not a.startswith("-")), None)  # the sub-command
    try:
        _load_command(command)
        parser = build_parser(command)
        args = parser.parse_args(argv)
    except SystemExit as exit_:  # --help, or a one-line usage error
        return int(exit_.code or 0) if not isinstance(exit_.code, str) else 2
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            code = _COMMANDS[args.command][1](args)
        for note in dict.fromkeys(one_line(str(w.message)) for w in caught):
            print(f"note: {note}", file=sys.stderr)  # warnings a command did not handle
        return code
    except Stopped as stop:  # SIGTERM, SIGHUP: joblib has killed its workers on the way
        _say(f"error: stopped by {stop.name}")
        return 128 + stop.signum
    except KeyboardInterrupt:
        _say("error: interrupted")
        return 130
    except BrokenPipeError:  # e.g. `python -m hca fit ... | head`: stop quietly
        try:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        except (OSError, ValueError, AttributeError):
            pass
        return 1
    except Exception as err:
        if is_user_error(err):
            if os.environ.get("HCA_DEBUG"):
                traceback.print_exc(file=sys.stderr)
            print(f"error: {one_line(err)}", file=sys.stderr)
            return 2
        traceback.print_exc(file=sys.stderr)  # a bug: the traceback, and where to report it
        print(
            f"error: unexpected {type(err).__name__}: {one_line(err)}; this is a bug in "
            f"hca, not in your input: {BUG_REPORT}",
            file=sys.stderr,
        )
        return 1


def run(*args: object) -> subprocess.CompletedProcess[str]:
    """Run ``python -m hca ARGS`` in this process through :func:`main`, its standard output
    and error captured.

    Returns what ``subprocess.run([sys.executable, "-m", "hca", *ARGS], capture_output=True,
    text=True)`` returns (exit code, stdout and stderr as text), without the seconds a new
    Python process spends importing numpy, pandas and scikit-learn again: for a notebook or a
    test that shows the command line. Paths may be given as :class:`os.PathLike`.

    Examples
    --------
    >>> from hca.cli import run
    >>> run("fit", "--help").returncode
    0
    """
    argv = [os.fspath(a) if isinstance(a, os.PathLike) else str(a) for a in args]
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return subprocess.CompletedProcess(
        ["python", "-m", "hca", *argv], code, out.getvalue(), err.getvalue()
    )
