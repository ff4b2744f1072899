"""The shape of a chapter, declared once per chapter as one typed value.

Every chapter module ``hca.paper.<chapter>`` defines ``CHAPTER``, a :class:`ChapterSpec`: its
key, its settings, ``compute`` (its results under one setup) and, for a chapter with claims
read from fits with a random start, an :class:`EnsembleSpec`. The scorecard reads nothing else
of a chapter.

A chapter's ``Settings`` (a frozen dataclass, :class:`ChapterSettings`) holds every analysis
choice a reader may change: at least ``setups`` (the setups to run) and, for a chapter with an
ensemble (:class:`EnsembleSettings`), ``n_seeds`` (the FastICA seeds of its ensemble,
``0 .. n_seeds - 1``) and ``n_seeds_more`` (the larger ensemble a claim is read from when a
share of the first runs lies near a threshold, :func:`hca.paper.claims.needs_more_runs`). The
defaults are the book's, so changing one chapter's ensemble is a one-line change of its
``Settings`` in that chapter's module.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

from hca.paper.cache import cached, cached_item
from hca.paper.claims import CHAPTERS, ClaimSpec, registered
from hca.paper.setups import SETUP_NAMES, Setup, get_setup

__all__ = [
    "ChapterSettings",
    "EnsembleSettings",
    "ChapterSpec",
    "EnsembleSpec",
    "each_setup",
    "check_settings",
]


class ChapterSettings(Protocol):
    """What every chapter's ``Settings`` holds (besides its own choices): the setups to run."""

    @property
    def setups(self) -> tuple[str, ...]: ...

    def __hash__(self) -> int: ...


class EnsembleSettings(ChapterSettings, Protocol):
    """The settings of a chapter with an ensemble: how many FastICA seeds its runs use."""

    @property
    def n_seeds(self) -> int: ...

    @property
    def n_seeds_more(self) -> int: ...


S = TypeVar("S", bound=Hashable)
R = TypeVar("R")


def check_settings(settings: Any, ensemble: bool = False) -> None:
    """Check the common fields of a chapter's settings before any work (``setups`` known and
    not empty or repeated; ``1 <= n_seeds <= n_seeds_more`` for a chapter with an ensemble).

    Raises
    ------
    ValueError
        Naming the field, what it holds and what is expected.
    """
    setups = getattr(settings, "setups", None)
    if not isinstance(setups, tuple) or not setups:
        raise ValueError(
            f"settings.setups must be a non-empty tuple of setup names, got {setups!r}"
        )
    unknown = [s for s in setups if s not in SETUP_NAMES]
    if unknown or len(set(setups)) != len(setups):
        raise ValueError(
            f"settings.setups {setups!r}: expected distinct names among {SETUP_NAMES}"
            + (f"; unknown {unknown}" if unknown else "")
        )
    if ensemble:
        n, more = getattr(settings, "n_seeds", None), getattr(settings, "n_seeds_more", None)
        ints = all(isinstance(x, int) and not isinstance(x, bool) for x in (n, more))
        if not ints or not 1 <= int(n or 0) <= int(more or 0):
            raise ValueError(
                f"settings.n_seeds={n!r}, n_seeds_more={more!r}: expected integers with "
                "1 <= n_seeds <= n_seeds_more"
            )


@dataclass(frozen=True)
class EnsembleSpec(Generic[S, R]):
    """How a chapter's results are computed for many FastICA seeds (its ensemble).

    The seeds come from the chapter's settings (:class:`EnsembleSettings`: the first
    ``n_seeds`` seeds, or ``n_seeds_more`` where a claim's rule asks for more runs).

    Attributes
    ----------
    runs : callable
        ``runs(setups, settings, seeds)``: the chapter's results for every seed of ``seeds``
        (in that order) under every seed-free setup of ``setups`` (:meth:`Setup.seed_free`),
        one tuple per setup, computed together (the main fits of all seeds in one batch;
        what the setups share, such as a FastICA their estimators both run, once).
        :func:`each_setup` makes one from a function of one setup.
    evidence : callable
        ``evidence(result)``: the fit a run's claims read, as
        :class:`hca.paper.claims.RunEvidence` (the domains whose FastICA rounding steered,
        and every domain's ICA solution), or as a string naming the steered domains
        (comma-separated; empty when none is).
    typical_key : callable
        ``typical_key(result)``: the number whose median the typical run is nearest to (its
        main fit's MIC; :func:`hca.paper.claims.typical_index`).
    """

    runs: Callable[[tuple[Setup, ...], S, tuple[int, ...]], tuple[tuple[R, ...], ...]]
    evidence: Callable[[R], Any]
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
        The book's analysis choices (the chapter's ``Settings``, a frozen dataclass with the
        fields of :class:`ChapterSettings`; called without arguments it gives the book's).
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

    @classmethod
    def from_runs(
        cls,
        key: str,
        settings: Callable[[], S],
        runs: Callable[[tuple[Setup, ...], S, tuple[int, ...]], tuple[tuple[R, ...], ...]],
        evidence: Callable[[R], Any],
        typical_key: Callable[[R], float],
        page: str | None = None,
    ) -> ChapterSpec[S, R]:
        """A chapter with an ensemble, declared by its ``runs`` alone: ``compute(setup,
        settings)`` is the run at the setup's own seed, taken from the ensemble's batch of
        that setup and the settings' other setups (so that what the setups share is computed
        once, and the run is the very object the ensemble holds for that seed)."""
        holder: list[ChapterSpec[S, R]] = []

        def compute(setup: Setup, st: S) -> R:
            chapter = holder[0]
            first = chapter.seeds(st)
            if setup.ica_seed in first:  # the ensemble's own run (computed once for both)
                return chapter.runs(setup, st)[first.index(setup.ica_seed)]
            return chapter.runs(setup, st, seeds=(setup.ica_seed,))[0]

        compute.__qualname__ = compute.__name__ = f"{key}_compute"
        spec = cls(
            key=key,
            settings=settings,
            compute=compute,
            ensemble=EnsembleSpec(runs=runs, evidence=evidence, typical_key=typical_key),
            page=page,
        )
        holder.append(spec)
        return spec

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

    def book_settings(self) -> S:
        """The book's settings (the ``Settings`` defaults)."""
        return self.settings()

    def run(self, setup: str | Setup = "careful", settings: S | None = None) -> R:
        """The chapter's results under ``setup`` (default settings: the book's), computed once
        per process (:func:`hca.paper.cache.cached`; a read-only copy)."""
        st = self.settings() if settings is None else settings
        check_settings(st, ensemble=self.ensemble is not None)
        return cached(self.key, self.compute, get_setup(setup), st)

    def seeds(self, settings: S | None = None, more: bool = False) -> tuple[int, ...]:
        """The FastICA seeds of the chapter's ensemble under ``settings``: ``0 .. n_seeds - 1``,
        or ``0 .. n_seeds_more - 1`` with ``more`` (they start with the first ones).

        Raises
        ------
        ValueError
            If the chapter has no ensemble.
        """
        if self.ensemble is None:
            raise ValueError(f"chapter {self.key!r} has no ensemble (no fit with a random start)")
        st: Any = self.settings() if settings is None else settings
        check_settings(st, ensemble=True)
        return tuple(range(int(st.n_seeds_more if more else st.n_seeds)))

    def runs(
        self,
        setup: str | Setup,
        settings: S | None = None,
        *,
        seeds: Sequence[int] | None = None,
        more: bool = False,
    ) -> tuple[R, ...]:
        """The chapter's results under ``setup`` for every FastICA seed of its ensemble
        (:meth:`seeds`; or of ``seeds``), :meth:`Setup.with_seed`, computed together once per
        process. The setups of the settings (``settings.setups``) are one batch: asking for
        one computes all of them, so what they share is computed once. With ``more``, the
        seeds of the larger ensemble beyond the first ones are a second batch, after them.

        Raises
        ------
        ValueError
            If the chapter has no ensemble.
        """
        if self.ensemble is None:
            raise ValueError(f"chapter {self.key!r} has no ensemble (no fit with a random start)")
        st: Any = self.settings() if settings is None else settings
        check_settings(st, ensemble=True)
        if seeds is not None and more:
            raise ValueError("runs: give seeds or more, not both")
        if seeds is None:
            first = self.seeds(st)
            if more:
                return self.runs(setup, st, seeds=first) + self.runs(
                    setup, st, seeds=self.seeds(st, more=True)[len(first) :]
                )
            seeds = first
        seeds_ = tuple(int(s) for s in seeds)
        free = get_setup(setup).seed_free()
        group = tuple(get_setup(name).seed_free() for name in st.setups)
        group = group if free in group else (free,)
        # only this setup's runs are copied for the caller
        return cached_item(
            f"{self.key}_runs", self.ensemble.runs, group.index(free), group, st, seeds_
        )
