"""``python -m hca scorecard``: the replication scorecard (:mod:`hca.paper.scorecard`).

The paper declares the command (``hca.paper.scorecard.COMMAND``: its arguments and what
it runs), but importing any module of :mod:`hca.paper` loads pandas, scipy and
scikit-learn (seconds, more on a loaded machine). So that ``scorecard --help`` answers as
fast as ``fit --help``, this module declares the same arguments itself with nothing but
:mod:`argparse` and imports the paper only to run the command; ``tests/test_cli_issue35.py``
checks that the two declarations give the same arguments, and that :data:`CHAPTERS` are the
paper's chapters (``hca.paper.claims.CHAPTERS``).
"""

from __future__ import annotations

import argparse

from hca.cli import COMMAND_MODULES, register_command

__all__ = ["CHAPTERS", "add_arguments"]

#: The chapters with claims, in book order (the keys of ``hca.paper.claims.CHAPTERS``).
CHAPTERS = ("data", "pca", "recovery", "interpretation", "scaling", "completion", "v1", "mmlu")


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The arguments of ``hca.paper.scorecard.COMMAND``, declared without importing it."""
    p.add_argument("--json", metavar="FILE", help="also write the scorecard as JSON")
    p.add_argument(
        "--only",
        action="append",
        metavar="CHAPTER_OR_ID",
        help=f"compute only a chapter ({', '.join(CHAPTERS)}) or ids with a prefix",
    )
    p.add_argument(
        "--fast",
        action="store_true",
        help="small repetition counts (quick check; verdicts may differ)",
    )


def _run(args: argparse.Namespace) -> int:
    # Imported here, not at the top: the paper's modules take seconds to import, and
    # ``--help`` must not wait for them.
    from hca.paper.scorecard import COMMAND

    return COMMAND[3](args)


register_command("scorecard", COMMAND_MODULES["scorecard"][1], add_arguments, _run)
