"""Command line: ``python -m hca <command>``.

Commands
--------
data
    Fetch (or find in ``$HCA_DATA_DIR``) and verify every pinned data file.
"""

from __future__ import annotations

import argparse
import sys
from typing import Callable, Sequence

_COMMANDS: dict[str, tuple[Callable[[argparse.ArgumentParser], None],
                           Callable[[argparse.Namespace], int], str]] = {}


def register_command(name: str, help: str,
                     setup: Callable[[argparse.ArgumentParser], None],
                     run: Callable[[argparse.Namespace], int]) -> None:
    """Register a sub-command: ``setup`` adds its arguments, ``run`` executes it."""
    _COMMANDS[name] = (setup, run, help)


def _setup_data(p: argparse.ArgumentParser) -> None:
    p.add_argument("--offline", action="store_true",
                   help="never download; fail if a file is not found locally")


def _run_data(args: argparse.Namespace) -> int:
    from hca.data import REGISTRY, fetch

    for name in REGISTRY:
        path = fetch(name, download=not args.offline)
        print(f"ok  {name}  {path}")
    return 0


register_command("data", "fetch and verify the pinned data files", _setup_data, _run_data)


def _load_optional_commands() -> None:
    """Import modules that register further commands (fit, scorecard) when present."""
    import importlib

    for mod in ("hca.cli.fit", "hca.paper.scorecard"):
        try:
            importlib.import_module(mod)
        except ModuleNotFoundError as err:
            if err.name != mod:
                raise


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``python -m hca``; returns the exit code."""
    _load_optional_commands()
    parser = argparse.ArgumentParser(prog="python -m hca", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    for name, (setup, _, help_) in _COMMANDS.items():
        setup(sub.add_parser(name, help=help_))
    args = parser.parse_args(argv)
    try:
        return _COMMANDS[args.command][1](args)
    except (ValueError, FileNotFoundError, KeyError, RuntimeError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
