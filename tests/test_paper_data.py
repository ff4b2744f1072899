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
