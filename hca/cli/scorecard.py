"""``python -m hca scorecard``: the replication scorecard (:mod:`hca.paper.scorecard`).

The arguments are declared with :mod:`argparse` alone and the paper (seconds of imports) is
imported only to run the command, so that ``--help`` is fast; ``tests/test_cli_issue35.py``
checks :data:`CHAPTERS` against ``hca.paper.claims.CHAPTERS``. ``--json`` is checked before
any work and written as ``hca fit`` writes its outputs (:mod:`hca.cli.outputs`).
"""

from __future__ import annotations

import argparse
import json
import sys

from hca.cli import COMMAND_MODULES, register_command

__all__ = ["CHAPTERS", "add_arguments"]

#: The chapters with claims, in book order (the keys of ``hca.paper.claims.CHAPTERS``).
CHAPTERS = ("data", "pca", "recovery", "interpretation", "scaling", "completion", "v1", "mmlu")


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The arguments of ``python -m hca scorecard``."""
    p.add_argument("--json", metavar="FILE", help="also write the scorecard as JSON")
    p.add_argument(
        "--only",
        action="append",
        metavar="CHAPTER_OR_ID",
        help=f"compute only a chapter ({', '.join(CHAPTERS)}) or ids with a prefix",
    )


def _run(args: argparse.Namespace) -> int:
    # here, not at the top: the paper (and numpy, via hca.cli.outputs) take seconds to import
    from hca.cli.outputs import check_output_path, write_atomic
    from hca.paper.scorecard import build_scorecard

    out = None if args.json is None else check_output_path(args.json, "--json")
    card = build_scorecard(args.only)
    report = sys.stderr if out is not None and out.stdout else sys.stdout
    print(card.summary(), file=report)
    if out is not None:
        text = json.dumps(card.records(), indent=1, ensure_ascii=False) + "\n"
        write_atomic(out, lambda tmp: tmp.write_text(text, encoding="utf-8"))
        print(f"wrote {args.json}", file=report)
    return 0


register_command("scorecard", COMMAND_MODULES["scorecard"][1], add_arguments, _run)
