"""``python -m hca data``: fetch (or find in ``$HCA_DATA_DIR``) and verify every data file."""

from __future__ import annotations

import argparse

from hca.cli import COMMAND_MODULES, register_command


def _setup(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--offline", action="store_true", help="never download; fail if a file is not found locally"
    )


def _run(args: argparse.Namespace) -> int:
    from hca.data import REGISTRY, fetch

    for name in REGISTRY:
        path = fetch(name, download=not args.offline)
        print(f"ok  {name}  {path}")
    return 0


register_command("data", COMMAND_MODULES["data"][1], _setup, _run)
