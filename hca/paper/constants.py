"""Every constant of the paper in one place: its domain sets, its roles of the factors, its
subjects and checkpoints (Jin, Syrgkanis, Kakade & Zhang, 2025). Values are the paper's,
cited by section; nothing here is computed. The authors' labels and Figure 8's checkpoints
are defined in the library modules that read them (:mod:`hca.attribution.authors`,
:mod:`hca.data.tables`) and re-exported here, so the library never imports the paper.
"""

from __future__ import annotations

# Defined in the library next to the code that reads them, re-exported here with the rest:
from hca.attribution.authors import AUTHORS_LABELS, AUTHORS_V2_LABELS
from hca.data.tables import FIGURE8_CHECKPOINTS, FIGURE8_COLUMNS, load_paper_values

__all__ = [
    "PAPER_V2_BASES",
    "PAPER_V1_BASES",
    "AUTHORS_LABELS",
    "PAPER_V2_SINV",
    "PAPER_V2_FOUR",
    "PAPER_V2_PRETRAINED",
    "PAPER_V1_SINV",
    "AUTHORS_V2_LABELS",
    "PAPER_OOS_DOMAINS",
    "FIGURE8_CHECKPOINTS",
    "FIGURE8_COLUMNS",
    "MATH_SUBJECTS",
    "PHYSICS_SUBJECTS",
    "CROSS_SUBJECTS",
    "PAPER_MATH_DOMAINS",
    "PAPER_PHYSICS_DOMAINS",
    "PAPER_ALIGNMENT",
    "PAPER_PATTERNS",
]


#: The eight base models of the paper's Section 1.1 as M_1..M_8. The paper names them but not
#: their indices; the authors' notebook (hlzhang109/causal-eval, scripts/main.ipynb @248059c,
#: cell jIvjpr5bUCj5) orders them by domain size: 757, 332, 306, 238, 221, 169, 156, 135
#: models. So M_3 = Mistral-7B and M_6 = Qwen2.5-0.5B, and S_inv = {1, 2, 4, 5, 7} (Section 2)
#: is Llama-3-8B, Qwen2.5-14B, Llama-3.1-8B, Qwen2-7B and Qwen2.5-7B.
PAPER_V2_BASES: tuple[str, ...] = (
    "Llama-3-8B",
    "Qwen2.5-14B",
    "Mistral-7B",
    "Llama-3.1-8B",
    "Qwen2-7B",
    "Qwen2.5-0.5B",
    "Qwen2.5-7B",
    "Gemma-2-9B",
)
#: The six v1 base models of Appendix H.4 (M_1..M_6 in the paper's order).
PAPER_V1_BASES: tuple[str, ...] = (
    "Mistral-7B",
    "Llama-2-13B",
    "Llama-3-8B",
    "Llama-2-7B",
    "Llama-2-70B",
    "Mixtral-8x7B",
)


def _paper_set(cid: str) -> tuple[str, ...]:
    """The ``;``-separated value of claim ``cid`` in ``paper_values.csv`` (the one place the
    paper's values are written)."""
    return tuple(s for s in load_paper_values().loc[cid, "value"].split(";") if s)


#: The paper's invariant set on v2 (Section 2, claim F2b-sinv-v2 of ``paper_values.csv``).
PAPER_V2_SINV: tuple[str, ...] = _paper_set("F2b-sinv-v2")
#: The four domains the paper fits (Section 4).
PAPER_V2_FOUR: tuple[str, ...] = ("Llama-3-8B", "Llama-3.1-8B", "Qwen2.5-7B", "Qwen2.5-14B")
#: The official pretrained checkpoint of every v2 domain of S_inv (its leaderboard row is the
#: reference of Appendix H.3's filter; the same five ids as the authors' notebook).
PAPER_V2_PRETRAINED: dict[str, str] = {
    "Llama-3-8B": "meta-llama/Meta-Llama-3-8B",
    "Llama-3.1-8B": "meta-llama/Llama-3.1-8B",
    "Qwen2-7B": "Qwen/Qwen2-7B",
    "Qwen2.5-7B": "Qwen/Qwen2.5-7B",
    "Qwen2.5-14B": "Qwen/Qwen2.5-14B",
}
#: The invariant set the paper reads off Figure 23b on v1 (claim H.4-sinv-v1 of
#: ``paper_values.csv``); its six domains are :data:`PAPER_V1_BASES`.
PAPER_V1_SINV: tuple[str, ...] = _paper_set("H.4-sinv-v1")
#: The base models of Table 2b's out-of-sample columns, in the paper's order.
PAPER_OOS_DOMAINS: tuple[str, ...] = (
    "Gemma-2-9B",
    "Mistral-7B",
    "Qwen2.5-0.5B",
    "Qwen2.5-3B",
    "Llama-2-7B",
    "Llama-2-13B",
    "Llama-3.2-1B",
)
#: The three mathematics subjects of Figure 28 (column names).
MATH_SUBJECTS: tuple[str, ...] = (
    "mmlu_college_mathematics",
    "mmlu_elementary_mathematics",
    "mmlu_high_school_mathematics",
)
#: The three physics subjects of Figure 29.
PHYSICS_SUBJECTS: tuple[str, ...] = (
    "mmlu_conceptual_physics",
    "mmlu_high_school_physics",
    "mmlu_college_physics",
)
#: The cross-subject set of Figure 30. The paper writes "MMLU_college_electrical_engineering";
#: MMLU has only ``electrical_engineering`` (there is no college/high-school split).
CROSS_SUBJECTS: tuple[str, ...] = (
    "mmlu_college_mathematics",
    "mmlu_college_physics",
    "mmlu_electrical_engineering",
)
#: Base models the paper uses for the mathematics subjects (Appendix H.5).
PAPER_MATH_DOMAINS: tuple[str, ...] = ("Mistral-7B", "Llama-2-7B", "Llama-2-70B")
#: Base models the paper uses for the physics subjects ("Mistral-8x7B" is Mixtral-8x7B).
PAPER_PHYSICS_DOMAINS: tuple[str, ...] = (
    "Mistral-7B",
    "Mixtral-8x7B",
    "Llama-2-13B",
    "Llama-2-70B",
)
#: The paper's causal order (Section 4): allowed benchmarks for z1, z2, z3.
PAPER_ALIGNMENT: tuple[frozenset, ...] = (
    frozenset({"bbh", "mmlu_pro"}),
    frozenset({"ifeval"}),
    frozenset({"math_lvl_5"}),
)
#: The named patterns the chapters flag in :mod:`hca.stability` records: ``paper_order``.
PAPER_PATTERNS: dict[str, tuple[frozenset, ...]] = {"paper_order": PAPER_ALIGNMENT}
