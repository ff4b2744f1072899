"""The list of the book's chapters, in book order (:data:`CHAPTER_LIST`).

Every chapter module ``hca.paper.<chapter>`` declares its shape once, as ``CHAPTER`` (a
:class:`~hca.paper.shape.ChapterSpec`). The scorecard (:mod:`hca.paper.scorecard`) walks this
list and reads nothing else of a chapter.
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
