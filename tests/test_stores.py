"""No hidden state: the process-wide stores of ``hca`` are the ones CONTRIBUTING lists, and
the functions that used to memoise behind their signature return the same values without."""

from __future__ import annotations

import importlib
import pkgutil
import re
from pathlib import Path

import numpy as np
import pandas as pd

import hca

CONTRIBUTING = Path(__file__).resolve().parents[1] / "CONTRIBUTING.md"

#: Every functools memo left in hca/, as module:name: the results store's environment key
#: and the threadpoolctl controller (CONTRIBUTING, "Process-wide stores").
ALLOWED_MEMOS = {"hca.paper.cache:_environment", "hca.completion.estimators:_blas_controller"}


def _modules() -> list:
    names = [m.name for m in pkgutil.walk_packages(hca.__path__, "hca.")]
    return [importlib.import_module(n) for n in ["hca", *names]]


def test_no_functools_memo_outside_the_results_store():
    found = set()
    for mod in _modules():
        for name, obj in vars(mod).items():
            if hasattr(obj, "cache_info") and getattr(obj, "__module__", None) == mod.__name__:
                found.add(f"{mod.__name__}:{name}")
    assert found == ALLOWED_MEMOS


def test_no_context_variable_memo_or_prefetch_in_hca():
    """Issue 33: no ContextVar, no FastICA memo and no prefetch_* anywhere in hca/ (seeds,
    ensembles and progress callbacks are arguments)."""
    root = Path(hca.__file__).resolve().parent
    for path in root.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        for word in ("contextvars", "ContextVar", "prefetch_", r"_MEMO\b"):
            assert not re.search(word, text), f"{path.relative_to(root)} mentions {word}"


def test_contributing_lists_at_most_five_stores():
    text = CONTRIBUTING.read_text(encoding="utf-8")
    section = text.split("## Process-wide stores", 1)[1].split("\n## ", 1)[0]
    items = re.findall(r"^\d+\. \*\*", section, flags=re.M)
    assert 1 <= len(items) <= 5, section


def test_identify_keeps_nothing_between_calls():
    from hca.attribution import identify, identify_name

    frame = pd.DataFrame(
        {
            "model_id": [
                "NousResearch/Hermes-3-Llama-3.1-8B",
                "x/y",
                "NousResearch/Hermes-3-Llama-3.1-8B",
            ],
            "params_b": [8.03, 8.03, 8.03],
            "architecture": ["LlamaForCausalLM"] * 3,
        }
    )
    first = identify(frame)
    assert first["base_model"].tolist()[0] == first["base_model"].tolist()[2] == "Llama-3.1-8B"
    first.loc[0, "base_model"] = "changed"  # a caller's edit reaches no later call
    again = identify(frame)
    assert again["base_model"].iloc[0] == "Llama-3.1-8B"
    assert identify_name("NousResearch/Hermes-3-Llama-3.1-8B", 8.03).base_model == "Llama-3.1-8B"


def test_authors_token_families_equal_one_by_one():
    from hca.attribution import authors_token_families, authors_token_family

    labels = ["llama-3.1-8b", "gemma-2-9b", "mixtral-8x7b", "gemma-2-5b", None, "qwen2.5-7b"]
    assert authors_token_families(labels) == [authors_token_family(x) for x in labels]
    assert authors_token_families(labels)[:3] == ["llama-3.1", "gemma-2-9b", "mixtral"]


def test_shared_propensities_equal_separate_fits_and_are_copies():
    from hca.causal import ate_aipw, ate_ipw

    rng = np.random.default_rng(3)
    x = rng.normal(0.0, 1.0, 200)
    t = (rng.random(200) < 1 / (1 + np.exp(-x))).astype(int)
    ys = [x + t * k + rng.normal(0, 0.5, 200) for k in (1.0, 2.0)]
    fits: dict = {}
    shared = [ate_ipw(x, t, y, n_boot=20, random_state=1, propensities=fits) for y in ys]
    alone = [ate_ipw(x, t, y, n_boot=20, random_state=1) for y in ys]
    assert len(fits) == 21  # the point estimate and 20 resamples, fitted once for both outcomes
    for a, b in zip(shared, alone):
        assert a.ate == b.ate and np.array_equal(a.boot_samples, b.boot_samples)
    aipw = ate_aipw(x, t, ys[0], n_boot=0, propensities=fits)
    assert aipw.ate == ate_aipw(x, t, ys[0], n_boot=0).ate
    for e in fits.values():  # what the dict holds is never handed out to be changed
        e[:] = 0.5
    assert ate_ipw(x, t, ys[0], n_boot=0, propensities={}).ate == alone[0].ate
