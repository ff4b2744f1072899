"""The authors' own domain rule (find_token_size.ipynb), re-implemented as a labelled variant."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

import numpy as np
import pandas as pd

from hca.data.loaders import load_leaderboard_v1, load_leaderboard_v2
from hca.data.tables import authors_tokens

#: The coarse labels of the authors' ``base_model`` column (``authors_base_model``).
AUTHORS_LABELS: tuple[str, ...] = ("llama-3", "qwen2.5", "qwen2", "gemma-2-9b", "mistral-7b")
#: The authors' base-model labels (:func:`hca.attribution.authors_base_model`) of the eight
#: base models of Section 1.1 -> this book's names.
AUTHORS_V2_LABELS: dict[str, str] = {
    "llama-3-8b": "Llama-3-8B",
    "qwen2.5-14b": "Qwen2.5-14B",
    "mistral-7b": "Mistral-7B",
    "llama-3.1-8b": "Llama-3.1-8B",
    "qwen2-7b": "Qwen2-7B",
    "qwen2.5-0.5b": "Qwen2.5-0.5B",
    "qwen2.5-7b": "Qwen2.5-7B",
    "gemma-2-9b": "Gemma-2-9B",
}

__all__ = [
    "AUTHORS_LABELS",
    "AUTHORS_V2_LABELS",
    "AUTHORS_GEMMA2_9B_PARAMS",
    "AUTHORS_V1_LABELS",
    "authors_base_model",
    "authors_token_family",
    "authors_token_families",
    "v2_frame_authors",
    "v1_frame_authors",
]

#: Parameter window (billions) in which the authors' rule calls a Gemma-2 model Gemma-2-9B.
AUTHORS_GEMMA2_9B_PARAMS: tuple[float, float] = (8.9, 9.5)

#: The authors' labels of the six v1 base models of Appendix H.4 -> this book's names (the six
#: most frequent labels their rule gives on the v1 file, printed by scripts/subgroup_pca.ipynb,
#: cell jIvjpr5bUCj5, hlzhang109/causal-eval @ 248059ca8849635b0508167116feaf06a07918d9).
AUTHORS_V1_LABELS: dict[str, str] = {
    "mistral-7b": "Mistral-7B",
    "llama-2-13b": "Llama-2-13B",
    "llama-3-8b": "Llama-3-8B",
    "llama-2-7b": "Llama-2-7B",
    "llama-2-70b": "Llama-2-70B",
    "mixtral-8x7b": "Mixtral-8x7B",
}


# --------------------------- The authors' domain rule (for the comparison in the recovery chapter)
# A re-implementation, written from its behaviour, of the "Identified base model" column that
# the authors' notebook scripts/find_token_size.ipynb (hlzhang109/causal-eval) adds to the
# leaderboard and that scripts/main.ipynb groups domains by. Four steps, first hit wins:
#   1. the model name spells a family with a size ("llama-3.1-8b", "qwen2-7b", ...);
#   2. the same on the leaderboard's Base Model field, then family words there with a size
#      taken from that field or from the parameter count;
#   3. family words in the model name, size from the name or the parameter count;
#   4. architecture and parameter count alone: any LlamaForCausalLM of 7.8-8.3B parameters
#      is "llama-3-8b", any Qwen2ForCausalLM of 7.4-7.8B not named qwen2.5 is "qwen2-7b".
# A label whose family the authors' token table does not know (e.g. "mistral", "gemma-2")
# does not count, and the next step is tried.
_SEP = r"[\-_]?"
_SIZE = r"(\d+\.?\d*)b"
_KNOWN_FAMILIES = frozenset(
    """
    llama-3 llama-3.1 llama-3.2 llama-2 llama-1 mistral-7b mixtral gemma-2-2b gemma-2-9b
    gemma-2-27b gemma-1 qwen2.5 qwen2 qwen1 yi-1.5 yi-1 phi-3 phi-2 phi-1.5 phi-1 falcon-180b
    falcon-40b falcon-7b glm3 glm2 deepseek2 deepseek mpt-30b mpt-7b stablelm bloom baichuan-3
    baichuan-2
    """.split()
)
_SPELLED = tuple(
    (re.compile(p), t)
    for p, t in (
        (rf"gemma{_SEP}2{_SEP}2b", "gemma-2-2b"),
        (rf"gemma{_SEP}2{_SEP}9b", "gemma-2-9b"),
        (rf"gemma{_SEP}2{_SEP}27b", "gemma-2-27b"),
        (rf"mixtral{_SEP}8x7b", "mixtral-8x7b"),
        (rf"llama{_SEP}3\.2{_SEP}{_SIZE}", "llama-3.2-{}b"),
        (rf"llama{_SEP}3\.1{_SEP}{_SIZE}", "llama-3.1-{}b"),
        (rf"llama{_SEP}3(?!\.){_SEP}{_SIZE}", "llama-3-{}b"),
        (rf"llama{_SEP}2{_SEP}{_SIZE}", "llama-2-{}b"),
        (rf"llama{_SEP}1{_SEP}{_SIZE}", "llama-1-{}b"),
        (rf"mistral{_SEP}{_SIZE}", "mistral-{}b"),
        (rf"gemma{_SEP}2{_SEP}{_SIZE}", "gemma-2-{}b"),
        (rf"gemma(?!{_SEP}2){_SEP}{_SIZE}", "gemma-1-{}b"),
        (rf"qwen{_SEP}2\.5{_SEP}{_SIZE}", "qwen2.5-{}b"),
        (rf"qwen{_SEP}2(?!\.5){_SEP}{_SIZE}", "qwen2-{}b"),
        (rf"qwen(?!{_SEP}2){_SEP}{_SIZE}", "qwen1-{}b"),
        (rf"yi{_SEP}1\.5{_SEP}{_SIZE}", "yi-1.5-{}b"),
        (rf"yi(?!{_SEP}1\.5){_SEP}1{_SEP}{_SIZE}", "yi-1-{}b"),
        (rf"phi{_SEP}3{_SEP}{_SIZE}", "phi-3-{}b"),
        (rf"phi{_SEP}2{_SEP}{_SIZE}", "phi-2-{}b"),
        (rf"phi{_SEP}1\.5{_SEP}{_SIZE}", "phi-1.5-{}b"),
        (rf"phi{_SEP}1(?!\.5){_SEP}{_SIZE}", "phi-1-{}b"),
        (rf"falcon{_SEP}{_SIZE}", "falcon-{}b"),
        (rf"mpt{_SEP}{_SIZE}", "mpt-{}b"),
    )
)
_W = r"[\-_/\\]?"
_FAMILY_WORDS = tuple(
    (re.compile(p), f)
    for p, f in (
        (rf"llama{_W}3\.2", "llama-3.2"),
        (rf"llama{_W}3\.1", "llama-3.1"),
        (rf"llama{_W}3(?!\.)", "llama-3"),
        (rf"llama{_W}2", "llama-2"),
        (rf"llama{_W}1", "llama-1"),
        (rf"mistral{_W}7b", "mistral-7b"),
        (r"mixtral", "mixtral"),
        (rf"gemma{_W}2[\-_]?2b", "gemma-2-2b"),
        (rf"gemma{_W}2[\-_]?9b", "gemma-2-9b"),
        (rf"gemma{_W}2[\-_]?27b", "gemma-2-27b"),
        (rf"gemma{_W}2", "gemma-2"),
        (rf"gemma{_W}1", "gemma-1"),
        (rf"qwen{_W}2\.5", "qwen2.5"),
        (rf"qwen{_W}2(?!\.)", "qwen2"),
        (rf"qwen{_W}1", "qwen1"),
        (rf"yi{_W}1\.5", "yi-1.5"),
        (rf"yi{_W}1(?!\.)", "yi-1"),
        (rf"phi{_W}3", "phi-3"),
        (rf"phi{_W}2", "phi-2"),
        (rf"phi{_W}1\.5", "phi-1.5"),
        (rf"phi{_W}1(?!\.)", "phi-1"),
        (rf"falcon{_W}180b", "falcon-180b"),
        (rf"falcon{_W}40b", "falcon-40b"),
        (rf"falcon{_W}7b", "falcon-7b"),
        (r"chatglm3|glm3", "glm3"),
        (r"chatglm2|glm2", "glm2"),
        (r"deepseek[\-_]?llm[\-_]?2|deepseek2", "deepseek2"),
        (r"deepseek", "deepseek"),
        (rf"mpt{_W}30b", "mpt-30b"),
        (rf"mpt{_W}7b", "mpt-7b"),
        (r"stablelm", "stablelm"),
        (r"bloom", "bloom"),
        (rf"baichuan{_W}3", "baichuan-3"),
        (rf"baichuan{_W}2", "baichuan-2"),
    )
)
_SIZE_IN_NAME = tuple(
    re.compile(p)
    for p in (r"[\-_](\d+\.?\d*)b(?!\w)", r"(\d+\.?\d*)b[\-_]", r"/(\d+\.?\d*)b(?![a-z0-9])")
)
#: (low, high, label) parameter windows, billions; the first window that contains wins.
_PARAM_WINDOWS = (
    (6.7, 7.5, "llama-2-7b"),
    (12.5, 13.5, "llama-2-13b"),
    (64.0, 71.0, "llama-2-70b"),
    (7.8, 8.3, "llama-3-8b"),
    (69.0, 72.0, "llama-3-70b"),
    (7.0, 7.5, "mistral-7b"),
    (45.0, 48.0, "mixtral-8x7b"),
    (1.8, 2.2, "gemma-2-2b"),
    (*AUTHORS_GEMMA2_9B_PARAMS, "gemma-2-9b"),
    (26.5, 29.0, "gemma-2-27b"),
    (0.45, 0.55, "qwen2-0.5b"),
    (1.4, 1.7, "qwen2-1.5b"),
    (7.4, 7.8, "qwen2-7b"),
    (14.0, 15.0, "qwen2-14b"),
    (72.0, 73.5, "qwen2-72b"),
    (3.7, 4.0, "phi-3-4b"),
    (6.8, 7.2, "phi-3-7b"),
    (13.0, 15.0, "phi-3-14b"),
)
_GEMMA2_LABELS = frozenset({"gemma-2-2b", "gemma-2-9b", "gemma-2-27b"})
_GEMMA2_SIZES = (
    (1.8, 2.2, "gemma-2-2b"),
    (*AUTHORS_GEMMA2_9B_PARAMS, "gemma-2-9b"),
    (26.5, 28.5, "gemma-2-27b"),
)
_QWEN_SIZES = (
    (0.45, 0.55, "0.5"),
    (1.4, 1.7, "1.5"),
    (3.0, 3.2, "3"),
    (7.4, 7.8, "7"),
    (14.0, 15.0, "14"),
    (72.0, 73.5, "72"),
)


def _window(params: float | None, table=_PARAM_WINDOWS) -> str | None:
    if params is None:
        return None
    return next((lab for lo, hi, lab in table if lo <= params <= hi), None)


def _family(label: str) -> str | None:
    """``"llama-3.1-8b"`` -> ``"llama-3.1"`` (the part before the last ``-<digits>``)."""
    m = re.match(r"([a-z0-9.\-]+)-\d+", label)
    return m.group(1) if m else None


def _spelled(name: str) -> str | None:
    """Step 1: a family spelled with its size; None if absent or of an unknown family."""
    label = _spelled_any(name)
    return label if label is not None and _family(label) in _KNOWN_FAMILIES else None


def _by_words(name: str, params: float | None) -> str | None:
    """Steps 2b/3: family words, size from the name or the parameter count."""
    family = next((f for pattern, f in _FAMILY_WORDS if pattern.search(name)), None)
    if family == "gemma-2":
        family = _window(params, _GEMMA2_SIZES) if params else None
    if family is None or family not in _KNOWN_FAMILIES:
        return None
    if re.search(r"\d+b$", family):
        return family
    for pattern in _SIZE_IN_NAME:
        m = pattern.search(name)
        if m:
            return f"{family}-{m.group(1)}b"
    if params:
        match = _window(params)
        if match and match.startswith(family):
            return match
        return f"{family}-{int(params)}b"
    return family


def _spelled_any(name: str) -> str | None:
    """The first spelled family-with-size label, whatever its family (``"mistral-7b"``).

    After the patterns, the notebook's special case of ``get_explicit_base_model``: a name
    holding both ``mixtral`` and ``8x7b`` anywhere (``"mixtral-megamerge-dare-8x7b"``) is
    ``mixtral-8x7b``.
    """
    for pattern, template in _SPELLED:
        m = pattern.search(name)
        if m:
            return template.format(m.group(1)) if "{}" in template else template
    if "mixtral" in name and "8x7b" in name:
        return "mixtral-8x7b"
    return None


def _from_name(name: str, params: float | None, strict: bool) -> str | None:
    """Steps 2b/3 (``extract_base_model_from_name``). ``strict``: a spelled label ends the
    step even when its family has no token count (the notebook returns it early and never
    reaches the family words), so e.g. ``"...-mistral-7b-..."`` gives no label here."""
    if strict:
        label = _spelled_any(name)
        if label is not None:  # the notebook's family: the label's stem, or gemma-2-<size>
            known = _family(label) in _KNOWN_FAMILIES or label in _GEMMA2_LABELS
            return label if known else None
    return _by_words(name, params)


def _phi_or_falcon(arch: str, params: float, name: str) -> str | None:
    """The falcon and phi branches of the notebook's ``architecture_to_base_model``."""
    if "falcon" in arch:
        return _window(
            params,
            ((175.0, 185.0, "falcon-180b"), (39.0, 41.0, "falcon-40b"), (6.5, 7.5, "falcon-7b")),
        )
    if "phi" not in arch:
        return None
    family = next(
        (
            f
            for word, f in (("phi-3", "phi-3"), ("phi-2", "phi-2"), ("phi-1.5", "phi-1.5"))
            if word in name
        ),
        None,
    )
    if family is None:
        family = (
            "phi-1"
            if "phi-1" in name
            else "phi-3"
            if params > 10
            else "phi-2"
            if params > 2
            else "phi-1.5"
            if params > 1
            else "phi-1"
        )
    match = _window(params)
    return match if match and match.startswith(family) else f"{family}-{int(params)}b"


def _by_architecture(arch: str, params: float, name: str, strict: bool = False) -> str | None:
    """Step 4: architecture and parameter count (``strict``: also falcon and phi)."""
    arch = arch.lower()
    match = _window(params)
    if "llama" in arch:
        return match if match and ("llama-2" in match or "llama-3" in match) else None
    if "mistral" in arch and "mixtral" not in arch and 7.0 <= params <= 7.5:
        return "mistral-7b"
    if ("mixtral" in arch or ("mistral" in arch and "moe" in name)) and 45.0 <= params <= 48.0:
        return "mixtral-8x7b"
    if "gemma2" in arch:
        return _window(
            params,
            (
                (1.8, 2.2, "gemma-2-2b"),
                (*AUTHORS_GEMMA2_9B_PARAMS, "gemma-2-9b"),
                (27.0, 29.0, "gemma-2-27b"),
            ),
        )
    if "gemma" in arch:
        return _window(params, ((2.0, 3.0, "gemma-1-2b"), (7.0, 9.0, "gemma-1-7b")))
    if "qwen2" in arch:
        qwen25 = (
            "qwen2.5" in name
            or 3.0 <= params <= 3.2
            or 14.0 <= params <= 15.0
            or 32.0 <= params <= 35.0
        )
        family = "qwen2.5" if qwen25 else "qwen2"
        if match and match.startswith(family):
            return match
        size = _window(params, _QWEN_SIZES)
        if size:
            return f"{family}-{size}b"
    # the authors' falcon/phi branches never give an S_inv label: only under ``strict``
    return _phi_or_falcon(arch, params, name) if strict else None


def _number(x: Any) -> float | None:
    try:
        value = float(x)
    except (TypeError, ValueError):
        return None
    return None if np.isnan(value) else value


def _text(x: Any) -> str | None:
    return None if x is None or pd.isna(x) or not str(x).strip() else str(x).lower()


def authors_base_model(
    model_id: Any,
    base_model_hub: Any = None,
    architecture: Any = None,
    params_b: Any = None,
    *,
    strict: bool = False,
) -> str | None:
    """The authors' base-model label of one leaderboard row (e.g. ``"llama-3-8b"``), or None.

    A re-implementation of the "Identified base model" column of the authors' notebooks
    (see the comment above this function for the four steps). It is far looser than
    :func:`hca.attribution.identify`: in step 4 every 8B ``LlamaForCausalLM`` model without a
    family in its name is ``llama-3-8b`` (Llama-3.1 fine-tunes included) and every 7.6B
    ``Qwen2ForCausalLM`` not named Qwen2.5 is ``qwen2-7b`` (Qwen2.5-7B fine-tunes included).
    Used only to explain why the paper's numbers differ from this book's.

    ``strict=True`` follows ``determine_pretraining_tokens`` of find_token_size.ipynb also
    where the default (written for the domains) does not: a spelled label of a family without
    token count ends steps 2b and 3 (the notebook returns it early), and step 4 has the
    notebook's falcon and phi branches. The two differ on about 80 of the 3,913 CSV rows, none
    in a domain of Section 1.1's eight except 13 ``mistral-7b`` rows; the scaling chapter uses
    ``strict=True`` for the pretraining tokens (:func:`authors_token_family`).
    """
    name = _text(model_id)
    if name is None:
        return None
    params = _number(params_b)
    label = _spelled(name)
    if label:
        return label
    hub = _text(base_model_hub)
    if hub:
        label = _spelled(hub) or _from_name(hub, params, strict)
        if label:
            return label
    label = _from_name(name, params, strict)
    if label:
        return label
    arch = _text(architecture)
    if arch and params is not None:
        return _by_architecture(arch, params, name, strict)
    return None


def authors_token_family(label: Any) -> str | None:
    """The family of an authors' label that their token table knows, or None.

    The longest key of ``BASE_MODEL_TOKENS`` (:func:`hca.data.authors_tokens`) that is the
    label or starts it followed by ``-`` (``"llama-3.1-8b"`` -> ``"llama-3.1"``,
    ``"gemma-2-9b"`` -> ``"gemma-2-9b"``, ``"mixtral-8x7b"`` -> ``"mixtral"``); labels of a
    family without a token count (``"gemma-2-5b"``, ``"mpt-..."`` spelled ``mpt``) give None.
    """
    return authors_token_families([label])[0]


def authors_token_families(labels: Iterable[Any]) -> list[str | None]:
    """:func:`authors_token_family` of every label, reading the token table once."""
    keys = sorted(authors_tokens().index, key=len, reverse=True)  # longest first
    texts = [_text(label) for label in labels]
    return [
        None if t is None else next((k for k in keys if t == k or t.startswith(k + "-")), None)
        for t in texts
    ]


def v2_frame_authors(
    include_final: bool = False, dedupe: bool = False, final: pd.DataFrame | None = None
) -> pd.DataFrame:
    """The v2 leaderboard with domains by the authors' rule (:func:`authors_base_model`).

    ``authors_label`` holds the label of every row and ``base_model`` the book's name of
    the eight base models of Section 1.1 (NA elsewhere). By default every CSV row is kept, duplicates at
    another precision included, as in the authors' notebook; ``include_final`` adds the
    models only in the final HTML table (name and parameter count only, so steps 2 and 4
    cannot apply to them); ``final`` is the parsed final table to use
    (:func:`hca.data.loaders.load_leaderboard_v2`; default: parse the file). Computed afresh
    on every call (about 0.3 s); the book keeps one per process in its results store
    (:func:`hca.paper.replication.v2_authors`).
    """
    df = load_leaderboard_v2(include_final=include_final, dedupe=dedupe, final=final)
    cols = ["model_id", "base_model_hub", "architecture", "params_b"]
    labels = [authors_base_model(*row) for row in df[cols].itertuples(index=False)]
    df["authors_label"] = pd.Series(labels, index=df.index, dtype="string")
    df["base_model"] = df["authors_label"].map(AUTHORS_V2_LABELS).astype("string")
    return df


def v1_frame_authors(dedupe: bool = False) -> pd.DataFrame:
    """Leaderboard v1 with domains by the authors' rule, as their code builds it.

    The authors ran the very function that labels v2 (``determine_pretraining_tokens``) on
    the v1 file: hlzhang109/causal-eval @ 248059ca8849635b0508167116feaf06a07918d9,
    ``scripts/find_token_size.ipynb``, cell ``FT0_FLe0MxZI``, last line (commented there,
    ``process_csv(TABLE_DIR + 'open_llm_leaderboard_old.csv', ...)``); ``scripts/main.ipynb``
    (cell ``4HFSJYAt8eLf``) and ``scripts/find_proximal_benchmark.ipynb`` (cell
    ``HV6fN1TnwgoF``) keep the commented configuration that reads the result, and
    ``scripts/subgroup_pca.ipynb`` (cell ``jIvjpr5bUCj5``) prints its label counts. So this is
    :func:`authors_base_model` with ``strict=True`` (the notebook's function literally) on
    every row of the v1 file: v1 has no Base Model column (step 2 never applies), and its
    parameter counts are whole billions (``#Params (B)`` rounded by the leaderboard).

    ``authors_label`` holds the label of every row and ``base_model`` the book's name of the
    six base models of Appendix H.4 (:data:`AUTHORS_V1_LABELS`; NA elsewhere). Domains are the
    exact labels; the authors' notebooks select a domain's rows by substring
    (``str.contains``), which would also put the ``llama-2-70b`` rows into ``llama-2-7b``'s
    domain: this function does not (a row belongs to one domain). By default every CSV row is
    kept (their table keeps the duplicates at another precision).
    """
    df = load_leaderboard_v1(dedupe=dedupe)
    cols = ["model_id", "architecture", "params_b"]
    labels = [
        authors_base_model(name, None, arch, params, strict=True)
        for name, arch, params in df[cols].itertuples(index=False)
    ]
    df["authors_label"] = pd.Series(labels, index=df.index, dtype="string")
    df["base_model"] = df["authors_label"].map(AUTHORS_V1_LABELS).astype("string")
    return df
