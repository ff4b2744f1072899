"""The shape of a chapter, declared once per chapter as one typed value.

Every chapter module ``hca.paper.<chapter>`` defines ``CHAPTER``, a :class:`ChapterSpec`: its
key, its settings, ``compute`` (its results under one setup) and, for a chapter with claims
read from fits with a random start, an :class:`EnsembleSpec`. The scorecard reads nothing else
of a chapter.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from hca.paper.cache import cached, cached_item
from hca.paper.claims import CHAPTERS, ClaimSpec, registered
from hca.paper.setups import SETUP_NAMES, Setup, get_setup

__all__ = ["ChapterSpec", "EnsembleSpec", "each_setup"]

S = TypeVar("S", bound=Hashable)
R = TypeVar("R")


@dataclass(frozen=True)
class EnsembleSpec(Generic[S, R]):
    """How a chapter's results are computed for many FastICA seeds (its ensemble).

    Attributes
    ----------
    runs : callable
        ``runs(setups, settings, seeds)``: the chapter's results for every seed of ``seeds``
        (in that order) under every seed-free setup of ``setups`` (:meth:`Setup.seed_free`),
        one tuple per setup, computed together (the main fits of all seeds in one batch;
        what the setups share, such as a FastICA their estimators both run, once).
        :func:`each_setup` makes one from a function of one setup.
    evidence : callable
        ``evidence(result)``: why a run is not evidence (the domains whose FastICA was
        steered by rounding; empty when it is), :data:`hca.paper.claims.ENSEMBLE_RULE`.
    typical_key : callable
        ``typical_key(result)``: the number whose median the typical run is nearest to (its
        main fit's MIC; :func:`hca.paper.claims.typical_index`).
    """

    runs: Callable[[tuple[Setup, ...], S, tuple[int, ...]], tuple[tuple[R, ...], ...]]
    evidence: Callable[[R], str]
    typical_key: Callable[[R], float]


def each_setup(
    runs: Callable[[Setup, S, tuple[int, ...]], tuple[R, ...]],
) -> Callable[[tuple[Setup, ...], S, tuple[int, ...]], tuple[tuple[R, ...], ...]]:
    """The :attr:`EnsembleSpec.runs` of a chapter whose setups share nothing: ``runs(setup,
    settings, seeds)`` called for each setup in turn."""

    def runs_each(
        setups: tuple[Setup, ...], settings: S, seeds: tuple[int, ...]
    ) -> tuple[tuple[R, ...], ...]:
        return tuple(runs(setup, settings, seeds) for setup in setups)

    return runs_each


@dataclass(frozen=True)
class ChapterSpec(Generic[S, R]):
    """One chapter of the book: what the scorecard and the notebooks compute of it.

    Attributes
    ----------
    key : str
        The module's name under :mod:`hca.paper` (``"recovery"``).
    settings : callable
        The book's repetition counts (the chapter's ``Settings``, a frozen dataclass).
    compute : callable
        ``compute(setup, settings)``: the chapter's results under ``setup`` (with its seed).
    ensemble : EnsembleSpec or None
        For a chapter with claims read from fits with a random start.
    page : str or None
        The notebook of a chapter without claims (those with claims are named in
        :data:`hca.paper.claims.CHAPTERS`).
    """

    key: str
    settings: Callable[[], S]
    compute: Callable[[Setup, S], R]
    ensemble: EnsembleSpec[S, R] | None = None
    page: str | None = None

    def __post_init__(self) -> None:
        if self.key not in CHAPTERS and self.page is None:
            raise ValueError(f"chapter {self.key!r}: not in CHAPTERS, so it needs a page")

    @property
    def notebook(self) -> str:
        """The notebook's file name without ``.md`` (``"03_hca_recovery"``)."""
        return CHAPTERS[self.key][0] if self.key in CHAPTERS else str(self.page)

    @property
    def title(self) -> str:
        """The chapter's title on the scorecard (its key for a chapter without claims)."""
        return CHAPTERS[self.key][1] if self.key in CHAPTERS else self.key

    def claims(self) -> list[ClaimSpec]:
        """The claim evaluators the chapter registers (empty for a chapter without claims)."""
        return registered(self.key)

    def run(self, setup: str | Setup = "careful", settings: S | None = None) -> R:
        """The chapter's results under ``setup`` (default settings: the book's), computed once
        per process (:func:`hca.paper.cache.cached`; a read-only copy)."""
        st = self.settings() if settings is None else settings
        return cached(self.key, self.compute, get_setup(setup), st)

    def runs(
        self, setup: str | Setup, seeds: Sequence[int], settings: S | None = None
    ) -> tuple[R, ...]:
        """The chapter's results under ``setup`` for every FastICA seed of ``seeds``
        (:meth:`Setup.with_seed`), computed together once per process. The ensembles of the
        book's two setups (:data:`~hca.paper.setups.SETUP_NAMES`) are one batch: asking for
        one computes both (the scorecard reads both), so what they share is computed once.

        Raises
        ------
        ValueError
            If the chapter has no ensemble.
        """
        if self.ensemble is None:
            raise ValueError(f"chapter {self.key!r} has no ensemble (no fit with a random start)")
        st = self.settings() if settings is None else settings
        seeds_ = tuple(int(s) for s in seeds)
        free = get_setup(setup).seed_free()
        book = tuple(get_setup(name).seed_free() for name in SETUP_NAMES)
        group = book if free in book else (free,)
        # only this setup's runs are copied for the caller
        return cached_item(
            f"{self.key}_runs", self.ensemble.runs, group.index(free), group, st, seeds_
        )
