"""The data chapter's analysis: how many models each base model has, under either setup.

Section 1.1 names the eight base models most used on Leaderboard v2 and Appendix H.4 the six
most used on v1; the abstract says the causal analysis covers "over 1,500 models"; Appendix B
gives the Gemma-2 token counts used for compute. :func:`run` computes our side of these claims
under one setup (:mod:`hca.paper.setups`), and the evaluators below judge them.

Under the ``authors`` setup the domains are counted by the authors' own labels
(``authors_label``) of their rule, run on every row of their v2 table (precision duplicates and
the final table's score-only models included) and of the v1 file, as the authors did
(:func:`hca.attribution.authors.v1_frame_authors`); the tokens are the authors'
``BASE_MODEL_TOKENS``. :func:`authors_printed_sizes` gives the counts their notebook printed.

Two audits of this book's attribution do not depend on the setup: :func:`attribution_audit`
(layers, reasons for leaving models out, the held-out hub check, the authors' coarse labels,
the 7.6 B Qwen2 models) and :func:`gemma_gap` (why this book's Gemma-2-9B domain is larger
than the authors').
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pandas as pd

from hca.attribution import domains as dm
from hca.attribution.authors import (
    AUTHORS_GEMMA2_9B_PARAMS,
    AUTHORS_V1_LABELS,
    authors_base_model,
    authors_token_families,
)
from hca.attribution.identify import domain_sizes
from hca.data import authors_code_values, authors_tokens, pretraining_tokens
from hca.data.registry import V2_BENCHMARKS
from hca.paper.cache import cached
from hca.paper.claims import Outcome, claim, grade, paper_list, set_verdict
from hca.paper.constants import (
    AUTHORS_V2_LABELS,
    PAPER_V2_BASES,
    PAPER_V2_FOUR,
    PAPER_V2_SINV,
)
from hca.paper.replication import v1_frame, v2_authors, v2_frame
from hca.paper.setups import SETUP_NAMES, Setup
from hca.paper.shape import ChapterSpec

__all__ = [
    "Settings",
    "DataResults",
    "run",
    "GEMMA2",
    "authors_printed_sizes",
    "authors_family_counts",
    "GemmaGap",
    "gemma_gap",
    "AttributionAudit",
    "attribution_audit",
]

#: The Gemma-2 sizes of Appendix B: this book's base-model names and the authors' labels.
GEMMA2: dict[str, str] = {
    "Gemma-2-2B": "gemma-2-2b",
    "Gemma-2-9B": "gemma-2-9b",
    "Gemma-2-27B": "gemma-2-27b",
}


@dataclass(frozen=True)
class Settings:
    """The data chapter has no repetitions; the class keeps the chapters' interface.

    Attributes
    ----------
    setups : tuple of str
        The setups to run (:data:`hca.paper.setups.SETUP_NAMES`: both).
    """

    setups: tuple[str, ...] = SETUP_NAMES  # the setups to run


@dataclass(frozen=True, eq=False)
class DataResults:
    """Our side of the data chapter's claims under one setup.

    Attributes
    ----------
    setup : Setup
    v2_sizes, v1_sizes : Series
        Models per base model, largest first, under the setup's rule (the authors' labels
        counted as their notebooks print them, every row of their table).
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
        return (
            f"{self.setup.label}: {self.table_rows:,} v2 rows; largest domains {top}; "
            f"{self.n_four:,} models in the four domains of Section 4"
        )


def _sizes(setup: Setup, frame: pd.DataFrame, names: dict[str, str]) -> pd.Series:
    """Models per base model: this book's domains, or the authors' labels (``names`` maps
    those of the base models to this book's names)."""
    if setup.domain_rule == "book":
        return domain_sizes(frame)
    labels = frame["authors_label"].dropna().astype(str)
    return labels.map(lambda x: names.get(x, x)).value_counts().rename("models")


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
        setup=setup,
        v2_sizes=_sizes(setup, frame, AUTHORS_V2_LABELS),
        v1_sizes=_sizes(setup, v1_frame(setup), AUTHORS_V1_LABELS),
        table_rows=len(frame),
        n_four=_complete(frame, PAPER_V2_FOUR),
        n_sinv=_complete(frame, PAPER_V2_SINV),
        n_eight=_complete(frame, PAPER_V2_BASES),
        gemma_tokens=_gemma_tokens(setup),
    )


#: The chapter's shape (:class:`hca.paper.shape.ChapterSpec`).
CHAPTER: ChapterSpec[Settings, DataResults] = ChapterSpec(
    key="data", settings=Settings, compute=_compute
)


def run(setup: str | Setup = "careful", settings: Settings | None = None) -> DataResults:
    """The chapter's results under ``setup`` (computed once per process; a read-only copy,
    :meth:`hca.paper.shape.ChapterSpec.run`)."""
    return CHAPTER.run(setup, settings)


def _printed(prefix: str, name: str) -> pd.Series:
    """The ``<prefix>*`` rows of :func:`hca.data.authors_code_values` as a Series."""
    t = authors_code_values()
    rows = t[t["id"].str.startswith(prefix)]
    return pd.Series(
        rows["value"].astype(int).to_numpy(),
        index=[i[len(prefix) :] for i in rows["id"]],
        name=name,
    )


def authors_printed_sizes() -> pd.Series:
    """Models per base model as the authors' notebook printed them (4,576-row table), in its
    order (``size-*`` rows of :func:`hca.data.authors_code_values`, named as in this book)."""
    return _printed("size-", "models")


def authors_family_counts() -> pd.DataFrame:
    """Models per base-model family as ``find_token_size.ipynb`` printed them (the
    ``family-*`` rows of :func:`hca.data.authors_code_values`; their 4,576-row table) beside
    the same rule (``strict=True``: the notebook's function) on the final table.

    Columns ``printed``, ``ours``, ``difference`` (ours − printed) and ``final_only`` (of ours,
    rows only in the final HTML table, which have a name and a parameter count only). Row
    ``matched`` is the total with a token count. ``attrs["unmatched_final_only"]`` counts the
    final-only rows the rule cannot label: steps 2 and 4 (base-model field, architecture) do
    not run on them.
    """
    printed = _printed("family-", "printed")
    frame = v2_authors(include_final=True, dedupe=False)
    cols = ["model_id", "base_model_hub", "architecture", "params_b"]
    fam = pd.Series(
        authors_token_families(
            authors_base_model(*r, strict=True) for r in frame[cols].itertuples(index=False)
        ),
        index=frame.index,
    )
    final_only = frame["architecture"].isna() & frame["base_model_hub"].isna()
    ours = fam.value_counts()
    ours["matched"] = int(fam.notna().sum())
    fo = fam[final_only].value_counts()
    fo["matched"] = int(fam[final_only].notna().sum())
    out = pd.DataFrame(
        {
            "printed": printed,
            "ours": ours.reindex(printed.index, fill_value=0),
            "final_only": fo.reindex(printed.index, fill_value=0),
        }
    ).astype(int)
    out.insert(2, "difference", out["ours"] - out["printed"])
    out.index.name = "family"
    out.attrs["unmatched_final_only"] = int((final_only & fam.isna()).sum())
    out.attrs["final_only"] = int(final_only.sum())
    return out


# =========================================================================== Gemma-2-9B
@dataclass(frozen=True, eq=False)
class GemmaGap:
    """Why this book's Gemma-2-9B domain is larger than the authors': both rules on the same
    rows (this book's de-duplicated CSV).

    Attributes
    ----------
    book : int
        Models this book attributes to Gemma-2-9B.
    authors : int
        Models the authors' rule labels ``gemma-2-9b`` among the same rows.
    shared : int
        Models in both.
    only_book : DataFrame
        This book's Gemma-2-9B models the authors' rule does not label ``gemma-2-9b``:
        ``model_id``, ``params_b``, ``type``, ``authors_label`` and ``reason``.
    only_authors : DataFrame
        The converse: ``model_id``, ``params_b``, ``type`` and this book's ``base_model``.
    window : tuple of float
        The authors' parameter window for Gemma-2-9B (billions).
    """

    book: int
    authors: int
    shared: int
    only_book: pd.DataFrame
    only_authors: pd.DataFrame
    window: tuple

    def reasons(self) -> pd.Series:
        """Models of ``only_book`` per reason."""
        return self.only_book["reason"].value_counts().rename("models")

    def summary(self) -> str:
        return (
            f"Gemma-2-9B: this book {self.book}, the authors' rule {self.authors} on the "
            f"same rows ({self.shared} shared); only in this book: "
            + ", ".join(f"{n} {r}" for r, n in self.reasons().items())
        )


OUTSIDE_WINDOW = "parameter count outside the authors' Gemma-2-9B window"
GEMMA1 = "read as Gemma-1 by the authors' name pattern"


def _gemma_reason(label, params: float, window: tuple) -> str:
    if isinstance(label, str) and label.startswith("gemma-1"):
        return GEMMA1
    if (label is None or pd.isna(label)) and not window[0] <= params <= window[1]:
        return OUTSIDE_WINDOW
    return f"labelled {label}"


def gemma_gap(frame: pd.DataFrame | None = None, base: str = "Gemma-2-9B") -> GemmaGap:
    """Compare this book's ``base`` domain with the authors' rule on the same rows.

    Parameters
    ----------
    frame : DataFrame, optional
        Rows with this book's ``base_model`` and the columns of the authors' rule
        (``model_id``, ``base_model_hub``, ``architecture``, ``params_b``); default the careful
        setup's :func:`~hca.paper.replication.v2_frame`.
    base : str
        This book's name of the base model (its authors' label is the lower-cased name).
    """
    frame = v2_frame("careful") if frame is None else frame
    cols = ["model_id", "base_model_hub", "architecture", "params_b"]
    label = pd.Series(
        [authors_base_model(*r) for r in frame[cols].itertuples(index=False)],
        index=frame.index,
        dtype="string",
    )
    ours = frame["base_model"].astype("string").eq(base).fillna(False).astype(bool)
    theirs = label.eq(base.lower()).fillna(False).astype(bool)
    only = frame.loc[ours & ~theirs, ["model_id", "params_b", "type"]].assign(
        authors_label=label[ours & ~theirs]
    )
    only["reason"] = [
        _gemma_reason(lab, p, AUTHORS_GEMMA2_9B_PARAMS)
        for lab, p in zip(only["authors_label"], only["params_b"])
    ]
    conv = frame.loc[theirs & ~ours, ["model_id", "params_b", "type", "base_model"]]
    return GemmaGap(
        book=int(ours.sum()),
        authors=int(theirs.sum()),
        shared=int((ours & theirs).sum()),
        only_book=only.reset_index(drop=True),
        only_authors=conv.reset_index(drop=True),
        window=AUTHORS_GEMMA2_9B_PARAMS,
    )


# =========================================================================== audit
@dataclass(frozen=True, eq=False)
class AttributionAudit:
    """Checks of this book's attribution (:func:`hca.attribution.identify`), the same under
    both setups.

    Attributes
    ----------
    layer_shares : DataFrame
        Share of models per layer, v2 and v1 (:func:`hca.attribution.layer_shares`).
    reasons : DataFrame
        Unattributed models per reason, v2 and v1.
    hub_check, authors_check : AgreementCheck
        The held-out hub column and the authors' coarse labels.
    qwen7 : DataFrame
        The 7.6 B ``Qwen2ForCausalLM`` models of v2: this book's base model by why.
    qwen7_unattributed, qwen7_merges : int
        Of those, unattributed, and unattributed merges without evidence.
    qwen7_first : Timestamp
        Earliest upload of an unattributed one.
    authors_qwen2 : int
        v2 models with the authors' coarse ``qwen2`` label (all sizes).
    gemma : GemmaGap
    """

    layer_shares: pd.DataFrame
    reasons: pd.DataFrame
    hub_check: Any
    authors_check: Any
    qwen7: pd.DataFrame
    qwen7_unattributed: int
    qwen7_merges: int
    qwen7_first: pd.Timestamp
    authors_qwen2: int
    gemma: GemmaGap

    def summary(self) -> str:
        return f"{self.hub_check.summary()}\n{self.authors_check.summary()}\n{self.gemma.summary()}"


_Q7_WHY = {
    "merge without": "merge, no name/hub evidence",
    "Qwen2ForCausalLM at": "architecture only: Qwen2-7B or Qwen2.5-7B",
    "family": "family in name, version ambiguous or unknown",
}


def _audit() -> AttributionAudit:
    v2, v1 = v2_frame("careful"), v1_frame("careful")
    q7 = v2[(v2["architecture"] == "Qwen2ForCausalLM") & v2["params_b"].between(7.5, 7.7)]
    why = q7["evidence"].str.extract(r"^(merge without|Qwen2ForCausalLM at|family)")[0]
    why = why.map(_Q7_WHY).fillna("attributed")
    un = q7["base_model"].isna()
    return AttributionAudit(
        layer_shares=pd.concat({"v2": dm.layer_shares(v2), "v1": dm.layer_shares(v1)}, axis=1),
        reasons=pd.concat(
            {"v2": dm.unattributed_reasons(v2), "v1": dm.unattributed_reasons(v1)}, axis=1
        )
        .fillna(0)
        .astype(int),
        hub_check=dm.hub_holdout_agreement(v2),
        authors_check=dm.authors_agreement(v2),
        qwen7=pd.crosstab(
            q7["base_model"].fillna("unattributed"),
            why,
            rownames=["this book's base model"],
            colnames=["evidence"],
        ),
        qwen7_unattributed=int(un.sum()),
        qwen7_merges=int((un & (why == _Q7_WHY["merge without"])).sum()),
        qwen7_first=q7.loc[un, "upload_date"].min(),
        authors_qwen2=int((v2["authors_base_model"] == "qwen2").sum()),
        gemma=gemma_gap(v2),
    )


def attribution_audit() -> AttributionAudit:
    """The audit of this book's attribution (computed once; the same under both setups)."""
    return cached("data_audit", _audit)


# =========================================================================== claims
def _top_outcome(sizes: pd.Series, paper: list[str], what: str) -> Outcome:
    ranked = list(sizes.index)
    top = ranked[: len(paper)]
    missing = [b for b in paper if b not in top]
    extra = [b for b in top if b not in paper]
    ours = f"{len(paper) - len(missing)} of {len(paper)} in our {len(paper)} largest {what} domains"
    for b in missing:
        where = (
            f"rank {ranked.index(b) + 1} ({int(sizes[b])} models)"
            if b in sizes.index
            else "no model"
        )
        ours += f"; {b}: {where}"
    if extra:
        ours += "; instead " + ", ".join(f"{b} ({int(sizes[b])})" for b in extra)
    v = set_verdict(top, paper)
    reason = (
        "the same base models"
        if v == "reproduced"
        else f"{', '.join(extra)} outranks {', '.join(missing)} under this attribution"
    )
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
    ours = (
        f"{n4:,} models in the four domains of Section 4 ({res.n_sinv:,} in S_inv's five, "
        f"{res.n_eight:,} in the eight base models; table of {res.table_rows:,} rows)"
    )
    reason = (
        "the four domains hold over 1,500 models"
        if in_band
        else f"the four domains hold {n4:,} models"
        + ("; a larger domain set is in the band" if other and not near else "")
    )
    return {
        "Abs-models-1500": Outcome(ours, grade(in_band, near or other), reason, value=float(n4))
    }


@claim("B-gemma2-tokens", chapter="data", figure=None)
def _gemma(res: DataResults, rows: pd.DataFrame) -> dict[str, Outcome]:
    paper = [float(x) for x in paper_list(rows, "B-gemma2-tokens")]
    ours = res.gemma_tokens.to_numpy(dtype=float)
    equal = int(sum(abs(o - p) < 1e-9 for o, p in zip(ours, paper)))
    table = (
        "the authors' BASE_MODEL_TOKENS"
        if res.setup.domain_rule == "authors"
        else "this book's cited token table"
    )
    text = ", ".join(f"{b.split('-')[-1]}: {t:g}T" for b, t in res.gemma_tokens.items())
    return {
        "B-gemma2-tokens": Outcome(
            f"{text} ({table})",
            grade(equal == 3, equal == 2),
            f"{equal} of 3 token counts equal the paper's",
            value=float(equal),
        )
    }
