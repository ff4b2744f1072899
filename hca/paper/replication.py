"""The paper's frames and shared fits used by every chapter, under either setup.

A chapter never builds its data or refits the paper's main model by itself: it asks for them
here, with the setup (:mod:`hca.paper.setups`) it is computing, so that two chapters showing
the same fit show the same object. The frames (:func:`v2_frame`, :func:`v1_frame`, ...) and
fits (:func:`main_fits`, :func:`seed_refits`) are computed once per process
(:func:`hca.paper.cache.cached`); :func:`fit_v2` / :func:`fit_v1` fit any frame and domains;
:func:`filter_below_base` is Appendix H.3's filter.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from sklearn.exceptions import ConvergenceWarning

from hca.attribution.authors import v1_frame_authors, v2_frame_authors
from hca.attribution.domains import attach_domains, load_v1_domains, load_v2_domains
from hca.data.frames import domain_data
from hca.data.loaders import load_leaderboard_v2, load_leaderboard_v2_final_html
from hca.data.registry import V1_BENCHMARKS, V2_BENCHMARKS
from hca.estimator.model import HCA
from hca.paper.cache import cached
from hca.paper.constants import (
    PAPER_PATTERNS,
    PAPER_V1_SINV,
    PAPER_V2_FOUR,
    PAPER_V2_PRETRAINED,
    PAPER_V2_SINV,
)
from hca.paper.setups import Setup, get_setup
from hca.stability import (
    StabilityResult,
    domain_icas,
    ica_reproducible_many,
    reversed_rows,
    seed_fits,
    seed_stability,
)
from hca.validation import check_frame

__all__ = [
    "estimator",
    "main_data",
    "main_fit",
    "main_fits",
    "main_fits_steered",
    "rounding_steered",
    "seed_refits",
    "v2_frame",
    "v1_frame",
    "v2_authors",
    "final_html",
    "v2_final_frame",
    "domain_data",
    "fit_v2",
    "fit_v1",
    "BaseFilter",
    "filter_below_base",
]


def final_html() -> pd.DataFrame:
    """The final v2 table (:func:`hca.data.loaders.load_leaderboard_v2_final_html`), parsed
    once per process for every frame that adds its models (a read-only copy)."""
    return cached("v2_final_html", load_leaderboard_v2_final_html)


def _v2_authors_compute(final_table: bool, keep_duplicates: bool) -> pd.DataFrame:
    return v2_frame_authors(
        include_final=final_table,
        dedupe=not keep_duplicates,
        final=final_html() if final_table else None,
    )


def v2_frame(setup: str | Setup | None = None) -> pd.DataFrame:
    """The v2 leaderboard with base-model domains in ``base_model`` (a fresh copy).

    ``None`` or ``"careful"``: this book's attribution, one row per model, the CSV.
    ``"authors"``: the authors' rule on the CSV's rows (precision duplicates kept) plus the
    final table's score-only models; ``authors_label`` holds the authors' label of every row
    and ``base_model`` this book's name of the eight base models of Section 1.1.
    """
    if setup is None or get_setup(setup).domain_rule == "book":
        return cached("v2_frame", load_v2_domains)
    s = get_setup(setup)
    return cached("v2_frame_authors", _v2_authors_compute, s.final_table, s.keep_duplicates)


def v2_authors(include_final: bool = False, dedupe: bool = False) -> pd.DataFrame:
    """:func:`hca.attribution.authors.v2_frame_authors` computed once per process and
    arguments (a read-only copy; the authors' setup's table is ``v2_authors(True)``)."""
    return cached("v2_frame_authors", _v2_authors_compute, bool(include_final), not dedupe)


def _v2_final_compute() -> pd.DataFrame:
    return attach_domains(load_leaderboard_v2(include_final=True, final=final_html()))


def v2_final_frame() -> pd.DataFrame:
    """This book's attribution on the CSV plus the final table's score-only models
    (:func:`hca.attribution.attach_domains`), computed once per process (a read-only copy)."""
    return cached("v2_final_frame", _v2_final_compute)


def _v1_authors_compute(keep_duplicates: bool) -> pd.DataFrame:
    return v1_frame_authors(dedupe=not keep_duplicates)


def v1_frame(setup: str | Setup | None = None) -> pd.DataFrame:
    """The v1 leaderboard with base-model domains in ``base_model`` (a fresh copy).

    ``None`` or ``"careful"``: this book's attribution, one row per model.
    ``"authors"``: the authors' rule on every row of the v1 file (precision duplicates kept,
    :func:`hca.attribution.authors.v1_frame_authors`); ``authors_label`` holds the authors'
    label of every row and ``base_model`` this book's name of the six base models of
    Appendix H.4.
    """
    if setup is None or get_setup(setup).domain_rule == "book":
        return cached("v1_frame", load_v1_domains)
    return cached("v1_frame_authors", _v1_authors_compute, get_setup(setup).keep_duplicates)


def estimator(setup: str | Setup, n_components: int = 3, **params: Any) -> HCA:
    """The :class:`~hca.estimator.HCA` of ``setup`` (unfitted); ``params`` override it."""
    return HCA(n_components=n_components, **{**get_setup(setup).hca_params(), **params})


def main_data(
    setup: str | Setup, domains: Sequence[str] = PAPER_V2_FOUR
) -> tuple[pd.DataFrame, np.ndarray]:
    """Scores and domain labels of Section 4's fit: its four domains (:data:`PAPER_V2_FOUR`),
    or ``domains``."""
    return domain_data(v2_frame(setup), list(domains), V2_BENCHMARKS)


def _main_fits(
    setup: Setup, seeds: tuple[int, ...], domains: tuple[str, ...] = PAPER_V2_FOUR
) -> tuple[tuple[HCA, ...], tuple[str, ...]]:
    """The fits of :func:`main_fits` and their :func:`rounding_steered`: the FastICA of the
    fits and of the reversed rows in one batch per domain (:func:`hca.stability.domain_icas`)."""
    X, labels = main_data(setup, domains)
    est = estimator(setup)
    icas = domain_icas(est, [(X, labels), reversed_rows(X, labels)], seeds)
    fits = seed_fits(est, X, labels, seeds, icas=icas[0])
    return fits, rounding_steered(fits, X, labels, again=icas[1])


def _main_fits_cached(
    setup: str | Setup, seeds: Sequence[int], domains: Sequence[str]
) -> tuple[tuple[HCA, ...], tuple[str, ...]]:
    args: tuple = (get_setup(setup).seed_free(), tuple(int(s) for s in seeds))
    doms = tuple(str(d) for d in domains)
    if doms != PAPER_V2_FOUR:  # the book's fits keep their stored key
        args += (doms,)
    return cached("main_fits", _main_fits, *args)


def main_fits(
    setup: str | Setup, seeds: Sequence[int], domains: Sequence[str] = PAPER_V2_FOUR
) -> tuple[HCA, ...]:
    """Section 4's HCA fit on the four domains (or ``domains``) under ``setup`` for every
    FastICA seed of ``seeds`` (:meth:`Setup.with_seed`), in one batch
    (:func:`hca.stability.seed_fits`; computed once per process with
    :func:`main_fits_steered`, a read-only copy)."""
    return _main_fits_cached(setup, seeds, domains)[0]


def main_fit(setup: str | Setup, domains: Sequence[str] = PAPER_V2_FOUR) -> HCA:
    """Section 4's HCA fit on the four domains (or ``domains``) under ``setup`` (its seed;
    computed once per process)."""
    s = get_setup(setup)
    return main_fits(s, (s.ica_seed,), domains)[0]


def rounding_steered(
    models: Sequence[HCA], X: Any, domains: Any, again: Sequence[Any] | None = None
) -> tuple[str, ...]:
    """For every fitted HCA of ``models`` (fitted on ``X`` and ``domains``), the domains whose
    FastICA run was steered by rounding (:func:`hca.stability.ica_reproducible` is False),
    comma-separated; empty when the fit is evidence (:data:`hca.paper.claims.ENSEMBLE_RULE`).
    The reversed-row runs of all models are one batch
    (:func:`hca.stability.ica_reproducible_many`), or ``again`` when computed before."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        reps = ica_reproducible_many(models, X, domains, again=again)
    return tuple(", ".join(str(d) for d, ok in rep.items() if not ok) for rep in reps)


def main_fits_steered(
    setup: str | Setup, seeds: Sequence[int], domains: Sequence[str] = PAPER_V2_FOUR
) -> tuple[str, ...]:
    """:func:`rounding_steered` of every fit of :func:`main_fits` (computed with them)."""
    return _main_fits_cached(setup, seeds, domains)[1]


def _seed_refits(
    setup: Setup, seeds: tuple[int, ...], domains: tuple[str, ...] = PAPER_V2_FOUR
) -> StabilityResult:
    X, labels = main_data(setup, domains)
    return seed_stability(estimator(setup), X, labels, seeds=seeds, patterns=PAPER_PATTERNS)


def seed_refits(
    setup: str | Setup,
    seeds: Sequence[int] = tuple(range(10)),
    domains: Sequence[str] = PAPER_V2_FOUR,
) -> StabilityResult:
    """:func:`main_fit` (on ``domains``) refitted with every FastICA seed in ``seeds``
    (:class:`hca.stability.StabilityResult`; computed once per setup, seeds and domains)."""
    args: tuple = (get_setup(setup).seed_free(), tuple(int(s) for s in seeds))
    doms = tuple(str(d) for d in domains)
    if doms != PAPER_V2_FOUR:
        args += (doms,)
    return cached("seed_refits", _seed_refits, *args)


def fit_v2(
    domains: Sequence[str] = PAPER_V2_FOUR,
    n_components: int = 3,
    random_state: Any = 0,
    *,
    frame: pd.DataFrame | None = None,
    **hca_params: Any,
):
    """Fit :class:`hca.estimator.HCA` on v2's six normalized benchmarks in ``domains``.

    The default is the paper's Section 4 fit: Llama-3-8B, Llama-3.1-8B, Qwen2.5-7B and
    Qwen2.5-14B, three latent factors, on :func:`v2_frame`. ``frame`` fits another frame
    with a ``base_model`` column instead (e.g. :func:`filter_below_base` or
    :func:`v2_frame_authors`); ``hca_params`` go to :class:`~hca.estimator.HCA`
    (``residual``, ``n_restarts``, ...).
    """
    X, labels = domain_data(v2_frame() if frame is None else frame, domains, V2_BENCHMARKS)
    return HCA(n_components=n_components, random_state=random_state, **hca_params).fit(X, labels)


def fit_v1(
    domains: Sequence[str] = PAPER_V1_SINV,
    n_components: int = 3,
    random_state: Any = 0,
    *,
    frame: pd.DataFrame | None = None,
    **hca_params: Any,
):
    """Fit :class:`hca.estimator.HCA` on v1's six benchmarks in ``domains`` (Appendix H.4).

    ``frame`` fits another frame with a ``base_model`` column instead of :func:`v1_frame`.
    """
    X, labels = domain_data(v1_frame() if frame is None else frame, domains, V1_BENCHMARKS)
    return HCA(n_components=n_components, random_state=random_state, **hca_params).fit(X, labels)


# ----------------------------------------------------------------------------------------
# Appendix H.3: models fine-tuned "badly", below their base model
# ----------------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class BaseFilter:
    """Outcome of :func:`filter_below_base`.

    Attributes
    ----------
    frame : DataFrame
        The kept rows (all rows outside ``domains`` are kept).
    table : DataFrame
        Per domain: ``checkpoint``, its leaderboard ``base_average``, ``models`` before,
        ``removed`` and ``kept``.
    """

    frame: pd.DataFrame
    table: pd.DataFrame

    def summary(self) -> str:
        """One line per domain."""
        lines = ["Appendix H.3 filter: drop models whose average is below their base model's"]
        for dom, row in self.table.iterrows():
            lines.append(
                f"  {dom}: base {row['checkpoint']} average {row['base_average']:.2f}; "
                f"{row['removed']} of {row['models']} removed, {row['kept']} kept"
            )
        return "\n".join(lines)


def filter_below_base(
    frame: pd.DataFrame,
    domains: Sequence[str] = PAPER_V2_SINV,
    checkpoints: Mapping[str, str] | None = None,
) -> BaseFilter:
    """Remove "badly" fine-tuned models (Appendix H.3).

    Rule: in every domain, a model whose leaderboard ``average`` (the mean of the six
    normalized scores) is strictly below the ``average`` of the domain's official pretrained
    checkpoint (:data:`PAPER_V2_PRETRAINED`, matched case-insensitively on ``model_id``)
    is removed. The checkpoint itself is kept.

    Raises
    ------
    ValueError
        If ``frame`` lacks a needed column, or a domain's checkpoint has no row.
    """
    check_frame(frame, ["model_id", "base_model", "average"], context="filter_below_base")
    checkpoints = dict(PAPER_V2_PRETRAINED if checkpoints is None else checkpoints)
    ids = frame["model_id"].astype(str).str.lower()
    drop = pd.Series(False, index=frame.index)
    rows = []
    for dom in domains:
        if dom not in checkpoints:
            raise ValueError(f"filter_below_base: no official checkpoint known for {dom!r}")
        ref = frame.loc[ids == checkpoints[dom].lower(), "average"]
        if ref.empty:
            raise ValueError(
                f"filter_below_base: checkpoint {checkpoints[dom]!r} of domain "
                f"{dom!r} has no row in the frame"
            )
        base_avg = float(ref.iloc[0])
        in_dom = (frame["base_model"] == dom).fillna(False).astype(bool)
        below = in_dom & (frame["average"] < base_avg)
        drop |= below
        rows.append(
            {
                "domain": dom,
                "checkpoint": checkpoints[dom],
                "base_average": base_avg,
                "models": int(in_dom.sum()),
                "removed": int(below.sum()),
                "kept": int(in_dom.sum() - below.sum()),
            }
        )
    kept = frame.loc[~drop].copy()
    return BaseFilter(frame=kept, table=pd.DataFrame(rows).set_index("domain"))
