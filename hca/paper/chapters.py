"""The list of the book's chapters.

Every chapter module ``hca.paper.<chapter>`` declares its shape once, as ``CHAPTER``: a
:class:`~hca.paper.shape.ChapterSpec` (settings, ``compute``, and for a chapter whose claims
are read from fits with a random start an :class:`~hca.paper.shape.EnsembleSpec`: the runs of
many seeds and both setups at once, why a run is not evidence, what makes a run typical). Claim evaluators are
registered with :func:`hca.paper.claims.claim` next to the analysis they judge.

:data:`CHAPTER_LIST` names every chapter in book order. The scorecard
(:mod:`hca.paper.scorecard`) walks this list: from a setup to a verdict, read
:meth:`~hca.paper.shape.ChapterSpec.run` / :meth:`~hca.paper.shape.ChapterSpec.runs`, then
the chapter's evaluators.
"""

from __future__ import annotations

from typing import Any

from hca.paper import (
    completion,
    data,
    interpretation,
    mmlu,
    pca,
    recovery,
    robustness,
    scaling,
    v1,
)
from hca.paper.shape import ChapterSpec, EnsembleSpec

__all__ = ["ChapterSpec", "EnsembleSpec", "CHAPTER_LIST", "chapter"]

#: Every chapter, in book order.
CHAPTER_LIST: tuple[ChapterSpec[Any, Any], ...] = (
    data.CHAPTER,
    pca.CHAPTER,
    recovery.CHAPTER,
    interpretation.CHAPTER,
    scaling.CHAPTER,
    completion.CHAPTER,
    v1.CHAPTER,
    mmlu.CHAPTER,
    robustness.CHAPTER,
)


def chapter(key: str) -> ChapterSpec[Any, Any]:
    """The chapter ``key`` of :data:`CHAPTER_LIST`."""
    for c in CHAPTER_LIST:
        if c.key == key:
            return c
    raise ValueError(f"unknown chapter {key!r}; known: {[c.key for c in CHAPTER_LIST]}")
