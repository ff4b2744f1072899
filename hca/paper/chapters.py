"""The shape every chapter of the book follows, and the list of chapters.

A chapter is a module ``hca.paper.<chapter>`` with

* ``Settings``: a frozen dataclass of repetition counts whose defaults are the book's, with
  ``Settings.fast()`` giving small counts for unit tests;
* ``run(setup, settings)``: the chapter's results under one setup (:mod:`hca.paper.setups`),
  computed once (:func:`hca.paper.cache.cached`);
* claim evaluators, registered with :func:`hca.paper.claims.claim` next to the analysis they
  judge; :meth:`Chapter.claims` lists them.

:class:`ChapterModule` declares that shape (a :class:`typing.Protocol` the modules satisfy),
:class:`Chapter` wraps one module with its notebook, and :data:`CHAPTER_LIST` names every
chapter in book order. The scorecard (:mod:`hca.paper.scorecard`) walks this list: from a
setup to a verdict, read :meth:`Chapter.run`, then the chapter's ``run`` and its evaluators.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

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
from hca.paper.claims import CHAPTERS, ClaimSpec, registered
from hca.paper.setups import Setup

__all__ = ["ChapterSettings", "ChapterModule", "Chapter", "CHAPTER_LIST", "chapter"]


class ChapterSettings(Protocol):
    """A chapter's repetition counts: the book's by default, small ones from :meth:`fast`."""

    @classmethod
    def fast(cls) -> Any: ...


class ChapterModule(Protocol):
    """What every chapter module ``hca.paper.<chapter>`` defines."""

    Settings: type[ChapterSettings]

    def run(self, setup: str | Setup = ..., settings: Any = ...) -> Any: ...


@dataclass(frozen=True)
class Chapter:
    """One chapter: its key and its module.

    Attributes
    ----------
    key : str
        The module's name under :mod:`hca.paper` (``"recovery"``).
    module : ChapterModule
    page : str or None
        The notebook of a chapter without claims (those with claims are named in
        :data:`hca.paper.claims.CHAPTERS`).
    """

    key: str
    module: ChapterModule
    page: str | None = None

    @property
    def notebook(self) -> str:
        """The notebook's file name without ``.md`` (``"03_hca_recovery"``)."""
        return CHAPTERS[self.key][0] if self.key in CHAPTERS else str(self.page)

    def settings(self, fast: bool = False) -> Any:
        """The book's settings, or the small ones of the unit tests (``fast``)."""
        return self.module.Settings.fast() if fast else self.module.Settings()

    def run(self, setup: str | Setup, settings: Any = None) -> Any:
        """The chapter's results under ``setup`` (default settings: the book's)."""
        return self.module.run(setup, self.settings() if settings is None else settings)

    def claims(self) -> list[ClaimSpec]:
        """The claim evaluators the chapter registers (empty for a chapter without claims)."""
        return registered(self.key)

    @property
    def title(self) -> str:
        """The chapter's title on the scorecard (its key for a chapter without claims)."""
        return CHAPTERS[self.key][1] if self.key in CHAPTERS else self.key


#: Every chapter with a ``run``, in book order.
CHAPTER_LIST: tuple[Chapter, ...] = (
    Chapter("data", data),
    Chapter("pca", pca),
    Chapter("recovery", recovery),
    Chapter("interpretation", interpretation),
    Chapter("scaling", scaling),
    Chapter("completion", completion),
    Chapter("v1", v1),
    Chapter("mmlu", mmlu),
    Chapter("robustness", robustness, page="10_robustness"),
)


def chapter(key: str) -> Chapter:
    """The chapter ``key`` of :data:`CHAPTER_LIST`."""
    for c in CHAPTER_LIST:
        if c.key == key:
            return c
    raise ValueError(f"unknown chapter {key!r}; known: {[c.key for c in CHAPTER_LIST]}")
