"""Claims of the paper and how a chapter's results are judged against them.

The paper's side of every claim (its sentence, value, criterion, kind, citation) lives only in
the packaged table ``paper_values.csv`` (:func:`hca.data.load_paper_values`). Our side is a
small *evaluator* registered next to the analysis that computes it, in the chapter's module
(``hca.paper.<chapter>``)::

    @claim("S4-order", chapter="recovery", figure="fig-recovery-graphs")
    def _order(res: RecoveryResults, rows: pd.DataFrame) -> dict[str, Outcome]:
        ...

An evaluator takes the chapter's results *for one setup* and the paper rows it answers, and
returns one :class:`Outcome` per row; the scorecard calls it once per setup
(:mod:`hca.paper.setups`) on the very objects the chapter notebook shows.

Verdicts are ``reproduced``, ``partly``, ``not reproduced`` and ``not applicable`` (with the
reason: a sanity check rather than evidence, an erratum in the paper, a cell that is not
informative). The helpers below implement the criteria's recurring rules (numeric tolerance
with its relative band, set equality, ratio bands, intervals, shares over seeds) so that every
chapter applies them the same way.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from hca.data.tables import parse_tolerance

__all__ = [
    "VERDICTS",
    "KINDS",
    "CHAPTERS",
    "Outcome",
    "Stability",
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

#: The allowed verdicts, best first; "not applicable" is counted apart.
VERDICTS: tuple[str, ...] = ("reproduced", "partly", "not reproduced", "not applicable")
#: Kinds of claim: an analysis of the data, or a value read off the leaderboard.
KINDS: tuple[str, ...] = ("analysis", "lookup")

#: Chapters with claims, in book order: key -> (notebook, title).
CHAPTERS: dict[str, tuple[str, str]] = {
    "data": ("01_data", "The data: base models (Section 1.1, Appendices B, H.4)"),
    "pca": ("02_latent_pca", "Latent capabilities and PCA (Section 2, Appendix E)"),
    "recovery": ("03_hca_recovery", "HCA recovery (Sections 3-4, Appendices C, H.1-H.3)"),
    "interpretation": ("04_interpretation", "Interpreting the factors (Section 4, "
                                            "Appendices D, H.1, I)"),
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
            raise ValueError(f"Stability: share must be in [0, 1] and n_fits >= 1, got "
                             f"{self.share!r}, {self.n_fits!r}")

    def text(self) -> str:
        """``"holds in 37 % of 200 fits (…)"``."""
        return f"holds in {self.share:.0%} of {self.n_fits} fits ({self.design})"


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
    """

    ours: str
    verdict: str
    reason: str
    value: float | None = None
    stability: Stability | None = None

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

    @property
    def name(self) -> str:
        return f"{self.fn.__module__}.{self.fn.__name__}"

    def rows(self, paper: pd.DataFrame) -> pd.DataFrame:
        """The rows of ``paper`` (indexed by id) this evaluator answers."""
        if self.prefix is not None:
            return paper[paper["id"].str.startswith(self.prefix)]
        return paper.loc[[i for i in self.ids if i in paper.index]]


_REGISTRY: list[ClaimSpec] = []


def claim(*ids: str, chapter: str, prefix: str | None = None, figure: str | None = None):
    """Register an evaluator of ``chapter`` for the paper rows ``ids`` (or every id starting
    with ``prefix``); ``figure`` is the anchor (``name:``) of the book figure showing them."""
    if chapter not in CHAPTERS:
        raise ValueError(f"unknown chapter {chapter!r}; known: {list(CHAPTERS)}")
    if bool(ids) == (prefix is not None):
        raise ValueError("claim() takes either ids or a prefix")

    def wrap(fn):
        spec = ClaimSpec(chapter, tuple(ids), prefix, figure, fn)
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

    Two rules, both required for ``reproduced`` or ``partly``: the absolute tolerance, and,
    when the paper's value is not near zero (``|paper| > NEAR_ZERO``), the relative band
    (``ours / paper`` in :data:`RELATIVE_BAND`, 0.4 to 2.5), so that an absolute tolerance
    never passes a value a small fraction or a large multiple of the paper's. A paper value
    of at most 0.05 in size is near zero: there the absolute tolerance alone decides (a ratio
    to a number that small says nothing), and the reason says so.
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
        return "not reproduced", (f"{reason}, but ours/paper = {float(ours) / float(paper):.2f}"
                                  f" lies outside {lo}-{hi}")
    return v, reason


def set_verdict(ours: Iterable, paper: Iterable) -> str:
    """Same set -> reproduced; one member added, missing or swapped -> partly."""
    o, p = set(ours), set(paper)
    if o == p:
        return "reproduced"
    if len(o ^ p) <= 1 or (len(o - p) == 1 and len(p - o) == 1):
        return "partly"
    return "not reproduced"


def ratio_band(ours: float, paper: float, inner: float = 0.25,
               outer: tuple[float, float] = (0.5, 2.0)) -> str:
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


def interval_verdict(point: float, ci95: Sequence[float], ci80: Sequence[float],
                     sign: int = 1) -> str:
    """A claimed positive (``sign=1``) or negative (``sign=-1``) effect judged by its
    intervals: the 95 % interval excludes 0 on the claimed side -> reproduced; the point and
    the 80 % interval do -> partly; otherwise (an interval that straddles 0) not reproduced."""
    lo95, hi95 = (sign * x for x in ci95)
    lo80, hi80 = (sign * x for x in ci80)
    lo95, lo80 = min(lo95, hi95), min(lo80, hi80)
    return grade(lo95 > 0, sign * point > 0 and lo80 > 0)


def share_text(k: int, n: int, what: str = "FastICA seeds") -> str:
    """``"7 of 10 FastICA seeds (70 %)"``."""
    return f"{k} of {n} {what} ({k / n:.0%})" if n else f"0 {what}"


def paper_list(rows: pd.DataFrame, cid: str) -> list[str]:
    """The ``;``-separated ``value`` of paper row ``cid`` as a list."""
    return [s for s in rows.loc[cid, "value"].split(";") if s]
