"""The data chapter's analysis: how many models each base model has, under either setup.

Section 1.1 names the eight base models most used on Leaderboard v2 and Appendix H.4 the six
most used on v1; the abstract says the causal analysis covers "over 1,500 models"; Appendix B
gives the Gemma-2 token counts used for compute. :func:`run` computes our side of these claims
under one setup (:mod:`hca.paper.setups`), and the evaluators below judge them.

Under the ``authors`` setup the v2 domains come from the authors' rule on their table (every
CSV row with its precision duplicates, plus the final table's score-only models), counted by
the authors' own labels (``authors_label``), named as in this book where a label is one of the
eight base models; the tokens are the authors' ``BASE_MODEL_TOKENS``. Leaderboard v1 has no
public rule of the authors, so both setups count v1 with this book's attribution.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from hca.attribution.identify import domain_sizes
from hca.data import authors_tokens, pretraining_tokens
from hca.data.registry import V2_BENCHMARKS
from hca.paper.cache import cached
from hca.paper.claims import Outcome, claim, grade, paper_list, set_verdict
from hca.paper.constants import (
    AUTHORS_V2_LABELS,
    PAPER_V2_BASES,
    PAPER_V2_FOUR,
    PAPER_V2_SINV,
)
from hca.paper.replication import v1_frame, v2_frame
from hca.paper.setups import Setup, get_setup

__all__ = ["Settings", "DataResults", "run", "GEMMA2"]

#: The Gemma-2 sizes of Appendix B: this book's base-model names and the authors' labels.
GEMMA2: dict[str, str] = {"Gemma-2-2B": "gemma-2-2b", "Gemma-2-9B": "gemma-2-9b",
                          "Gemma-2-27B": "gemma-2-27b"}


@dataclass(frozen=True)
class Settings:
    """The data chapter has no repetitions; the class keeps the chapters' interface."""

    @classmethod
    def fast(cls) -> Settings:
        return cls()


@dataclass(frozen=True, eq=False)
class DataResults:
    """Our side of the data chapter's claims under one setup.

    Attributes
    ----------
    setup : Setup
    v2_sizes, v1_sizes : Series
        Models per base model, largest first (v2 under the setup's rule; v1 this book's).
    table_rows : int
        Rows of the setup's v2 table.
    n_four, n_sinv, n_eight : int
        Models with all six scores in Section 4's four domains, in S_inv's five, in the
        eight base models of Section 1.1.
    gemma_tokens : Series
        Pretraining tokens (trillions) used for Gemma-2-2B, -9B and -27B.
    """

    setup: Setup
    v2_sizes: pd.Series
    v1_sizes: pd.Series
    table_rows: int
    n_four: int
    n_sinv: int
    n_eight: int
    gemma_tokens: pd.Series

    def summary(self) -> str:
        top = ", ".join(f"{b} {n}" for b, n in self.v2_sizes.head(8).items())
        return (f"{self.setup.label}: {self.table_rows:,} v2 rows; largest domains {top}; "
                f"{self.n_four:,} models in the four domains of Section 4")


def _v2_sizes(setup: Setup, frame: pd.DataFrame) -> pd.Series:
    if setup.domain_rule == "book":
        return domain_sizes(frame)
    labels = frame["authors_label"].dropna().astype(str)
    return labels.map(lambda x: AUTHORS_V2_LABELS.get(x, x)).value_counts().rename("models")


def _complete(frame: pd.DataFrame, domains) -> int:
    rows = frame[frame["base_model"].isin(list(domains))]
    return int(rows[list(V2_BENCHMARKS)].notna().all(axis=1).sum())


def _gemma_tokens(setup: Setup) -> pd.Series:
    if setup.domain_rule == "authors":
        tok = authors_tokens()
        return pd.Series({b: float(tok.get(lab, float("nan"))) for b, lab in GEMMA2.items()})
    tok = pretraining_tokens().set_index("base_model")["tokens_t"]
    return pd.Series({b: float(tok.get(b, float("nan"))) for b in GEMMA2})


def _compute(setup: Setup, settings: Settings) -> DataResults:
    frame = v2_frame(setup)
    return DataResults(
        setup=setup, v2_sizes=_v2_sizes(setup, frame), v1_sizes=domain_sizes(v1_frame(setup)),
        table_rows=len(frame), n_four=_complete(frame, PAPER_V2_FOUR),
        n_sinv=_complete(frame, PAPER_V2_SINV), n_eight=_complete(frame, PAPER_V2_BASES),
        gemma_tokens=_gemma_tokens(setup))


def run(setup: str | Setup = "careful", settings: Settings | None = None) -> DataResults:
    """The data chapter's results under ``setup`` (computed once; see
    :func:`hca.paper.cache.cached`)."""
    return cached("data", _compute, get_setup(setup), Settings() if settings is None else settings)


# =========================================================================== claims
def _top_outcome(sizes: pd.Series, paper: list[str], what: str) -> Outcome:
    ranked = list(sizes.index)
    top = ranked[:len(paper)]
    missing = [b for b in paper if b not in top]
    extra = [b for b in top if b not in paper]
    ours = (f"{len(paper) - len(missing)} of {len(paper)} in our {len(paper)} largest {what} "
            "domains")
    for b in missing:
        where = (f"rank {ranked.index(b) + 1} ({int(sizes[b])} models)" if b in sizes.index
                 else "no model")
        ours += f"; {b}: {where}"
    if extra:
        ours += "; instead " + ", ".join(f"{b} ({int(sizes[b])})" for b in extra)
    v = set_verdict(top, paper)
    reason = ("the same base models" if v == "reproduced" else
              f"{', '.join(extra)} outranks {', '.join(missing)} under this attribution")
    return Outcome(ours, v, reason, value=float(len(paper) - len(missing)))


@claim("S1.1-top8", chapter="data", figure="fig-data-domain-sizes")
def _top8(res: DataResults, rows: pd.DataFrame) -> dict[str, Outcome]:
    return {"S1.1-top8": _top_outcome(res.v2_sizes, paper_list(rows, "S1.1-top8"), "v2")}


@claim("H.4-top6", chapter="data", figure="fig-data-domain-sizes")
def _top6(res: DataResults, rows: pd.DataFrame) -> dict[str, Outcome]:
    return {"H.4-top6": _top_outcome(res.v1_sizes, paper_list(rows, "H.4-top6"), "v1")}


@claim("Abs-models-1500", chapter="data", figure="fig-data-domain-sizes")
def _models(res: DataResults, rows: pd.DataFrame) -> dict[str, Outcome]:
    n4 = res.n_four
    in_band = 1500 < n4 <= 2000
    near = 1200 <= n4 <= 1500 or 2000 < n4 <= 2500
    other = any(1500 < n <= 2000 for n in (res.n_sinv, res.n_eight))
    ours = (f"{n4:,} models in the four domains of Section 4 ({res.n_sinv:,} in S_inv's five, "
            f"{res.n_eight:,} in the eight base models; table of {res.table_rows:,} rows)")
    reason = ("the four domains hold over 1,500 models" if in_band else
              f"the four domains hold {n4:,} models" + (
                  "; a larger domain set is in the band" if other and not near else ""))
    return {"Abs-models-1500": Outcome(ours, grade(in_band, near or other), reason,
                                       value=float(n4))}


@claim("B-gemma2-tokens", chapter="data", figure=None)
def _gemma(res: DataResults, rows: pd.DataFrame) -> dict[str, Outcome]:
    paper = [float(x) for x in paper_list(rows, "B-gemma2-tokens")]
    ours = res.gemma_tokens.to_numpy(dtype=float)
    equal = int(sum(abs(o - p) < 1e-9 for o, p in zip(ours, paper)))
    table = "the authors' BASE_MODEL_TOKENS" if res.setup.domain_rule == "authors" else \
        "this book's cited token table"
    text = ", ".join(f"{b.split('-')[-1]}: {t:g}T" for b, t in res.gemma_tokens.items())
    return {"B-gemma2-tokens": Outcome(f"{text} ({table})", grade(equal == 3, equal == 2),
                                       f"{equal} of 3 token counts equal the paper's",
                                       value=float(equal))}
