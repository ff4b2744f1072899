"""The data chapter's audits (hca.paper.data): printed sizes, the Gemma-2-9B gap, the audit."""

from __future__ import annotations

import pandas as pd

from hca.paper import cache
from hca.paper import data as data_chapter
from hca.paper.constants import PAPER_V2_BASES


def test_authors_printed_sizes_are_the_papers_order():
    printed = data_chapter.authors_printed_sizes()
    assert list(printed.index[:8]) == list(PAPER_V2_BASES)
    assert printed.is_monotonic_decreasing and printed["Gemma-2-9B"] == 135


def test_gemma_gap_explains_every_model():
    gap = data_chapter.gemma_gap()
    assert gap.book == gap.shared + len(gap.only_book)
    assert gap.authors == gap.shared + len(gap.only_authors)
    reasons = gap.reasons()
    assert set(reasons.index) == {data_chapter.OUTSIDE_WINDOW, data_chapter.GEMMA1}
    assert reasons[data_chapter.GEMMA1] == 3 and reasons[data_chapter.OUTSIDE_WINDOW] > 25
    lo, hi = gap.window
    outside = gap.only_book[gap.only_book["reason"] == data_chapter.OUTSIDE_WINDOW]
    assert not outside["params_b"].between(lo, hi).any()
    assert "Gemma-2-9B" in gap.summary()


def test_gemma_gap_on_a_small_frame():
    frame = pd.DataFrame({
        "model_id": ["x/Gemma-2-Foo-9B", "x/Tiger-Gemma-9B", "x/plain-gemma-2-9b-it"],
        "base_model_hub": [None, None, None], "architecture": ["Gemma2ForCausalLM"] * 3,
        "params_b": [10.159, 9.242, 9.242], "type": ["merge", "fine-tuned", "chat"],
        "base_model": ["Gemma-2-9B"] * 3})
    gap = data_chapter.gemma_gap(frame)
    assert (gap.book, gap.authors, gap.shared) == (3, 1, 1)
    assert list(gap.only_book["reason"]) == [data_chapter.OUTSIDE_WINDOW, data_chapter.GEMMA1]


def test_attribution_audit(monkeypatch):
    monkeypatch.setenv("HCA_RESULTS_CACHE", "off")
    cache.clear_memory()
    audit = data_chapter.attribution_audit()
    again = data_chapter.attribution_audit()  # computed once: an equal read-only copy
    assert again is not audit and again.hub_check.rate == audit.hub_check.rate
    assert audit.hub_check.rate > 0.99 and audit.authors_check.rate > 0.99
    assert audit.qwen7_unattributed > 100 and audit.qwen7_merges <= audit.qwen7_unattributed
    assert set(audit.layer_shares.columns.get_level_values(0)) == {"v2", "v1"}
    assert audit.qwen7.index.name == "this book's base model"
    cache.clear_memory()


def _page(**sizes):
    """A stand-in for a chapter page: per setup, results with the given v2 and v1 domain sizes
    and counts of models in the four and five domains."""
    from types import SimpleNamespace

    results = {}
    for name, (v2, v1, n4, n5) in sizes.items():
        results[name] = SimpleNamespace(
            v2_sizes=pd.Series(range(len(v2), 0, -1), index=list(v2)),
            v1_sizes=pd.Series(range(len(v1), 0, -1), index=list(v1)),
            n_four=n4,
            n_sinv=n5,
        )
    return SimpleNamespace(setups=tuple(sizes), results=results)


def test_answer_is_chosen_from_the_results():
    """The opening paragraph names both setups, no claim id, and says what the counts say:
    the base models that fall behind, and whether the four domains reach 1,500 models."""
    from hca.paper.constants import PAPER_V1_BASES
    from hca.paper.words import prose_slips

    paper8, paper6 = list(PAPER_V2_BASES), list(PAPER_V1_BASES)
    other8 = paper8[:5] + ["X-1"] + paper8[6:] + [paper8[5]]  # the sixth falls to rank 9
    text = data_chapter.answer(
        _page(authors=(paper8, paper6, 1393, 1532), careful=(other8, paper6, 702, 730))
    )
    assert "the authors' setup" in text and "the careful setup" in text
    assert "every one of these base models" in text and "7 of 8 v2 and 6 of 6 v1" in text
    assert f"{paper8[5]} (rank 9) fall behind" in text
    assert "these counts stay below the abstract's 1,500" in text
    assert "1,532 models under the authors' setup" in text
    assert "S1.1" not in text and prose_slips(text) == []
    both = data_chapter.answer(_page(authors=(paper8, paper6, 1600, 1700)))
    assert "this count reaches the abstract's 1,500" in both and "careful" not in both
    mixed = data_chapter.answer(
        _page(authors=(paper8, paper6, 1600, 1700), careful=(paper8, paper6, 900, 950))
    )
    assert "only under the authors' setup do they reach 1,500" in mixed
