"""Claims of the paper and how a chapter's results are judged against them.

The paper's side of every claim (its sentence, value, criterion, kind, citation) lives only in
the packaged table ``paper_values.csv`` (:func:`hca.data.load_paper_values`). Our side is a
small *evaluator* registered next to the analysis that computes it, in the chapter's module
(``hca.paper.<chapter>``)::

    @claim("S4-order", chapter="recovery", figure="fig-recovery-graphs")
    def _order(res: RecoveryResults, rows: pd.DataFrame) -> dict[str, Outcome]: ...

An evaluator takes the chapter's results *for one setup* and the paper rows it answers, and
returns one :class:`Outcome` per row; the scorecard calls it once per setup
(:mod:`hca.paper.setups`) on the very objects the chapter notebook shows.

Verdicts are ``reproduced``, ``partly``, ``not reproduced``, ``not determined`` (a fit-based
claim whose runs land in FastICA optima that answer differently and that FastICA's own
objective cannot tell apart, so that rounding, not the data, picks the answer) and ``not
applicable`` (with the
reason: a sanity check rather than evidence, an erratum in the paper, a cell that is not
informative); the last two are counted apart. The helpers below implement the criteria's recurring rules (numeric tolerance
with its relative band, set equality, ratio bands, intervals, shares over seeds) so that every
chapter applies them the same way.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from hca.data.tables import parse_tolerance
from hca.estimator.ensemble import canonical_rows, same_solution
from hca.paper.words import count, join_words, k_of_n, median_range, seed_list, share_words

__all__ = [
    "VERDICTS",
    "KINDS",
    "CHAPTERS",
    "Outcome",
    "Stability",
    "Ensemble",
    "Optimum",
    "RunEvidence",
    "as_evidence",
    "OBJECTIVE",
    "SAME_OPTIMUM",
    "MAJOR_SHARE",
    "objective_order",
    "ENSEMBLE_RULE",
    "borderline_margin",
    "needs_more_runs",
    "ensemble_outcome",
    "typical_index",
    "ClaimSpec",
    "claim",
    "registered",
    "grade",
    "NEAR_ZERO",
    "RELATIVE_BAND",
    "in_relative_band",
    "numeric_verdict",
    "set_verdict",
    "ratio_band",
    "interval_verdict",
    "share_text",
    "paper_list",
]

#: The allowed verdicts, best first; "not determined" and "not applicable" are counted apart.
VERDICTS: tuple[str, ...] = (
    "reproduced",
    "partly",
    "not reproduced",
    "not determined",
    "not applicable",
)
#: Kinds of claim: an analysis of the data, or a value read off the leaderboard.
KINDS: tuple[str, ...] = ("analysis", "lookup")

#: Chapters with claims, in book order: key -> (notebook, title).
CHAPTERS: dict[str, tuple[str, str]] = {
    "data": ("01_data", "The data: base models (Section 1.1, Appendices B, H.4)"),
    "pca": ("02_latent_pca", "Latent capabilities and PCA (Section 2, Appendix E)"),
    "recovery": ("03_hca_recovery", "HCA recovery (Sections 3-4, Appendices C, H.1-H.3)"),
    "interpretation": (
        "04_interpretation",
        "Interpreting the factors (Section 4, Appendices D, H.1, I)",
    ),
    "scaling": ("05_scaling_ate", "Scaling laws and fine-tuning effects (Appendices D, F)"),
    "completion": ("06_matrix_completion", "Matrix completion (Remark 1, Appendix G)"),
    "v1": ("07_leaderboard_v1", "Leaderboard v1 (Appendix H.4)"),
    "mmlu": ("08_mmlu_subtasks", "MMLU by subject (Appendix H.5)"),
}


@dataclass(frozen=True)
class Stability:
    """How often a claim holds over refits: ``share`` of ``n_fits`` fits (``design`` says
    which resamples and seeds)."""

    share: float
    n_fits: int
    design: str

    def __post_init__(self):
        if not 0.0 <= self.share <= 1.0 or self.n_fits < 1:
            raise ValueError(
                f"Stability: share must be in [0, 1] and n_fits >= 1, got "
                f"{self.share!r}, {self.n_fits!r}"
            )

    def text(self) -> str:
        """``"holds in 74 of 200 refits (…)"``."""
        return f"holds in {share_words(self.share, self.n_fits, 'refits')} ({self.design})"


#: The rule that turns the verdicts of an ensemble's runs into the claim's verdict, fixed before
#: the ensembles were computed (CONTRIBUTING.md states it too; the fragile-fit steps are the
#: rule of 2026-11-29). The margins are those of :func:`borderline_margin`.
ENSEMBLE_RULE = (
    "every run counts; reproduced if at least 2/3 of the runs are reproduced; partly if at "
    "least 1/3 are reproduced or partly; else not reproduced; not applicable if at least half "
    "the runs are; read from twice as many runs (40 instead of 20) when a share of the first "
    "runs lies within two binomial standard errors (2 sqrt(2/9/20) = 0.21) of 2/3 or 1/3, or "
    "when one of them is rounding-sensitive (a domain's FastICA result changes when its models "
    "are listed in reverse order); borderline (flagged, verdict unchanged) when the final "
    "share lies within one (sqrt(2/9/runs)); where a domain is rounding-sensitive, its runs are "
    "grouped into FastICA optima: not determined when two optima holding at least 1/10 of the "
    "runs answer differently and FastICA's objective cannot tell them apart (the gap between "
    "their medians within the larger range of one), otherwise the verdict from all runs, with "
    "the optimum the objective prefers named"
)
_REPRODUCED_SHARE, _PARTLY_SHARE, _NA_SHARE = 2 / 3, 1 / 3, 1 / 2
#: What FastICA maximises in every domain (:attr:`hca.estimator.ica.DomainICA.objective`).
OBJECTIVE = "FastICA's negentropy approximation with G(u) = log cosh(u), summed over the sources"
#: Two ICA solutions are the same optimum when every unit-norm row of one has at least this
#: absolute cosine with a distinct row of the other (as :func:`hca.stability.ica_reproducible`).
SAME_OPTIMUM = 0.99
#: An optimum holding at least this share of the runs (and at least two runs) is *major*: only
#: major optima decide whether the optima answer differently.
MAJOR_SHARE = 1 / 10


def borderline_margin(runs: int) -> float:
    """One binomial standard error of a share of ``runs`` runs at the thresholds 1/3 and 2/3,
    ``sqrt((1/3)(2/3)/runs)`` (0.075 for 40 runs): the borderline margin of
    :data:`ENSEMBLE_RULE`."""
    if runs < 1:
        raise ValueError(f"borderline_margin: runs must be positive, got {runs}")
    return float(np.sqrt(_PARTLY_SHARE * _REPRODUCED_SHARE / runs))


@dataclass(frozen=True)
class Optimum:
    """The runs of an ensemble that land in one FastICA optimum of its fragile domains.

    Attributes
    ----------
    groups : tuple of (str, int)
        Per fragile domain, the number of the domain's solution (1: the one found first in
        seed order) the runs share.
    runs : int
        Runs in this optimum.
    fragile : int
        Of them, runs whose FastICA is rounding-sensitive.
    seeds : tuple of int
    objective : tuple of (str, float, float, float)
        Per fragile domain: the median, smallest and largest objective of the runs
        (:data:`OBJECTIVE`).
    share, share_partly : float
        Shares of the optimum's runs reproduced, and reproduced or partly.
    answer : str
        The verdict the ensemble rule gives to this optimum's runs alone.
    major : bool
        Holds at least :data:`MAJOR_SHARE` of the runs and at least two runs.
    """

    groups: tuple
    runs: int
    fragile: int
    seeds: tuple
    objective: tuple
    share: float
    share_partly: float
    answer: str
    major: bool

    def label(self) -> str:
        """``"Llama-2-70B optimum 2"`` (several fragile domains joined by "and")."""
        return " and ".join(f"{d} optimum {g}" for d, g in self.groups)

    def objective_text(self) -> str:
        """``"objective median 0.0123 (range 0.0121 to 0.0125)"`` per fragile domain."""
        parts = []
        for d, med, lo, hi in self.objective:
            rng = median_range(median=med, low=lo, high=hi, n=self.runs, what="", digits=6)
            prefix = f"{d}: " if len(self.objective) > 1 else ""
            parts.append(prefix + rng)
        return "objective " + "; ".join(parts)

    def text(self) -> str:
        """One sentence on the optimum: its runs, its objective and its answer."""
        k = round(self.share * self.runs)
        sensitive = f", {self.fragile} of them rounding-sensitive" if self.fragile else ""
        return (
            f"{self.label()[0].upper()}{self.label()[1:]} holds {count(self.runs, 'run')}"
            f"{sensitive}: {self.objective_text()}; reproduced in {k} of them, so it "
            f"answers {self.answer}"
        )


@dataclass(frozen=True)
class Ensemble:
    """How a fit-based claim's verdict was read from an ensemble of runs (one per seed).

    Attributes
    ----------
    runs : int
        Runs (FastICA seeds) in the ensemble.
    share : float
        Share of the runs whose own verdict is ``reproduced``.
    share_partly : float
        Share whose verdict is ``reproduced`` or ``partly``.
    rule : str
        :data:`ENSEMBLE_RULE`.
    seeds : tuple of int
    typical_seed : int
        The run shown as "a typical run": the one whose value is nearest the ensemble's median
        (or, without values, whose text is the most frequent), the smallest seed on ties.
    median, low, high : float or None
        Median and range of the runs' values (None when the claim has no value).
    borderline : str
        Empty, or which share lies within :func:`borderline_margin` of a threshold (flagged;
        the verdict is the rule's).
    fragile : int
        Runs whose evidence fit is rounding-sensitive (some domain's FastICA result changes
        when the domain's models are listed in reverse order;
        :func:`hca.stability.ica_reproducible`). They count like every other run.
    fragile_domains : tuple of (str, int)
        The domains that make runs rounding-sensitive, each with its number of runs.
    share_insensitive, share_partly_insensitive : float or None
        ``share`` and ``share_partly`` over the ``runs - fragile`` rounding-insensitive runs
        (None when there is none).
    optima : tuple of Optimum
        With rounding-sensitive runs: the FastICA optima of the fragile domains the runs land
        in (most runs first); empty otherwise.
    preferred : int or None
        Index in ``optima`` of the optimum FastICA's objective clearly prefers among the major
        optima that answer differently (None: they agree, or cannot be told apart).
    case : str
        Which step of the rule gave the verdict: ``"stable"`` (no fragile domain), ``"agree"``
        (every major optimum answers the same), ``"tie"`` (major optima answer differently
        and the objective cannot tell them apart: not determined) or ``"better"`` (they answer
        differently and one is clearly better).
    """

    runs: int
    share: float
    share_partly: float
    rule: str
    seeds: tuple
    typical_seed: int
    median: float | None = None
    low: float | None = None
    high: float | None = None
    borderline: str = ""
    fragile: int = 0
    fragile_domains: tuple = ()
    share_insensitive: float | None = None
    share_partly_insensitive: float | None = None
    optima: tuple = ()
    preferred: int | None = None
    case: str = "stable"

    @property
    def fragile_share(self) -> float:
        """Share of the runs whose evidence fit is rounding-sensitive."""
        return self.fragile / self.runs if self.runs else 0.0

    @property
    def not_determined(self) -> bool:
        """Whether major optima answer differently and FastICA's objective cannot tell them
        apart (the claim's verdict is then "not determined")."""
        return self.case == "tie"

    def fragile_text(self) -> str:
        """``"Llama-2-70B's FastICA is rounding-sensitive in 22 of the 40 runs"`` (or that no
        run is)."""
        if not self.fragile:
            return f"no run of the {self.runs} is rounding-sensitive"
        where = ", ".join(f"{d} in {c}" for d, c in self.fragile_domains)
        return f"{k_of_n(self.fragile, self.runs)} runs are rounding-sensitive" + (
            f" ({where})" if where else ""
        )

    def shares_text(self) -> str:
        """``"reproduced in 19 of 20 runs, at least partly in 20"``."""
        n = self.runs
        k, kp = round(self.share * n), round(self.share_partly * n)
        return f"reproduced in {k_of_n(k, n, 'runs')}, at least partly in {kp}"

    def value_text(self) -> str:
        """``"median 0.037 (range 0.036 to 0.072) over 20 runs"`` (empty without values)."""
        if self.median is None or self.low is None or self.high is None:
            return ""
        return median_range(median=self.median, low=self.low, high=self.high, n=self.runs)

    def optima_text(self) -> str:
        """The optima in plain words (empty without rounding-sensitive runs)."""
        if not self.optima:
            return ""
        doms = sorted({d for o in self.optima for d, _ in o.groups})
        head = f"{join_words(doms)}'s FastICA lands in {len(self.optima)} optima. "
        body = ". ".join(o.text() for o in self.optima)
        if self.case == "tie":
            tail = "FastICA's objective cannot tell the optima that answer differently apart"
        elif self.case == "better" and self.preferred is not None:
            best = self.optima[self.preferred]
            tail = (
                f"FastICA's objective clearly prefers {best.label()}, whose runs answer "
                f"{best.answer}"
            )
        else:
            tail = "every optimum holding at least a tenth of the runs answers the same"
        return f"{head}{body}. {tail[0].upper()}{tail[1:]}"

    def text(self) -> str:
        """The ensemble in plain words: the runs' shares, their value, rounding, optima."""
        out = [f"Over {self.runs} FastICA runs ({seed_list(self.seeds)}): {self.shares_text()}"]
        v = self.value_text()
        if v:
            out.append(f"The value: {v}")
        out.append(self.fragile_text()[0].upper() + self.fragile_text()[1:])
        o = self.optima_text()
        if o:
            out.append(o)
        return ". ".join(out)


@dataclass(frozen=True)
class Outcome:
    """Our side of one claim under one setup.

    Attributes
    ----------
    ours : str
        Our value as shown (with an interval or a seed share where there is one).
    verdict : str
        One of :data:`VERDICTS`.
    reason : str
        One line: why this verdict.
    value : float or None
        The number the verdict rests on, where there is one (for tests and glue).
    stability : Stability or None
        For the headline claims: the share of refits in which the claim holds.
    ensemble : Ensemble or None
        For a claim read from a fit with a random start: the ensemble of runs its verdict
        comes from (:func:`ensemble_outcome`).
    """

    ours: str
    verdict: str
    reason: str
    value: float | None = None
    stability: Stability | None = None
    ensemble: Ensemble | None = None

    def __post_init__(self):
        if self.verdict not in VERDICTS:
            raise ValueError(f"verdict must be one of {VERDICTS}, got {self.verdict!r}")
        if not str(self.ours).strip():
            raise ValueError("ours must not be empty")
        if not str(self.reason).strip():
            raise ValueError("reason must not be empty")


@dataclass(frozen=True)
class ClaimSpec:
    """A registered evaluator: the paper rows it answers and where the book shows them."""

    chapter: str
    ids: tuple[str, ...]
    prefix: str | None
    figure: str | None
    fn: Callable[[Any, pd.DataFrame], Mapping[str, Outcome]]
    ensemble: bool = False
    evidence: Callable[[Any], str] | None = None

    @property
    def name(self) -> str:
        return f"{self.fn.__module__}.{self.fn.__name__}"

    def rows(self, paper: pd.DataFrame) -> pd.DataFrame:
        """The rows of ``paper`` (indexed by id) this evaluator answers."""
        if self.prefix is not None:
            return paper[paper["id"].str.startswith(self.prefix)]
        return paper.loc[[i for i in self.ids if i in paper.index]]


_REGISTRY: list[ClaimSpec] = []


def claim(
    *ids: str,
    chapter: str,
    prefix: str | None = None,
    figure: str | None = None,
    ensemble: bool = False,
    evidence: Callable[[Any], str] | None = None,
):
    """Register an evaluator of ``chapter`` for the paper rows ``ids`` (or every id starting
    with ``prefix``); ``figure`` is the anchor (``name:``) of the book figure showing them.

    ``ensemble=True`` marks claims read from a fit with a random start (FastICA): the
    scorecard evaluates them on the chapter's results for every seed of
    its ensemble (the settings' ``n_seeds``, :meth:`hca.paper.shape.ChapterSpec.seeds`) and
    reads the verdict with
    :func:`ensemble_outcome`. ``evidence(results)`` gives the fit the claim reads in a run,
    as :class:`RunEvidence` (its rounding-sensitive domains and every domain's FastICA
    solution and objective; a string naming the domains is accepted where none is
    rounding-sensitive); without it the chapter's :attr:`hca.paper.shape.EnsembleSpec.evidence`
    is used."""
    if chapter not in CHAPTERS:
        raise ValueError(f"unknown chapter {chapter!r}; known: {list(CHAPTERS)}")
    if bool(ids) == (prefix is not None):
        raise ValueError("claim() takes either ids or a prefix")

    def wrap(fn):
        spec = ClaimSpec(chapter, tuple(ids), prefix, figure, fn, ensemble, evidence)
        _REGISTRY[:] = [s for s in _REGISTRY if s.name != spec.name]  # re-import replaces
        _REGISTRY.append(spec)
        return fn

    return wrap


def registered(chapter: str | None = None) -> list[ClaimSpec]:
    """The registered evaluators (of one chapter), in registration order."""
    return [s for s in _REGISTRY if chapter is None or s.chapter == chapter]


# =========================================================================== verdict rules
def grade(ok: bool, partly: bool) -> str:
    """``reproduced`` if ``ok``, else ``partly`` if ``partly``, else ``not reproduced``."""
    return "reproduced" if ok else ("partly" if partly else "not reproduced")


#: A paper value at most this large in size is "near zero": judged on absolute tolerances only.
NEAR_ZERO: float = 0.05
#: Ratio band ``ours / paper`` outside which no numeric claim with ``|paper| > NEAR_ZERO`` is
#: reproduced or partly (whatever its absolute tolerance).
RELATIVE_BAND: tuple[float, float] = (0.4, 2.5)


def in_relative_band(ours: float | None, paper: float) -> bool:
    """Whether ``ours`` may count as reproducing ``paper`` on the relative rule: always when
    ``|paper| <= NEAR_ZERO`` (near zero: only the absolute tolerance applies), otherwise when
    ``ours / paper`` lies in :data:`RELATIVE_BAND` (which also requires the same sign)."""
    if ours is None or not np.isfinite(ours):
        return False
    if abs(float(paper)) <= NEAR_ZERO + 1e-12:
        return True
    lo, hi = RELATIVE_BAND
    return lo - 1e-12 <= float(ours) / float(paper) <= hi + 1e-12


def numeric_verdict(ours: float | None, paper: float, tolerance: str) -> tuple[str, str]:
    """Verdict of ``|ours - paper|`` against ``tolerance = "<reproduced>/<partly>"`` and its
    reason (``ours − paper = +0.012``).

    ``reproduced`` or ``partly`` also needs :func:`in_relative_band`, so that an absolute
    tolerance never passes a value a small fraction or a large multiple of the paper's; near
    zero (a ratio to a number that small says nothing) the reason says that the absolute
    tolerance alone decided.
    """
    a, b = parse_tolerance(tolerance)
    if ours is None or not np.isfinite(ours):
        return "not reproduced", "no value of ours"
    diff = float(ours) - float(paper)
    v = grade(abs(diff) <= a + 1e-12, abs(diff) <= b + 1e-12)
    digits = 4 if a < 0.01 else 3
    reason = f"ours − paper = {diff:+.{digits}f}"
    if abs(float(paper)) <= NEAR_ZERO + 1e-12:
        return v, f"{reason} (paper value near zero, |paper| ≤ {NEAR_ZERO}: absolute tolerance)"
    if v != "not reproduced" and not in_relative_band(ours, paper):
        lo, hi = RELATIVE_BAND
        return "not reproduced", (
            f"{reason}, but ours/paper = {float(ours) / float(paper):.2f} lies outside {lo}-{hi}"
        )
    return v, reason


def set_verdict(ours: Iterable, paper: Iterable) -> str:
    """Same set -> reproduced; one member added, missing or swapped -> partly."""
    o, p = set(ours), set(paper)
    if o == p:
        return "reproduced"
    if len(o ^ p) <= 1 or (len(o - p) == 1 and len(p - o) == 1):
        return "partly"
    return "not reproduced"


def ratio_band(
    ours: float, paper: float, inner: float = 0.25, outer: tuple[float, float] = (0.5, 2.0)
) -> str:
    """Where ``ours`` lies relative to ``paper``: ``"inner"`` (same sign, within
    ``inner x |paper|``), ``"outer"`` (same sign, ratio in ``outer``) or ``"outside"``."""
    if not (np.isfinite(ours) and np.isfinite(paper)) or paper == 0:
        return "outside"
    if np.sign(ours) != np.sign(paper):
        return "outside"
    if abs(ours - paper) <= inner * abs(paper) + 1e-12:
        return "inner"
    ratio = ours / paper
    return "outer" if outer[0] <= ratio <= outer[1] else "outside"


def interval_verdict(
    point: float, ci95: Sequence[float], ci80: Sequence[float], sign: int = 1
) -> str:
    """A claimed positive (``sign=1``) or negative (``sign=-1``) effect judged by its
    intervals: the 95 % interval excludes 0 on the claimed side -> reproduced; the point and
    the 80 % interval do -> partly; otherwise (an interval that straddles 0) not reproduced."""
    lo95, hi95 = (sign * x for x in ci95)
    lo80, hi80 = (sign * x for x in ci80)
    lo95, lo80 = min(lo95, hi95), min(lo80, hi80)
    return grade(lo95 > 0, sign * point > 0 and lo80 > 0)


def share_text(k: int, n: int, what: str = "FastICA seeds") -> str:
    """``"7 of 10 FastICA seeds"`` (a share of a run set as "k of n", never a percentage)."""
    return k_of_n(k, n, what) if n else f"no {what}"


def paper_list(rows: pd.DataFrame, cid: str) -> list[str]:
    """The ``;``-separated ``value`` of paper row ``cid`` as a list."""
    return [s for s in rows.loc[cid, "value"].split(";") if s]


# =========================================================================== ensembles
def _typical(outcomes: Sequence[Outcome], values: np.ndarray | None) -> int:
    """Index of the typical run (see :class:`Ensemble`)."""
    if values is not None:
        med = float(np.median(values))
        return int(np.argmin(np.abs(values - med)))  # first (smallest seed) on ties
    texts = [o.ours for o in outcomes]
    counts = {t: texts.count(t) for t in texts}
    top = max(counts.values())
    return next(i for i, t in enumerate(texts) if counts[t] == top)


def typical_index(keys: Sequence[float]) -> int:
    """Index of the run whose ``key`` (e.g. its fit's MIC) is nearest the median of all runs'
    keys; the first (smallest seed) on ties."""
    k = np.asarray(keys, dtype=float)
    if k.size == 0 or not np.all(np.isfinite(k)):
        raise ValueError("typical_index: keys must be finite and non-empty")
    return int(np.argmin(np.abs(k - np.median(k))))


_SEED0 = re.compile(r"\bseed([- ])0\b")


def _relabel(o: Outcome, seed: int) -> Outcome:
    """Evaluators call the run they judge "seed 0" (the setup's own seed); name the run's
    seed instead."""
    if seed == 0:
        return o
    sub = lambda text: _SEED0.sub(lambda m: f"seed{m.group(1)}{seed}", text)  # noqa: E731
    return replace(o, ours=sub(o.ours), reason=sub(o.reason))


def _near_thresholds(verdicts: Sequence[str], z: float) -> list[str]:
    """Which of the two shares lies within ``z`` binomial standard errors of its threshold."""
    n = len(verdicts)
    share = verdicts.count("reproduced") / n
    share_partly = share + verdicts.count("partly") / n
    m = z * borderline_margin(n)
    return [
        f"{what} in {share_words(x, n, 'runs')}, within {m:.3f} of {label}"
        for what, x, t, label in (
            ("reproduced", share, _REPRODUCED_SHARE, "2/3"),
            ("at least partly", share_partly, _PARTLY_SHARE, "1/3"),
        )
        if abs(x - t) < m - 1e-12
    ]


def needs_more_runs(verdicts: Sequence[str], more: int, fragile: int = 0) -> bool:
    """Whether an ensemble is read from ``more`` runs instead (:data:`ENSEMBLE_RULE`):
    ``verdicts`` are the verdicts of its runs and ``fragile`` how many of them have a
    rounding-sensitive fit. Fewer runs than ``more``, and either a rounding-sensitive run or
    a share within two binomial standard errors of 2/3 or 1/3 (unless at least half the
    runs are not applicable)."""
    n = len(verdicts)
    if n >= more:
        return False
    if fragile:
        return True
    if n == 0 or verdicts.count("not applicable") / n >= _NA_SHARE:
        return False
    return bool(_near_thresholds(verdicts, 2.0))


def _ensemble_verdict(verdicts: Sequence[str]) -> tuple[str, str]:
    """The verdict of :data:`ENSEMBLE_RULE` from the runs' verdicts, and the borderline
    flag (empty when no share lies within one standard error of its threshold)."""
    n = len(verdicts)
    if verdicts.count("not applicable") / n >= _NA_SHARE:
        return "not applicable", ""
    share = verdicts.count("reproduced") / n
    share_partly = share + verdicts.count("partly") / n
    verdict = grade(share >= _REPRODUCED_SHARE - 1e-12, share_partly >= _PARTLY_SHARE - 1e-12)
    return verdict, "; ".join(_near_thresholds(verdicts, 1.0))


@dataclass(frozen=True, eq=False)
class RunEvidence:
    """The fit a run's claims read, as far as the ensemble rule needs it.

    Attributes
    ----------
    fragile : tuple of str
        The domains whose FastICA in this fit is rounding-sensitive (its result changes when
        the domain's models are listed in reverse order).
    solutions : dict
        Domain -> ``(rows, objective)``: the fit's unmixing rows of the domain
        (:func:`hca.stability.canonical_rows`) and FastICA's objective there
        (:data:`OBJECTIVE`). Needed for every fragile domain.
    """

    fragile: tuple = ()
    solutions: Mapping[str, tuple[np.ndarray, float]] = field(default_factory=dict)

    @classmethod
    def of(cls, model: Any, fragile: Any) -> RunEvidence:
        """The evidence of a fitted :class:`hca.estimator.HCA` ``model``: ``fragile`` names
        its rounding-sensitive domains (a comma-separated string, an iterable of names, or
        the dict of :func:`hca.stability.ica_reproducible`, domain -> reproducible)."""
        if isinstance(fragile, Mapping):
            names = tuple(str(d) for d, ok in fragile.items() if not ok)
        elif isinstance(fragile, str):
            names = tuple(d.strip() for d in fragile.split(",") if d.strip())
        else:
            names = tuple(str(d) for d in fragile)
        solutions = {
            str(d): (canonical_rows(np.asarray(ica.unmixing, dtype=float)), float(ica.objective))
            for d, ica in model.ica_.items()
        }
        return cls(names, solutions)


def as_evidence(value: Any) -> RunEvidence:
    """A claim's evidence as :class:`RunEvidence` (a string names the rounding-sensitive
    domains of a run without their solutions)."""
    if isinstance(value, RunEvidence):
        return value
    if isinstance(value, str):
        return RunEvidence(tuple(d.strip() for d in value.split(",") if d.strip()))
    raise TypeError(f"evidence must be a RunEvidence or a string, got {type(value).__name__}")


def _fragile_domains(evidence: Sequence[RunEvidence]) -> tuple[tuple[str, int], ...]:
    """``(("Llama-2-70B", 22),)``: each rounding-sensitive domain with its number of runs,
    most runs first."""
    counts: dict[str, int] = {}
    for e in evidence:
        for d in e.fragile:
            counts[d] = counts.get(d, 0) + 1
    return tuple(sorted(counts.items(), key=lambda kv: -kv[1]))


def _shares(verdicts: Sequence[str]) -> tuple[float, float]:
    n = len(verdicts)
    k = verdicts.count("reproduced")
    return k / n, (k + verdicts.count("partly")) / n


def _groups(evidence: Sequence[RunEvidence], domains: Sequence[str]) -> list[tuple]:
    """Per run, the number of its solution in every domain of ``domains`` (1: the solution
    found first in seed order), by the test of :func:`hca.stability.ica_reproducible`."""
    labels: list[list[int]] = [[] for _ in evidence]
    for d in domains:
        found: list[np.ndarray] = []
        for i, e in enumerate(evidence):
            if d not in e.solutions:
                raise ValueError(
                    f"ensemble: domain {d!r} is rounding-sensitive but run {i} does not give "
                    "its ICA solution (RunEvidence.solutions)"
                )
            rows = e.solutions[d][0]
            k = next(
                (j for j, ref in enumerate(found) if same_solution(rows, ref, SAME_OPTIMUM)),
                None,
            )
            if k is None:
                found.append(rows)
                k = len(found) - 1
            labels[i].append(k + 1)
    return [tuple(zip(domains, lab)) for lab in labels]


def _optima(
    verdicts: Sequence[str], seeds: Sequence[int], evidence: Sequence[RunEvidence]
) -> tuple[tuple[Optimum, ...], int | None, str]:
    """The optima of the fragile domains, the index of the one the objective clearly prefers
    (or None) and the rule's case (see :class:`Ensemble`)."""
    domains = [d for d, _ in _fragile_domains(evidence)]
    if not domains:
        return (), None, "stable"
    groups = _groups(evidence, domains)
    n = len(verdicts)
    members: dict[tuple, list[int]] = {}
    for i, g in enumerate(groups):
        members.setdefault(g, []).append(i)
    optima = []
    for g, idx in sorted(members.items(), key=lambda kv: (-len(kv[1]), kv[1][0])):
        vs = [verdicts[i] for i in idx]
        share, share_partly = _shares(vs)
        objective = []
        for d in domains:
            obj = np.array([evidence[i].solutions[d][1] for i in idx], dtype=float)
            objective.append((d, float(np.median(obj)), float(obj.min()), float(obj.max())))
        optima.append(
            Optimum(
                groups=g,
                runs=len(idx),
                fragile=sum(bool(evidence[i].fragile) for i in idx),
                seeds=tuple(int(seeds[i]) for i in idx),
                objective=tuple(objective),
                share=share,
                share_partly=share_partly,
                answer=_ensemble_verdict(vs)[0],
                major=len(idx) >= 2 and len(idx) >= MAJOR_SHARE * n - 1e-12,
            )
        )
    major = [k for k, o in enumerate(optima) if o.major]
    if len({optima[k].answer for k in major}) <= 1:
        return tuple(optima), None, "agree"
    # major optima answer differently: which of them does the objective clearly prefer?
    better: dict[int, set[int]] = {k: set() for k in major}
    tie = False
    for a in major:
        for b in major:
            if a >= b or optima[a].answer == optima[b].answer:
                continue
            cmp = _compare(optima[a], optima[b])
            if cmp == 0:
                tie = True
            else:
                better[a if cmp > 0 else b].add(b if cmp > 0 else a)
    if tie:
        return tuple(optima), None, "tie"
    best = max(major, key=lambda k: (len(better[k]), -k))
    return tuple(optima), best, "better"


def _compare(a: Optimum, b: Optimum) -> int:
    """+1 when FastICA's objective clearly prefers ``a``, -1 when it prefers ``b``, 0 when it
    cannot tell them apart: in every fragile domain where they differ, the gap between their
    medians is at most the larger of their ranges (CONTRIBUTING.md, the rule of 2026-11-29)."""
    signs = set()
    for (_, ga), (_, gb), oa, ob in zip(a.groups, b.groups, a.objective, b.objective):
        if ga == gb:
            continue
        sign = objective_order(oa[1:], ob[1:])
        if sign == 0:
            return 0
        signs.add(sign)
    return signs.pop() if len(signs) == 1 else 0


def objective_order(a: Sequence[float], b: Sequence[float]) -> int:
    """Which of two groups of FastICA runs the objective clearly prefers, from their
    ``(median, low, high)``: +1 for ``a``, -1 for ``b``, 0 when the gap between the medians is
    at most the larger of the two ranges (the spread within one optimum; the rule of
    2026-11-29)."""
    (ma, la, ha), (mb, lb, hb) = a, b
    gap = float(ma) - float(mb)
    if abs(gap) <= max(float(ha) - float(la), float(hb) - float(lb)):
        return 0
    return 1 if gap > 0 else -1


def ensemble_outcome(
    outcomes: Sequence[Outcome],
    seeds: Sequence[int],
    typical: int | None = None,
    evidence: Sequence[Any] | None = None,
    show_value: bool = True,
) -> Outcome:
    """One claim's outcome from its outcomes on an ensemble of runs (one per seed).

    The verdict follows :data:`ENSEMBLE_RULE`; every run counts in the shares, median and
    range. ``evidence`` gives, per run, the fit the claim reads (:class:`RunEvidence`, or a
    string naming the run's rounding-sensitive domains; a run with such a domain needs the
    domain's ICA solution, so that its optimum can be found). ``ours`` gives the ensemble's
    median and range (or shares) and the typical run's value with its seed; ``reason`` the
    shares behind the verdict, the optima where rounding matters, and the typical run's
    reason; ``value`` is the runs' median value (else the typical run's); the typical run's
    ``stability`` is kept. ``typical`` is the index of the typical run (the chapter's,
    :func:`typical_index`); by default the run whose value is nearest the median (or whose
    text is the most frequent). ``show_value=False`` (a claim whose value is not the paper's
    number but a count or a flag behind its verdict) keeps the median and range in
    :class:`Ensemble` but leaves them out of ``ours`` and ``reason``, which then lead with the
    runs' shares.

    Raises
    ------
    ValueError
        If ``outcomes`` is empty or its length differs from ``seeds``' or ``evidence``'s.
    """
    n = len(outcomes)
    if n == 0 or n != len(seeds):
        raise ValueError(f"ensemble_outcome: {n} outcomes for {len(seeds)} seeds")
    ev = [RunEvidence()] * n if evidence is None else [as_evidence(w) for w in evidence]
    if len(ev) != n:
        raise ValueError(f"ensemble_outcome: {n} outcomes for {len(ev)} evidence entries")
    outcomes = [_relabel(o, int(sd)) for o, sd in zip(outcomes, seeds)]
    verdicts = [o.verdict for o in outcomes]
    share, share_partly = _shares(verdicts)
    calm = [v for v, w in zip(verdicts, ev) if not w.fragile]
    share_i, share_partly_i = _shares(calm) if calm else (None, None)
    vals = [o.value for o in outcomes]
    numeric = all(v is not None and np.isfinite(v) for v in vals)
    values = np.array(vals, dtype=float) if numeric else None
    t = _typical(outcomes, values) if typical is None else int(typical)
    verdict, borderline = _ensemble_verdict(verdicts)
    optima, preferred, case = _optima(verdicts, seeds, ev)
    ens = Ensemble(
        runs=n,
        share=share,
        share_partly=share_partly,
        rule=ENSEMBLE_RULE,
        seeds=tuple(int(s) for s in seeds),
        typical_seed=int(seeds[t]),
        median=float(np.median(values)) if values is not None else None,
        low=float(values.min()) if values is not None else None,
        high=float(values.max()) if values is not None else None,
        borderline=borderline,
        fragile=sum(bool(w.fragile) for w in ev),
        fragile_domains=_fragile_domains(ev),
        share_insensitive=share_i,
        share_partly_insensitive=share_partly_i,
        optima=optima,
        preferred=preferred,
        case=case,
    )
    typical_o = outcomes[t]
    if ens.not_determined:
        ens = replace(ens, borderline="")
        verdict = "not determined"
        head = (
            "Not determined by these data: the FastICA optima of the rounding-sensitive "
            "domain answer differently, and FastICA's objective cannot tell them apart, so "
            "rounding, not the data, picks the answer"
        )
    elif verdict == "not applicable":
        k = verdicts.count("not applicable")
        head = f"Not applicable in {k_of_n(k, n, 'runs')}, at least half of them"
    else:
        rule = "reproduced from 2/3 of the runs, partly from 1/3 at least partly"
        head = f"{verdict[0].upper()}{verdict[1:]} by the ensemble rule ({rule})"
        if borderline:
            head += f"; borderline: {borderline}"
    body = ens.text() if show_value else replace(ens, median=None, low=None, high=None).text()
    reason = f"{head}. {body}. Typical run (seed {ens.typical_seed}): {typical_o.reason}"
    # one run set per sentence: the ensemble's, then the typical run's (which may name others)
    k = round(share * n)
    shown = show_value and ens.median is not None
    head = ens.value_text() if shown else f"reproduced in {k_of_n(k, n, 'runs')}"
    if ens.fragile:
        head += f"; rounding-sensitive in {k_of_n(ens.fragile, n, 'runs')}"
    ours = f"{head[0].upper()}{head[1:]}. Typical run (seed {ens.typical_seed}): {typical_o.ours}"
    return Outcome(
        ours=ours,
        verdict=verdict,
        reason=reason,
        value=ens.median if numeric else typical_o.value,
        stability=typical_o.stability,
        ensemble=ens,
    )
