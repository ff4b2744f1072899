"""Attribute leaderboard models to their pretrained base model (the paper's *domains*).

The paper (Appendix B, "Matching models on the leaderboard with the base models") maps every
leaderboard model to the pretrained checkpoint it was fine-tuned from, with identification
layers of decreasing confidence, and returns *no attribution* rather than a weak one.  This
module implements that idea with these layers, tried in order:

``hub``
    The leaderboard's own ``Base Model`` column (``base_model_hub``) names a known official
    base or instruct checkpoint (or a verbatim mirror such as ``unsloth/...``).  Instruct
    checkpoints are followed to their base: a fine-tune of ``Meta-Llama-3-8B-Instruct`` is in
    the ``Llama-3-8B`` domain.  When the column names the model itself it is no evidence.
``name_explicit``
    The model name names one base model with its size (``Llama-3.1-8B``, ``qwen2.5-7b``,
    ``L3-8B-Stheno``, ``Mistral-Nemo-12B``, ``gemma-2-9b``, ...).
``hub_name``
    The same explicit parse applied to the name of the hub ancestor when that ancestor is not
    an official checkpoint (e.g. another fine-tune or a merge root).
``name_family``
    The name names a family, possibly with version but without a usable size (``qwen2.5``,
    ``mistral``, ``llama3``); the parameter count, the architecture and the upload date must
    leave exactly one candidate.
``architecture``
    Architecture plus parameter count only.  Strict for ``LlamaForCausalLM`` (many non-Llama
    models use it): an exact (non-integer) count within 0.3 % of a known shape, and LLaMA-1
    shapes, reused by from-scratch models (OpenLLaMA, Amber, K2), only make look-alikes
    ambiguous and are never attributed this way.  Generous (2 %, integer counts accepted) for
    architectures that usually mean inherited weights (Qwen2, Mistral, Mixtral, Gemma/Gemma-2,
    Phi).  Never used for merges or for models typed as pretrained from scratch, and never
    when the name mentions a model family (that is the ``name_family`` layer's call).

Where two bases have the *same* architecture and shape (Llama-3-8B vs Llama-3.1-8B, Qwen2-7B
vs Qwen2.5-7B, Llama-7B vs Llama-2-7B, SmolLM vs SmolLM2, Yi vs Yi-1.5, Phi-3 vs Phi-3.5
mini), parameters cannot separate them.  The only extra evidence used is the model's date:
a model uploaded (or submitted) more than a week before a base's public release cannot
descend from it (models of the developers' own organisations are exempt: their repositories
predate the announcement).  If candidates remain ambiguous after that, the model is left
unattributed.  Hence an 8.03B ``LlamaForCausalLM`` model without family evidence in its name is
``Llama-3-8B`` if dated before 2024-07-16 and unattributed otherwise.

Parameter counts: a non-integer ``params_b`` is taken as exact (to the leaderboard's
rounding); an integer value is taken as truncated or rounded (v1's ``#Params (B)`` is an
integer, e.g. 6 for Llama-2-7B's 6.74B), i.e. the interval ``[p - 0.5, p + 1)``.

Pretraining compute ``C = 6 N D`` uses :func:`pretraining_tokens`, a small cited table
shipped in ``data/pretraining_tokens.csv``; see :func:`pretraining_compute`.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path
import numpy as np
import pandas as pd

__all__ = [
    "Attribution",
    "BaseModel",
    "BASE_MODELS",
    "LAYERS",
    "identify",
    "identify_name",
    "domain_sizes",
    "join_v1_metadata",
    "pretraining_tokens",
    "pretraining_compute",
    "add_compute",
    "PAPER_V2_BASES",
    "PAPER_V1_BASES",
]

#: Identification layers in decreasing order of confidence.
LAYERS: tuple[str, ...] = ("hub", "name_explicit", "hub_name", "name_family", "architecture")

#: The eight base models of the paper's Section 1.1 (M_1..M_8 in the paper's order).
PAPER_V2_BASES: tuple[str, ...] = (
    "Llama-3-8B",
    "Qwen2.5-14B",
    "Qwen2.5-0.5B",
    "Llama-3.1-8B",
    "Qwen2-7B",
    "Mistral-7B",
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

# A model dated more than this many days before a base's public release cannot descend from
# it.
_DATE_MARGIN_DAYS = 7
# The developers' own organisations upload official checkpoints before the public release;
# their models are exempt from the date check.
_DEVELOPER_ORGS = {"meta-llama", "qwen", "mistralai", "google", "microsoft", "01-ai", "tiiuae",
                   "huggingfacetb", "upstage", "deepseek-ai", "codellama"}
# Relative tolerance of the parameter-consistency check in the name and hub layers
# (fine-tunes with resized vocabularies, LoRA merges, counting artefacts).
_NAME_REL_TOL = 0.12
# The name-family layer only knows the family: parameters must fit more closely.
_FAMILY_REL_TOL = 0.03


# --------------------------------------------------------------------------------------
# Registry of base models
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class BaseModel:
    """One pretrained base model (a domain).

    Attributes
    ----------
    name : str
        Canonical name, following the paper (``"Llama-3-8B"``).
    family : str
        Family label (``"Llama-3"``, ``"Qwen2.5"``, ...).
    key : str
        Family keyword in names (``"llama"``, ``"qwen"``, ``"mistral"``, ...).
    version : str or None
        Version as written after the keyword (``"3.1"``, ``"2.5"``); None if the family has
        no version number in names (``mistral``, ``mixtral``).
    variant : str or None
        Variant word that must follow the keyword (``"coder"``, ``"math"``, ``"nemo"``).
    sizes : tuple of str
        Size labels in names (``"8b"``, ``"0.5b"``, ``"8x7b"``, ``"mini"``).  An empty tuple
        means the family+version alone names this base (``phi-4``, ``mistral-nemo``).
    params_b : float
        Parameter count (billions) of the official checkpoint, as the leaderboard reports it.
    alt_params_b : tuple of float
        Other parameter counts of the same weights (untied embeddings in fine-tunes).
    archs : tuple of str
        Architectures of the official checkpoints (and verbatim conversions).
    arch_rule : {"strict", "generous", "compete"} or None
        How the architecture layer may use this base; None: never by architecture alone;
        "compete": matched strictly, so that it makes look-alikes ambiguous, but never
        attributed by architecture alone (LLaMA-1 shapes are reused by from-scratch models
        such as OpenLLaMA, Amber or K2).
    released : str
        Public release date (ISO), used only to exclude impossible descendants.
    hub_names : tuple of str
        Official repository names (without org) of base and instruct checkpoints.
    aliases : tuple of str
        Extra regular expressions (on the lower-cased name) that name this base explicitly.
    parent : str or None
        For official continued-pretraining bases (Coder, Math, Yi-1.5, ...): the base whose
        weights they continue.  A model whose hub column names the parent but whose name
        names this base is attributed to this base.
    """

    name: str
    family: str
    key: str
    version: str | None
    variant: str | None
    sizes: tuple[str, ...]
    params_b: float
    alt_params_b: tuple[float, ...]
    archs: tuple[str, ...]
    arch_rule: str | None
    released: str
    hub_names: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()
    parent: str | None = None

    @property
    def signatures(self) -> tuple[float, ...]:
        return (self.params_b,) + self.alt_params_b


_LLAMA = ("LlamaForCausalLM",)
_QWEN2 = ("Qwen2ForCausalLM",)
_MISTRAL = ("MistralForCausalLM",)


def _b(name, family, key, version, variant, sizes, params, alt, archs, rule, released,
       hub=(), aliases=()):
    return BaseModel(name, family, key, version, variant, tuple(sizes), float(params),
                     tuple(float(a) for a in alt), tuple(archs), rule, released,
                     tuple(h.lower() for h in hub), tuple(aliases))


def _qwen25(size, params, alt, released="2024-09-19"):
    s = size.lower()
    return _b(f"Qwen2.5-{size}", "Qwen2.5", "qwen", "2.5", None, [s], params, alt, _QWEN2,
              "generous", released,
              hub=[f"qwen2.5-{s}", f"qwen2.5-{s}-instruct", f"qwen2.5-{s}-instruct-1m"])


BASE_MODELS: tuple[BaseModel, ...] = (
    # ---- Llama 1 / 2 / Code Llama -------------------------------------------------------
    _b("Llama-7B", "Llama", "llama", "1", None, ["7b"], 6.738, [], _LLAMA, "compete",
       "2023-02-24", hub=["llama-7b"]),
    _b("Llama-13B", "Llama", "llama", "1", None, ["13b"], 13.016, [], _LLAMA, "compete",
       "2023-02-24", hub=["llama-13b"]),
    _b("Llama-30B", "Llama", "llama", "1", None, ["30b", "33b"], 32.529, [], _LLAMA,
       "compete", "2023-02-24", hub=["llama-30b"]),
    _b("Llama-65B", "Llama", "llama", "1", None, ["65b"], 65.286, [], _LLAMA, "compete",
       "2023-02-24", hub=["llama-65b"]),
    _b("Llama-2-7B", "Llama-2", "llama", "2", None, ["7b"], 6.738, [], _LLAMA, "strict",
       "2023-07-18", hub=["llama-2-7b-hf", "llama-2-7b-chat-hf", "llama-2-7b"]),
    _b("Llama-2-13B", "Llama-2", "llama", "2", None, ["13b"], 13.016, [], _LLAMA, "strict",
       "2023-07-18", hub=["llama-2-13b-hf", "llama-2-13b-chat-hf", "llama-2-13b"]),
    _b("Llama-2-70B", "Llama-2", "llama", "2", None, ["70b"], 68.977, [], _LLAMA, "strict",
       "2023-07-18", hub=["llama-2-70b-hf", "llama-2-70b-chat-hf", "llama-2-70b"]),
    _b("CodeLlama-7B", "CodeLlama", "codellama", None, None, ["7b"], 6.738, [], _LLAMA,
       None, "2023-08-24", hub=["codellama-7b-hf", "codellama-7b-instruct-hf",
                                "codellama-7b-python-hf"]),
    _b("CodeLlama-13B", "CodeLlama", "codellama", None, None, ["13b"], 13.016, [], _LLAMA,
       None, "2023-08-24", hub=["codellama-13b-hf", "codellama-13b-instruct-hf",
                                "codellama-13b-python-hf"]),
    _b("CodeLlama-34B", "CodeLlama", "codellama", None, None, ["34b"], 33.744, [], _LLAMA,
       None, "2023-08-24", hub=["codellama-34b-hf", "codellama-34b-instruct-hf",
                                "codellama-34b-python-hf"]),
    # ---- Llama 3.x -------------------------------------------------------------------------
    _b("Llama-3-8B", "Llama-3", "llama", "3", None, ["8b"], 8.030, [], _LLAMA, "strict",
       "2024-04-18", hub=["meta-llama-3-8b", "meta-llama-3-8b-instruct", "llama-3-8b",
                          "llama-3-8b-instruct", "llama-3-8b-instruct-gradient-1048k"]),
    _b("Llama-3-70B", "Llama-3", "llama", "3", None, ["70b"], 70.554, [], _LLAMA, "strict",
       "2024-04-18", hub=["meta-llama-3-70b", "meta-llama-3-70b-instruct", "llama-3-70b",
                          "llama-3-70b-instruct"]),
    _b("Llama-3.1-8B", "Llama-3.1", "llama", "3.1", None, ["8b"], 8.030, [], _LLAMA,
       "strict", "2024-07-23",
       hub=["meta-llama-3.1-8b", "meta-llama-3.1-8b-instruct", "llama-3.1-8b",
            "llama-3.1-8b-instruct", "deepseek-r1-distill-llama-8b", "llama-3.1-tulu-3-8b",
            "llama-3.1-tulu-3-8b-sft", "llama-3.1-tulu-3-8b-dpo", "llama-3.1-storm-8b",
            "hermes-3-llama-3.1-8b", "llama-3.1-nemotron-nano-8b-v1"],
       aliases=[r"r1-distill-llama-8b"]),
    _b("Llama-3.1-70B", "Llama-3.1", "llama", "3.1", None, ["70b"], 70.554, [], _LLAMA,
       "strict", "2024-07-23",
       hub=["meta-llama-3.1-70b", "meta-llama-3.1-70b-instruct", "llama-3.1-70b",
            "llama-3.1-70b-instruct", "llama-3.1-nemotron-70b-instruct-hf",
            "llama-3.1-tulu-3-70b", "llama-3.1-tulu-3-70b-sft", "llama-3.1-tulu-3-70b-dpo",
            "hermes-3-llama-3.1-70b"]),
    _b("Llama-3.3-70B", "Llama-3.3", "llama", "3.3", None, ["70b"], 70.554, [], _LLAMA,
       "strict", "2024-12-06", hub=["llama-3.3-70b-instruct", "deepseek-r1-distill-llama-70b"],
       aliases=[r"r1-distill-llama-70b"]),
    _b("Llama-3.2-1B", "Llama-3.2", "llama", "3.2", None, ["1b"], 1.236, [1.498], _LLAMA,
       "strict", "2024-09-25", hub=["llama-3.2-1b", "llama-3.2-1b-instruct"]),
    _b("Llama-3.2-3B", "Llama-3.2", "llama", "3.2", None, ["3b"], 3.213, [3.607], _LLAMA,
       "strict", "2024-09-25", hub=["llama-3.2-3b", "llama-3.2-3b-instruct"]),
    # ---- Qwen (1), Qwen1.5 ----------------------------------------------------------------
    _b("Qwen-1.8B", "Qwen", "qwen", "1", None, ["1.8b"], 1.837, [], ("QWenLMHeadModel",),
       "generous", "2023-11-30", hub=["qwen-1_8b", "qwen-1_8b-chat"]),
    _b("Qwen-7B", "Qwen", "qwen", "1", None, ["7b"], 7.721, [], ("QWenLMHeadModel",),
       "generous", "2023-08-03", hub=["qwen-7b", "qwen-7b-chat"]),
    _b("Qwen-14B", "Qwen", "qwen", "1", None, ["14b"], 14.167, [], ("QWenLMHeadModel",),
       "generous", "2023-09-25", hub=["qwen-14b", "qwen-14b-chat"]),
    _b("Qwen-72B", "Qwen", "qwen", "1", None, ["72b"], 72.288, [], ("QWenLMHeadModel",),
       "generous", "2023-11-30", hub=["qwen-72b", "qwen-72b-chat"]),
    *[
        _b(f"Qwen1.5-{s}", "Qwen1.5", "qwen", "1.5", None, [s.lower()], p, alt, _QWEN2,
           "generous", rel, hub=[f"qwen1.5-{s.lower()}", f"qwen1.5-{s.lower()}-chat"])
        for s, p, alt, rel in [
            ("0.5B", 0.464, [0.620], "2024-02-04"),
            ("1.8B", 1.837, [2.0], "2024-02-04"),
            ("4B", 3.950, [], "2024-02-04"),
            ("7B", 7.721, [], "2024-02-04"),
            ("14B", 14.167, [], "2024-02-04"),
            ("32B", 32.512, [], "2024-04-02"),
            ("72B", 72.288, [], "2024-02-04"),
            ("110B", 111.210, [], "2024-04-25"),
        ]
    ],
    # ---- Qwen2 ------------------------------------------------------------------------------
    _b("Qwen2-0.5B", "Qwen2", "qwen", "2", None, ["0.5b"], 0.494, [0.630], _QWEN2,
       "generous", "2024-06-06", hub=["qwen2-0.5b", "qwen2-0.5b-instruct"]),
    _b("Qwen2-1.5B", "Qwen2", "qwen", "2", None, ["1.5b"], 1.544, [1.777], _QWEN2,
       "generous", "2024-06-06", hub=["qwen2-1.5b", "qwen2-1.5b-instruct"]),
    _b("Qwen2-7B", "Qwen2", "qwen", "2", None, ["7b"], 7.616, [], _QWEN2, "generous",
       "2024-06-06", hub=["qwen2-7b", "qwen2-7b-instruct"]),
    _b("Qwen2-57B-A14B", "Qwen2", "qwen", "2", "moe", ["57b"], 57.409, [],
       ("Qwen2MoeForCausalLM",), "generous", "2024-06-06",
       hub=["qwen2-57b-a14b", "qwen2-57b-a14b-instruct"], aliases=[r"qwen2-57b-a14b"]),
    _b("Qwen2-72B", "Qwen2", "qwen", "2", None, ["72b"], 72.706, [], _QWEN2, "generous",
       "2024-06-06", hub=["qwen2-72b", "qwen2-72b-instruct"]),
    # ---- Qwen2.5 (+ Coder, Math) ----------------------------------------------------------
    _qwen25("0.5B", 0.494, [0.630]),
    _qwen25("1.5B", 1.544, [1.777]),
    _qwen25("3B", 3.086, [3.397]),
    _b("Qwen2.5-7B", "Qwen2.5", "qwen", "2.5", None, ["7b"], 7.616, [], _QWEN2, "generous",
       "2024-09-19", hub=["qwen2.5-7b", "qwen2.5-7b-instruct", "qwen2.5-7b-instruct-1m"]),
    _b("Qwen2.5-14B", "Qwen2.5", "qwen", "2.5", None, ["14b"], 14.770, [], _QWEN2,
       "generous", "2024-09-19",
       hub=["qwen2.5-14b", "qwen2.5-14b-instruct", "qwen2.5-14b-instruct-1m",
            "deepseek-r1-distill-qwen-14b", "supernova-medius"],
       aliases=[r"r1-distill-qwen-14b"]),
    _b("Qwen2.5-32B", "Qwen2.5", "qwen", "2.5", None, ["32b"], 32.764, [], _QWEN2,
       "generous", "2024-09-19",
       hub=["qwen2.5-32b", "qwen2.5-32b-instruct", "qwq-32b-preview",
            "deepseek-r1-distill-qwen-32b"],
       aliases=[r"r1-distill-qwen-32b", r"(?<![a-z0-9])qwq-32b"]),
    _b("Qwen2.5-72B", "Qwen2.5", "qwen", "2.5", None, ["72b"], 72.706, [], _QWEN2,
       "generous", "2024-09-19", hub=["qwen2.5-72b", "qwen2.5-72b-instruct"]),
    *[
        _b(f"Qwen2.5-Coder-{s}", "Qwen2.5-Coder", "qwen", "2.5", "coder", [s.lower()], p, alt,
           _QWEN2, None, rel,
           hub=[f"qwen2.5-coder-{s.lower()}", f"qwen2.5-coder-{s.lower()}-instruct"])
        for s, p, alt, rel in [
            ("0.5B", 0.494, [0.630], "2024-11-12"),
            ("1.5B", 1.544, [1.777], "2024-09-19"),
            ("3B", 3.086, [3.397], "2024-11-12"),
            ("7B", 7.616, [], "2024-09-19"),
            ("14B", 14.770, [], "2024-11-12"),
            ("32B", 32.764, [], "2024-11-12"),
        ]
    ],
    _b("Qwen2.5-Math-1.5B", "Qwen2.5-Math", "qwen", "2.5", "math", ["1.5b"], 1.544, [1.777],
       _QWEN2, None, "2024-09-19",
       hub=["qwen2.5-math-1.5b", "qwen2.5-math-1.5b-instruct", "deepseek-r1-distill-qwen-1.5b"],
       aliases=[r"r1-distill-qwen-1\.5b"]),
    _b("Qwen2.5-Math-7B", "Qwen2.5-Math", "qwen", "2.5", "math", ["7b"], 7.616, [], _QWEN2,
       None, "2024-09-19",
       hub=["qwen2.5-math-7b", "qwen2.5-math-7b-instruct", "deepseek-r1-distill-qwen-7b"],
       aliases=[r"r1-distill-qwen-7b"]),
    _b("Qwen2.5-Math-72B", "Qwen2.5-Math", "qwen", "2.5", "math", ["72b"], 72.706, [],
       _QWEN2, None, "2024-09-19", hub=["qwen2.5-math-72b", "qwen2.5-math-72b-instruct"]),
    # ---- Mistral AI -----------------------------------------------------------------------
    _b("Mistral-7B", "Mistral", "mistral", None, None, ["7b"], 7.242, [7.248], _MISTRAL,
       "generous", "2023-09-27",
       hub=["mistral-7b-v0.1", "mistral-7b-v0.2", "mistral-7b-v0.3", "mistral-7b-instruct-v0.1",
            "mistral-7b-instruct-v0.2", "mistral-7b-instruct-v0.3", "mistral-7b",
            "mistral-7b-instruct", "zephyr-7b-beta", "zephyr-7b-alpha", "openchat_3.5",
            "openchat-3.5-0106", "openchat-3.5-1210", "openhermes-2.5-mistral-7b",
            "neural-chat-7b-v3-1", "starling-lm-7b-alpha", "starling-lm-7b-beta",
            "mistral-7b-instruct-v0.3-bnb-4bit", "zephyr-sft", "wizardlm-2-7b"]),
    _b("Mistral-Nemo-12B", "Mistral-Nemo", "mistral", None, "nemo", ["12b", ""], 12.248, [],
       _MISTRAL, "generous", "2024-07-18",
       hub=["mistral-nemo-base-2407", "mistral-nemo-instruct-2407"],
       aliases=[r"(?<![a-z0-9])mn-12b"]),
    _b("Mistral-Small-22B", "Mistral-Small", "mistral", None, "small", ["22b", "2409"],
       22.247, [], _MISTRAL, "generous", "2024-09-17",
       hub=["mistral-small-instruct-2409"]),
    _b("Mistral-Small-24B", "Mistral-Small", "mistral", None, "small", ["24b", "2501"],
       23.572, [], _MISTRAL, "generous", "2025-01-30",
       hub=["mistral-small-24b-base-2501", "mistral-small-24b-instruct-2501"]),
    _b("Codestral-22B", "Codestral", "codestral", None, None, ["22b", ""], 22.247, [],
       _MISTRAL, "generous", "2024-05-29", hub=["codestral-22b-v0.1"]),
    _b("Mixtral-8x7B", "Mixtral", "mixtral", None, None, ["8x7b"], 46.703, [],
       ("MixtralForCausalLM",), "generous", "2023-12-11",
       hub=["mixtral-8x7b-v0.1", "mixtral-8x7b-instruct-v0.1"]),
    _b("Mixtral-8x22B", "Mixtral", "mixtral", None, None, ["8x22b"], 140.621, [],
       ("MixtralForCausalLM",), "generous", "2024-04-10",
       hub=["mixtral-8x22b-v0.1", "mixtral-8x22b-instruct-v0.1"]),
    _b("SOLAR-10.7B", "SOLAR", "solar", None, None, ["10.7b", ""], 10.732, [], _LLAMA, None,
       "2023-12-12", hub=["solar-10.7b-v1.0", "solar-10.7b-instruct-v1.0"]),
    # ---- Google Gemma -----------------------------------------------------------------------
    _b("Gemma-2B", "Gemma", "gemma", "1", None, ["2b"], 2.506, [], ("GemmaForCausalLM",),
       "generous", "2024-02-21", hub=["gemma-2b", "gemma-2b-it", "gemma-1.1-2b-it"]),
    _b("Gemma-7B", "Gemma", "gemma", "1", None, ["7b"], 8.538, [], ("GemmaForCausalLM",),
       "generous", "2024-02-21", hub=["gemma-7b", "gemma-7b-it", "gemma-1.1-7b-it"]),
    _b("Gemma-2-2B", "Gemma-2", "gemma", "2", None, ["2b"], 2.614, [3.204],
       ("Gemma2ForCausalLM",), "generous", "2024-07-31",
       hub=["gemma-2-2b", "gemma-2-2b-it", "gemma-2-2b-jpn-it"]),
    _b("Gemma-2-9B", "Gemma-2", "gemma", "2", None, ["9b"], 9.242, [10.159],
       ("Gemma2ForCausalLM",), "generous", "2024-06-27", hub=["gemma-2-9b", "gemma-2-9b-it"]),
    _b("Gemma-2-27B", "Gemma-2", "gemma", "2", None, ["27b"], 27.227, [],
       ("Gemma2ForCausalLM",), "generous", "2024-06-27",
       hub=["gemma-2-27b", "gemma-2-27b-it"]),
    # ---- Microsoft Phi ----------------------------------------------------------------------
    _b("Phi-1.5", "Phi", "phi", "1.5", None, ["", "1.3b"], 1.418, [], ("PhiForCausalLM",),
       "generous", "2023-09-11", hub=["phi-1_5", "phi-1.5"]),
    _b("Phi-2", "Phi", "phi", "2", None, ["", "2.7b"], 2.780, [2.775], ("PhiForCausalLM",),
       "generous", "2023-12-12", hub=["phi-2"]),
    _b("Phi-3-mini", "Phi-3", "phi", "3", None, ["mini", "3.8b", "4b"], 3.821, [],
       ("Phi3ForCausalLM",), "generous", "2024-04-23",
       hub=["phi-3-mini-4k-instruct", "phi-3-mini-128k-instruct"]),
    _b("Phi-3-small", "Phi-3", "phi", "3", None, ["small", "7b"], 7.392, [],
       ("Phi3SmallForCausalLM",), "generous", "2024-05-21",
       hub=["phi-3-small-8k-instruct", "phi-3-small-128k-instruct"]),
    _b("Phi-3-medium", "Phi-3", "phi", "3", None, ["medium", "14b"], 13.960, [],
       ("Phi3ForCausalLM",), "generous", "2024-05-21",
       hub=["phi-3-medium-4k-instruct", "phi-3-medium-128k-instruct"]),
    _b("Phi-3.5-mini", "Phi-3.5", "phi", "3.5", None, ["mini", "3.8b", "4b"], 3.821, [],
       ("Phi3ForCausalLM",), "generous", "2024-08-20", hub=["phi-3.5-mini-instruct"]),
    _b("Phi-4", "Phi-4", "phi", "4", None, ["", "14b"], 14.660, [],
       ("Phi3ForCausalLM", "LlamaForCausalLM"), "generous", "2024-12-12", hub=["phi-4"]),
    # ---- 01.AI Yi ---------------------------------------------------------------------------
    _b("Yi-6B", "Yi", "yi", "1", None, ["6b"], 6.061, [], _LLAMA, "strict", "2023-11-02",
       hub=["yi-6b", "yi-6b-chat", "yi-6b-200k"]),
    _b("Yi-9B", "Yi", "yi", "1", None, ["9b"], 8.829, [], _LLAMA, "strict", "2024-03-06",
       hub=["yi-9b", "yi-9b-200k"]),
    _b("Yi-34B", "Yi", "yi", "1", None, ["34b"], 34.389, [], _LLAMA, "strict", "2023-11-02",
       hub=["yi-34b", "yi-34b-chat", "yi-34b-200k"]),
    _b("Yi-1.5-6B", "Yi-1.5", "yi", "1.5", None, ["6b"], 6.061, [], _LLAMA, "strict",
       "2024-05-12", hub=["yi-1.5-6b", "yi-1.5-6b-chat"]),
    _b("Yi-1.5-9B", "Yi-1.5", "yi", "1.5", None, ["9b"], 8.829, [], _LLAMA, "strict",
       "2024-05-12", hub=["yi-1.5-9b", "yi-1.5-9b-chat", "yi-1.5-9b-32k", "yi-1.5-9b-chat-16k"]),
    _b("Yi-1.5-34B", "Yi-1.5", "yi", "1.5", None, ["34b"], 34.389, [], _LLAMA, "strict",
       "2024-05-12",
       hub=["yi-1.5-34b", "yi-1.5-34b-chat", "yi-1.5-34b-32k", "yi-1.5-34b-chat-16k"]),
    # ---- TII Falcon -------------------------------------------------------------------------
    _b("Falcon-7B", "Falcon", "falcon", "1", None, ["7b"], 6.922, [], ("FalconForCausalLM",),
       "generous", "2023-05-24", hub=["falcon-7b", "falcon-7b-instruct"]),
    _b("Falcon-40B", "Falcon", "falcon", "1", None, ["40b"], 41.840, [],
       ("FalconForCausalLM",), "generous", "2023-05-24", hub=["falcon-40b", "falcon-40b-instruct"]),
    _b("Falcon-180B", "Falcon", "falcon", "1", None, ["180b"], 179.522, [],
       ("FalconForCausalLM",), "generous", "2023-09-06", hub=["falcon-180b", "falcon-180b-chat"]),
    *[
        _b(f"Falcon3-{s}", "Falcon3", "falcon", "3", None, [s.lower()], p, [], _LLAMA, "strict",
           "2024-12-17", hub=[f"falcon3-{s.lower()}-base", f"falcon3-{s.lower()}-instruct"])
        for s, p in [("1B", 1.669), ("3B", 3.228), ("7B", 7.456), ("10B", 10.306)]
    ],
    # ---- Hugging Face SmolLM ----------------------------------------------------------------
    *[
        _b(f"{fam}-{s}", fam, "smollm", ver, None, [s.lower()], p, [], _LLAMA, None, rel,
           hub=[f"{fam.lower()}-{s.lower()}", f"{fam.lower()}-{s.lower()}-instruct"])
        for fam, ver, rel in [("SmolLM", "1", "2024-07-16"), ("SmolLM2", "2", "2024-10-31")]
        for s, p in [("135M", 0.135), ("360M", 0.362), ("1.7B", 1.711)]
    ],
)

_PARENTS = {
    **{f"Qwen2.5-Coder-{s}": f"Qwen2.5-{s}" for s in ("0.5B", "1.5B", "3B", "7B", "14B", "32B")},
    **{f"Qwen2.5-Math-{s}": f"Qwen2.5-{s}" for s in ("1.5B", "7B", "72B")},
    "CodeLlama-7B": "Llama-2-7B", "CodeLlama-13B": "Llama-2-13B",
    "Yi-1.5-6B": "Yi-6B", "Yi-1.5-9B": "Yi-9B", "Yi-1.5-34B": "Yi-34B", "Yi-9B": "Yi-6B",
    "SOLAR-10.7B": "Mistral-7B", "Falcon3-10B": "Falcon3-7B",
}
BASE_MODELS = tuple(replace(b, parent=_PARENTS.get(b.name)) for b in BASE_MODELS)



# --------------------------------------------------------------------------------------
# Attribution result
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Attribution:
    """Result of identifying one model's base model.

    Attributes
    ----------
    base_model : str or None
        Canonical base model name, or None (no attribution).
    layer : str or None
        The identification layer that decided (one of :data:`LAYERS`), or None.
    evidence : str
        What was matched (text, parameters, dates) or why nothing was attributed.
    """

    base_model: str | None
    layer: str | None
    evidence: str

    def summary(self) -> str:
        """One line: base model, layer and evidence."""
        if self.base_model is None:
            return f"unattributed ({self.evidence})"
        return f"{self.base_model} [{self.layer}] ({self.evidence})"




# --------------------------------------------------------------------------------------
# Name parsing
# --------------------------------------------------------------------------------------

# Spans that look like a family keyword but are other model families; removed before parsing.
_VETO = re.compile(
    r"tiny[-_ ]?llama|open[-_ ]?llama|smol[-_ ]?llama|micro[-_ ]?llama|mobi[-_ ]?llama"
    r"|sheared[-_ ]?llama|llama[-_ ]?pro|llama[-_ ]?guard|amd[-_ ]?llama|llava|llama[-_ ]?68m"
    r"|llama[-_ ]?160m|code[-_ ]?qwen|recurrent[-_ ]?gemma|code[-_ ]?gemma|pali[-_ ]?gemma"
    r"|falcon[-_ ]?mamba|falcon[-_ ]?rw|falcon[-_ ]?h1|mistral[-_ ]?large|mathstral"
    r"|phi[-_ ]?3(?:\.5)?[-_ ]?(?:vision|moe)|qwen[-_ ]?\d?(?:\.\d)?[-_ ]?(?:vl|audio)"
    r"|llama[-_ ]?3(?:\.\d)?[-_ ]?\d*b?[-_ ]?vision|mixtral[-_ ]?\d+x\d+b[-_ ]?v0\.1[-_ ]?moe"
    r"|yi[-_ ]?coder|yi[-_ ]?vl|minitron|nemotron[-_ ]?mini"
)
_KEYWORD = re.compile(
    r"(?<![a-z0-9])(?P<l3>l-?3)(?:[._](?P<l3sub>[123]))?(?=[-_ ]|$)"
    r"|(?<![a-z0-9])(?P<q25>q2\.5)(?=[-_ ]|$)"
    r"|(?<![a-z0-9])(?P<mn>mn)(?=[-_])"
    r"|(?<![0-9])(?P<qw>qwen)"
    r"|(?<=[a-z])(?P<pl>llama)(?=[-_ ]?[23](?:[._]\d)?(?![\d]))"
    r"|(?<![a-z0-9])(?:meta[-_ ]?)?(?P<kw>codellama|llama|qwq|mistral|mixtral|codestral|gemma"
    r"|smollm|(?:phi|yi|falcon|solar)(?![a-z]))"
)
_VERSION = re.compile(r"[-_ ]?v?(?P<v>\d+(?:[._]\d+)?)(?![\d])")
_VERSION_INT = re.compile(r"[-_ ]?v?(?P<v>\d+)(?=[-_ ])")
_SIZE = re.compile(r"^(?:\d+x)?\d+(?:\.\d+)?[bm]$")
_VARIANTS = {"qwen": {"coder", "math", "moe"}, "mistral": {"nemo", "small"}}
_PHI_SIZES = {"mini", "small", "medium"}
_VERSION_ALIASES = {("gemma", "1.1"): "1", ("llama", "3.0"): "3", ("qwen", "2.0"): "2"}


@dataclass(frozen=True)
class _Mention:
    key: str
    version: str | None
    variant: str | None
    size: str | None
    text: str
    abbrev: bool = False


def _norm_version(v: str) -> str:
    v = v.replace("_", ".")
    if v.endswith(".0"):
        v = v[:-2]
    return v


@lru_cache(maxsize=65536)
def _parse_mentions(name: str) -> tuple[_Mention, ...]:
    """Family mentions (keyword, version, variant, size) in a lower-cased model name."""
    # "qwen2-1_5b" -> "qwen2-1.5b" (fractional sizes only; "llama-3_8b" is version 3, 8b)
    s = re.sub(r"(?<![\d.])([01])_(\d)(?=[bm](?![a-z]))", r"\1.\2", name.lower())
    s = _VETO.sub(" ", s)
    out = []
    for m in _KEYWORD.finditer(s):
        if m.group("l3"):
            key, version = "llama", "3" + ("." + m.group("l3sub") if m.group("l3sub") else "")
        elif m.group("mn"):
            key, version = "mistral", None
        elif m.group("q25"):
            key, version = "qwen", "2.5"
        else:
            key = m.group("kw") or m.group("qw") or m.group("pl")
            version = None
        pos = m.end()
        variant = "nemo" if m.group("mn") else None
        if key == "qwq":
            key, version = "qwen", "2.5"
        if version is None and not m.group("mn"):
            vm = _VERSION.match(s, pos)
            if vm and re.match(r"[bmx]", s[vm.end():vm.end() + 1] or " "):
                # "llama-3_8b": the version is "3", the size "8b"
                vm = _VERSION_INT.match(s, pos)
            if vm and not re.match(r"[bmx]", s[vm.end():vm.end() + 1] or " "):
                version = _norm_version(vm.group("v"))
                pos = vm.end()
        # the following tokens: variant word and size, until the next keyword
        nxt = _KEYWORD.search(s, pos)
        stop = nxt.start() if nxt else len(s)
        tokens = [t for t in re.split(r"[-_ ]+", s[pos:stop]) if t][:4]
        size = None
        for t in tokens:
            t = t.strip(".")
            if key == "phi" and t in _PHI_SIZES:
                size = t
                break
            if t in _VARIANTS.get(key, ()) and variant is None and size is None:
                variant = t
            elif _SIZE.match(t):
                size = t
                break
            elif variant == "small" and t in ("2409", "2501"):
                size = t
                break
        if key == "mistral" and variant is None and re.match(r"[-_ ]?nemo", s[pos:]):
            variant = "nemo"
        text = s[m.start():stop].strip("-_ ")
        version = _VERSION_ALIASES.get((key, version), version)
        abbrev = bool(m.group("mn") or m.group("q25"))
        out.append(_Mention(key, version, variant, size, text, abbrev))
    return tuple(out)


def _candidates(m: _Mention, use_size: bool = True) -> list[BaseModel]:
    """Registry entries compatible with one mention."""
    res = []
    for b in BASE_MODELS:
        if b.key != m.key or b.variant != m.variant:
            continue
        if m.version is not None and b.version is not None and b.version != m.version:
            continue
        if m.version is not None and b.version is None and m.key not in ("mistral",):
            continue
        if use_size and m.size is not None and m.size not in b.sizes:
            continue
        res.append(b)
    return res


def _explicit(m: _Mention) -> BaseModel | None:
    """The base a mention names explicitly (family [+version] + size, unique), else None."""
    if m.size is None:
        if m.abbrev:
            return None
        # families whose version alone names one base (phi-4, mistral-nemo, solar)
        c = [b for b in _candidates(m, use_size=False) if "" in b.sizes]
        if m.version is None and m.key not in ("mistral", "codestral", "solar"):
            return None
        return c[0] if len(c) == 1 else None
    c = _candidates(m)
    return c[0] if len(c) == 1 else None


@lru_cache(maxsize=1)
def _alias_regex() -> tuple[re.Pattern, dict[str, BaseModel]]:
    groups, owners = [], {}
    for i, b in enumerate(BASE_MODELS):
        for j, a in enumerate(b.aliases):
            g = f"a{i}_{j}"
            groups.append(f"(?P<{g}>{a})")
            owners[g] = b
    return re.compile("|".join(groups)), owners


def _alias_hits(name: str) -> list[BaseModel]:
    rx, owners = _alias_regex()
    s = name.lower()
    found: dict[str, BaseModel] = {}
    for m in rx.finditer(s):
        b = owners[m.lastgroup]
        found[b.name] = b
    return list(found.values())


# --------------------------------------------------------------------------------------
# Parameter / architecture / date checks
# --------------------------------------------------------------------------------------


def _param_interval(params_b: float | None) -> tuple[float, float] | None:
    """Interval of plausible true parameter counts for a reported value (billions)."""
    if params_b is None or not np.isfinite(params_b) or params_b < 0:
        return None
    if float(params_b).is_integer():
        # integer: truncated (v1: 6 for 6.74B) or rounded; 0 means "below 1B"
        return (max(params_b - 0.5, 0.0), params_b + 1.0)
    # reported to 2-3 decimals (e.g. 0.13 for SmolLM-135M's 0.135B)
    half = max(params_b * 0.0005, 0.005)
    return (params_b - half, params_b + half)


def _distance(b: BaseModel, iv: tuple[float, float]) -> float:
    """Smallest relative distance between the interval and one of the base's signatures."""
    lo, hi = iv
    best = math.inf
    for sig in b.signatures:
        if lo <= sig <= hi:
            return 0.0
        best = min(best, (lo - sig) / sig if lo > sig else (sig - hi) / sig)
    return best


def _params_consistent(b: BaseModel, iv: tuple[float, float] | None,
                       rel: float = _NAME_REL_TOL, allow_double: bool = False) -> bool:
    """Whether reported parameters fit the base within ``rel``.

    ``allow_double`` also accepts twice the count: the leaderboard derives parameters from
    the size of the weights, so checkpoints stored in float32 show up with 2N.
    """
    if iv is None:
        return True
    if _distance(b, iv) <= rel:
        return True
    if allow_double:
        lo, hi = iv
        return _distance(b, (lo / 2, hi / 2)) <= 0.005
    return False


def _nearest(cands: list[BaseModel], iv: tuple[float, float], rel: float,
             tie: float = 0.003) -> list[BaseModel]:
    """Candidates within ``rel`` of the parameters, keeping only the (tied) nearest ones."""
    scored = [(c, _distance(c, iv)) for c in cands]
    scored = [(c, d) for c, d in scored if d <= rel]
    if not scored:
        return []
    best = min(d for _, d in scored)
    return [c for c, d in scored if d <= best + tie]


def _arch_window_match(b: BaseModel, iv: tuple[float, float]) -> bool:
    """Architecture-layer parameter check.

    Strict bases (Llama architecture) need an exact parameter count (not an integer) within
    0.3 % of a signature.  Generous bases accept 2 % or an integer (truncated) count whose
    interval contains a signature.
    """
    lo, hi = iv
    exact = hi - lo < 0.5
    if b.arch_rule in ("strict", "compete"):
        return exact and _distance(b, iv) <= 0.003
    if b.arch_rule == "generous":
        return _distance(b, iv) <= 0.02
    return False


_ARCH_ALIASES = {"Qwen2Model": "Qwen2ForCausalLM", "LlamaModel": "LlamaForCausalLM",
                 "MistralModel": "MistralForCausalLM"}


def _norm_arch(a: str | None) -> str | None:
    if a is None or (isinstance(a, float) and math.isnan(a)):
        return None
    a = str(a).strip()
    if a in ("", "?", "Unknown", "nan"):
        return None
    return _ARCH_ALIASES.get(a, a)


def _arch_ok(b: BaseModel, arch: str | None) -> bool:
    return arch is None or arch in b.archs


@lru_cache(maxsize=None)
def _earliest_descendant_date(released: str) -> str:
    return (pd.Timestamp(released) - pd.Timedelta(days=_DATE_MARGIN_DAYS)).strftime("%Y-%m-%d")


def _date_ok(b: BaseModel, date: str | None) -> bool:
    """False if a model dated ``date`` (ISO) is too early to descend from ``b``."""
    if date is None:
        return True
    return date >= _earliest_descendant_date(b.released)


# --------------------------------------------------------------------------------------
# Hub column
# --------------------------------------------------------------------------------------

_TRUSTED_ORGS = {
    "meta-llama", "qwen", "mistralai", "mistral-community", "google", "microsoft", "01-ai",
    "tiiuae", "huggingfacetb", "upstage", "unsloth", "nousresearch", "deepseek-ai",
    "codellama", "huggyllama", "allenai", "nvidia", "arcee-ai", "huggingfaceh4", "openchat",
    "intel", "nexusflow", "berkeley-nest", "teknium", "akjindal53244", "alpindale",
}
_HUB_SUFFIX = re.compile(r"(?:-(?:bnb-4bit|4bit|8bit|unsloth-bnb-4bit|fp8|awq|gptq|hf|gguf))+$")


@lru_cache(maxsize=None)
def _hub_lookup() -> dict[str, BaseModel]:
    out: dict[str, BaseModel] = {}
    for b in BASE_MODELS:
        for h in b.hub_names:
            out[h] = b
            out[_HUB_SUFFIX.sub("", h)] = b
    return out


def _hub_official(hub: str) -> BaseModel | None:
    if "/" in hub:
        org, repo = hub.lower().split("/", 1)
    else:
        org, repo = "", hub.lower()
    if org and org not in _TRUSTED_ORGS:
        return None
    table = _hub_lookup()
    return table.get(repo) or table.get(_HUB_SUFFIX.sub("", repo))


# --------------------------------------------------------------------------------------
# identify_name
# --------------------------------------------------------------------------------------


def _fmt_params(params_b: float | None) -> str:
    return "params=NA" if params_b is None else f"params={params_b:g}B"


def _clean_str(x) -> str | None:
    if x is None:
        return None
    if isinstance(x, float) and math.isnan(x):
        return None
    if x is pd.NA or x is pd.NaT:
        return None
    s = str(x).strip()
    return s or None


def _clean_float(x) -> float | None:
    if x is None or x is pd.NA:
        return None
    try:
        f = float(x)
    except (TypeError, ValueError):
        return None
    return f if np.isfinite(f) else None


def _clean_date(x) -> str | None:
    s = _clean_str(x)
    if s is None:
        return None
    try:
        ts = pd.Timestamp(s)
    except (ValueError, TypeError):
        return None
    if ts is pd.NaT or pd.isna(ts):
        return None
    if ts.tzinfo is not None:
        ts = ts.tz_convert(None)
    return ts.strftime("%Y-%m-%d")


def _name_explicit(name: str) -> tuple[BaseModel | None, str, bool]:
    """Explicit layer on one name: (base, matched text, conflict)."""
    hits: dict[str, tuple[BaseModel, str]] = {}
    for b in _alias_hits(name):
        hits[b.name] = (b, "alias")
    alias_names = set(hits)
    for m in _parse_mentions(name):
        b = _explicit(m)
        if b is not None:
            hits.setdefault(b.name, (b, m.text))
    if not hits:
        return None, "", False
    # an alias (e.g. R1-Distill-Qwen-7B) overrides the generic parse of the same text
    if len(alias_names) == 1:
        hits = {k: v for k, v in hits.items() if k in alias_names}
    if len(hits) > 1:
        return None, "name names several bases: " + ", ".join(sorted(hits)), True
    b, text = next(iter(hits.values()))
    return b, text, False


def _family_layer(name: str, params_b, iv, arch, date,
                  developer: bool = False) -> Attribution | None:
    """Name-family layer; None if the name mentions no known family keyword."""
    mentions = _parse_mentions(name)
    if not mentions:
        return None
    cands: dict[str, BaseModel] = {}
    texts = []
    for m in mentions:
        texts.append(m.text)
        for b in _candidates(m, use_size=m.size is not None):
            cands[b.name] = b
    p_txt = _fmt_params(params_b)
    if not cands:
        return Attribution(None, None, f"family {texts}: no known base of that family, "
                                       "version and size")
    if iv is None:
        return Attribution(None, None, f"family {texts} but no parameter count")
    pool = [b for b in cands.values() if _arch_ok(b, arch)]
    pool = _nearest(pool, iv, rel=_FAMILY_REL_TOL)
    kept = [b for b in pool if _date_ok(b, date)]
    if developer and len(kept) > 1:
        # a developer's own versionless name is the first version ("01-ai/Yi-34B-200K")
        first = [b for b in kept if b.version == "1"]
        kept = first if len(first) == 1 else kept
    if len(kept) == 1:
        ev = f"family {texts}; {p_txt}" + (f"; {arch}" if arch else "")
        if len(pool) > 1:
            ev += f"; date={date} excludes " + ", ".join(
                sorted(b.name for b in pool if b is not kept[0]))
        return Attribution(kept[0].name, "name_family", ev)
    if len(kept) > 1:
        return Attribution(None, None, f"family {texts} ambiguous at {p_txt}: "
                                       + ", ".join(sorted(k.name for k in kept)))
    return Attribution(None, None, f"family {texts} but no base fits {p_txt}"
                                   + (f", {arch}" if arch else ""))


@lru_cache(maxsize=65536)
def _identify_cached(name: str, params_b: float | None, arch: str | None, hub: str | None,
                     date: str | None, merge: bool, pretrained: bool = False) -> Attribution:
    iv = _param_interval(params_b)
    short = name.split("/", 1)[-1]
    p_txt = _fmt_params(params_b)
    notes = []
    developer = "/" in name and name.split("/", 1)[0].lower() in _DEVELOPER_ORGS
    if developer:
        date = None

    # -- explicit parse of the model's own name (used by the hub and name layers) ---------
    own, own_text, own_conflict = _name_explicit(short)

    # -- layer: hub -----------------------------------------------------------------------
    hub_other = None
    if hub is not None:
        hub_clean = re.sub(r"\s*\(merge\)\s*$", "", hub, flags=re.I).strip()
        if hub_clean.lower() != name.lower():
            b = _hub_official(hub_clean)
            if b is not None:
                ev = f"hub={hub_clean}; {p_txt}"
                if own is not None and own.parent == b.name:
                    # e.g. Qwen2.5-Math-7B: continued pretraining of the hub's base
                    b = own
                    ev = f"hub={hub_clean} is the parent of '{own_text}'; {p_txt}"
                if _params_consistent(b, iv, allow_double=True):
                    return Attribution(b.name, "hub", ev)
                notes.append(f"hub={hub_clean} ({b.name}) inconsistent with {p_txt}")
            else:
                hub_other = hub_clean

    # -- layer: explicit name ---------------------------------------------------------------
    if own_conflict:
        return Attribution(None, None, "; ".join(notes + [own_text]))
    hub_b = None
    if hub_other is not None:
        hub_b, _, hub_conflict = _name_explicit(hub_other.split("/", 1)[-1])
    if own is not None:
        if hub_b is not None and hub_b.name != own.name and hub_b.name != own.parent:
            return Attribution(None, None, f"name says {own.name} ('{own_text}') but hub "
                                           f"ancestor {hub_other} says {hub_b.name}")
        if not _params_consistent(own, iv, allow_double=True):
            return Attribution(None, None, "; ".join(notes + [
                f"name '{own_text}' -> {own.name} ({own.params_b:g}B) but {p_txt} "
                "inconsistent"]))
        return Attribution(own.name, "name_explicit", f"'{own_text}'; {p_txt}")

    # -- layer: hub ancestor's name -------------------------------------------------------
    if hub_b is not None:
        if _params_consistent(hub_b, iv, allow_double=True):
            return Attribution(hub_b.name, "hub_name", f"hub ancestor '{hub_other}'; {p_txt}")
        notes.append(f"hub ancestor {hub_other} -> {hub_b.name} inconsistent with {p_txt}")

    # -- layer: family (+ version) in the name, parameters disambiguate ---------------------
    fam = _family_layer(short, params_b, iv, arch, date, developer)
    if fam is not None:
        if fam.base_model is None and notes:
            return Attribution(None, None, "; ".join(notes + [fam.evidence]))
        return fam
    if notes:
        return Attribution(None, None, "; ".join(notes))

    # -- layer: architecture + parameters ---------------------------------------------------
    veto = _VETO.search(short.lower())
    if veto:
        return Attribution(None, None, f"name names another family ('{veto.group(0)}')")
    if merge:
        return Attribution(None, None, "merge without name/hub evidence")
    if pretrained:
        return Attribution(None, None, "pretrained (from scratch) model without name/hub "
                                       "evidence: architecture alone is no evidence")
    if arch is None or iv is None:
        return Attribution(None, None, "no name/hub evidence and no architecture/parameters")
    arch_c = [b for b in BASE_MODELS if b.arch_rule and arch in b.archs
              and _arch_window_match(b, iv)]
    arch_c = _nearest(arch_c, iv, rel=1.0)
    if not arch_c:
        return Attribution(None, None, f"no base fits {arch} at {p_txt}")
    kept = [b for b in arch_c if _date_ok(b, date)]
    if len(kept) == 1 and kept[0].arch_rule == "compete":
        return Attribution(None, None, f"{arch} at {p_txt} has the shape of {kept[0].name}, "
                                       "which is not attributed by architecture alone")
    if len(kept) == 1:
        ev = f"{arch}; {p_txt}"
        if len(arch_c) > 1:
            ev += f"; date={date} excludes " + ", ".join(
                sorted(b.name for b in arch_c if b is not kept[0]))
        return Attribution(kept[0].name, "architecture", ev)
    return Attribution(None, None, f"{arch} at {p_txt} ambiguous: "
                                   + ", ".join(sorted(b.name for b in (kept or arch_c))))


def identify_name(name: str, params_b: float | None = None, architecture: str | None = None,
                  base_model_hub: str | None = None, date: str | None = None,
                  merge: bool = False, pretrained: bool = False) -> Attribution:
    """Identify the base model of one leaderboard model.

    Parameters
    ----------
    name : str
        Model id (``org/name``) or bare name.  Matching is case-insensitive.
    params_b : float, optional
        Parameter count in billions.  Integer values are taken as truncated/rounded.
    architecture : str, optional
        Hugging Face architecture (``"LlamaForCausalLM"``); ``"?"``/``"Unknown"`` = missing.
    base_model_hub : str, optional
        The leaderboard's ``Base Model`` column (v2).  Ignored when it names the model itself.
    date : str, optional
        Upload (or submission) date; a model dated more than a week before a base's release
        is not attributed to that base.
    merge : bool, default False
        Whether the model is a merge.  Merges are attributed only on name or hub evidence,
        never by architecture alone.
    pretrained : bool, default False
        Whether the leaderboard types the model as pretrained (from scratch, not
        "continuously pretrained").  Such models are never attributed by architecture alone:
        a from-scratch model with a borrowed architecture has no inherited weights.

    Returns
    -------
    Attribution
        ``base_model`` is a canonical name (see :data:`BASE_MODELS`) or None.

    Examples
    --------
    >>> identify_name("NousResearch/Hermes-3-Llama-3.1-8B", 8.03).base_model
    'Llama-3.1-8B'
    >>> identify_name("someone/my-model", 8.03, "LlamaForCausalLM").base_model is None
    True
    """
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"name must be a non-empty string, got {name!r}")
    return _identify_cached(name.strip(), _clean_float(params_b),
                            _norm_arch(_clean_str(architecture)), _clean_str(base_model_hub),
                            _clean_date(date), bool(merge), bool(pretrained))


# --------------------------------------------------------------------------------------
# identify (data frames)
# --------------------------------------------------------------------------------------

_DATE_COLUMNS = ("upload_date", "submission_date", "date")


def _pretrained_flags(df: pd.DataFrame) -> np.ndarray:
    if "type" not in df.columns:
        return np.zeros(len(df), dtype=bool)
    t = df["type"].astype("string").str.lower()
    return (t.str.contains("pretrained", na=False)
            & ~t.str.contains("continuous", na=False)).to_numpy()


def _merge_flags(df: pd.DataFrame) -> np.ndarray:
    flags = np.zeros(len(df), dtype=bool)
    if "type" in df.columns:
        flags |= df["type"].astype("string").str.contains("merge", case=False,
                                                         na=False).to_numpy()
    if "base_model_hub" in df.columns:
        flags |= df["base_model_hub"].astype("string").str.contains(
            r"\(Merge\)\s*$", case=False, na=False).to_numpy()
    return flags


def _earliest_date(df: pd.DataFrame) -> pd.Series:
    cols = [c for c in _DATE_COLUMNS if c in df.columns]
    if not cols:
        return pd.Series([None] * len(df), index=df.index, dtype=object)
    parsed = [pd.to_datetime(df[c], errors="coerce", utc=True) for c in cols]
    earliest = pd.concat(parsed, axis=1).min(axis=1)
    txt = earliest.dt.strftime("%Y-%m-%d").tolist()
    return pd.Series([t if isinstance(t, str) else None for t in txt], index=df.index,
                     dtype=object)


def identify(df: pd.DataFrame) -> pd.DataFrame:
    """Attribute every row of a leaderboard frame to a base model.

    Parameters
    ----------
    df : pandas.DataFrame
        Must have ``model_id``.  Uses, when present: ``params_b``, ``architecture``,
        ``base_model_hub`` (v2), ``type`` (merges, flagged by a type containing "merge" or a
        ``base_model_hub`` ending in "(Merge)", and from-scratch pretrained models are never
        attributed by architecture alone) and the earliest of ``upload_date``,
        ``submission_date``, ``date`` (release-date exclusion).  Works for v2, v1 and the
        MMLU-by-task frame (for the latter see :func:`join_v1_metadata`).

    Returns
    -------
    pandas.DataFrame
        Aligned with ``df.index``; columns ``base_model`` and ``layer`` (string dtype, NA when
        unattributed) and ``evidence`` (string).
    """
    if not isinstance(df, pd.DataFrame):
        raise TypeError(f"identify expects a pandas DataFrame, got {type(df).__name__}")
    if "model_id" not in df.columns:
        raise ValueError("identify: required column 'model_id' is missing; found columns "
                         f"{list(df.columns)[:12]}")
    names = df["model_id"]
    if names.isna().any():
        bad = df.index[names.isna()][:5].tolist()
        raise ValueError(f"identify: column 'model_id' has missing values (rows {bad})")
    n = len(df)
    params = (pd.to_numeric(df["params_b"], errors="coerce") if "params_b" in df.columns
              else pd.Series(np.nan, index=df.index))
    arch = df["architecture"] if "architecture" in df.columns else pd.Series([None] * n,
                                                                             index=df.index)
    hub = df["base_model_hub"] if "base_model_hub" in df.columns else pd.Series([None] * n,
                                                                               index=df.index)
    dates = _earliest_date(df)
    merges = _merge_flags(df)
    pretrained = _pretrained_flags(df)
    keys = zip(
        names.astype(str).str.strip().tolist(),
        params.to_numpy(dtype=float).tolist(),
        [_norm_arch(_clean_str(a)) for a in arch.tolist()],
        [_clean_str(h) for h in hub.tolist()],
        dates.tolist(),
        merges.tolist(),
        pretrained.tolist(),
    )
    results = [
        _identify_cached(nm, p if np.isfinite(p) else None, a, h, d, bool(mg), bool(pt))
        for nm, p, a, h, d, mg, pt in keys
    ]
    out = pd.DataFrame({
        "base_model": pd.array([r.base_model for r in results], dtype="string"),
        "layer": pd.array([r.layer for r in results], dtype="string"),
        "evidence": pd.array([r.evidence for r in results], dtype="string"),
    }, index=df.index)
    return out


def domain_sizes(attributed: pd.DataFrame | pd.Series, top: int | None = None) -> pd.Series:
    """Number of models per base model (domain), largest first.

    Parameters
    ----------
    attributed : DataFrame with a ``base_model`` column (output of :func:`identify`) or Series
    top : int, optional
        Keep only the ``top`` largest domains.
    """
    s = attributed["base_model"] if isinstance(attributed, pd.DataFrame) else attributed
    counts = s.dropna().value_counts()
    counts.index.name = "base_model"
    counts.name = "n_models"
    return counts if top is None else counts.head(top)


def join_v1_metadata(mmlu: pd.DataFrame, v1: pd.DataFrame,
                     columns: tuple[str, ...] = ("architecture", "date")) -> pd.DataFrame:
    """Add v1 metadata (architecture, date) to the MMLU-by-task frame by model id.

    The MMLU-by-task leaderboard has only names and parameters.  About 4,900 of its models
    are also in v1; this left-joins ``columns`` from ``v1`` on the case-insensitive
    ``model_id`` and fills missing ``params_b`` from v1.  Rows without a match keep NA.

    Returns
    -------
    pandas.DataFrame
        A copy of ``mmlu`` (same index) with the extra columns.
    """
    for nm, frame in (("mmlu", mmlu), ("v1", v1)):
        if "model_id" not in frame.columns:
            raise ValueError(f"join_v1_metadata: frame {nm!r} lacks column 'model_id'")
    cols = [c for c in columns if c in v1.columns]
    extra = cols + (["params_b"] if "params_b" in v1.columns else [])
    right = v1[["model_id"] + extra].copy()
    right["_key"] = right["model_id"].astype(str).str.lower()
    right = right.drop_duplicates("_key").drop(columns="model_id").set_index("_key")
    keys = mmlu["model_id"].astype(str).str.lower()
    out = mmlu.copy()
    for c in cols:
        out[c] = keys.map(right[c]).to_numpy()
    if "params_b" in right.columns:
        v1p = keys.map(right["params_b"]).to_numpy()
        if "params_b" in out.columns:
            out["params_b"] = pd.to_numeric(out["params_b"], errors="coerce").fillna(
                pd.Series(v1p, index=out.index))
        else:
            out["params_b"] = v1p
    return out


# --------------------------------------------------------------------------------------
# Pretraining tokens and compute
# --------------------------------------------------------------------------------------

_TOKENS_PATH = Path(__file__).resolve().parents[1] / "data" / "pretraining_tokens.csv"
_TOKENS_COLUMNS = ("base_model", "family", "params_b", "active_params_b", "tokens_t",
                   "tokens_kind", "source", "note")


@lru_cache(maxsize=1)
def _tokens_table() -> pd.DataFrame:
    if not _TOKENS_PATH.exists():
        raise FileNotFoundError(f"pretraining token table not found at {_TOKENS_PATH}")
    t = pd.read_csv(_TOKENS_PATH, dtype={"base_model": str, "family": str, "source": str,
                                         "note": str, "tokens_kind": str})
    missing = [c for c in _TOKENS_COLUMNS if c not in t.columns]
    if missing:
        raise ValueError(f"{_TOKENS_PATH.name}: missing columns {missing}")
    if t["base_model"].duplicated().any():
        dup = t.loc[t["base_model"].duplicated(), "base_model"].tolist()
        raise ValueError(f"{_TOKENS_PATH.name}: duplicated base_model rows {dup}")
    return t


def pretraining_tokens() -> pd.DataFrame:
    """The cited table of pretraining token counts (``data/pretraining_tokens.csv``).

    Columns: ``base_model`` (canonical), ``family``, ``params_b`` (total parameters, B),
    ``active_params_b`` (active parameters per token for mixtures of experts, else NA),
    ``tokens_t`` (pretraining tokens, trillions; NA if unknown), ``tokens_kind``
    (``reported`` by the developer, or ``estimate`` from a third party), ``source`` and
    ``note``.  Every base :func:`identify` can return has a row.
    """
    return _tokens_table().copy()


def _compute_row(row: pd.Series, params_b: float | None, include_estimates: bool) -> float:
    if not include_estimates and row["tokens_kind"] != "reported":
        return float("nan")
    n = params_b
    if n is None:
        n = row["active_params_b"] if pd.notna(row["active_params_b"]) else row["params_b"]
    d = row["tokens_t"]
    if pd.isna(d) or pd.isna(n):
        return float("nan")
    return 6.0 * float(n) * 1e9 * float(d) * 1e12


def pretraining_compute(base_model: str, params_b: float | None = None,
                        include_estimates: bool = True) -> float:
    """Pretraining compute ``C = 6 N D`` of a base model, in FLOPs.

    Parameters
    ----------
    base_model : str
        Canonical name (as returned by :func:`identify`).
    params_b : float, optional
        N in billions; default: the table's active parameters (MoE) or total parameters.
    include_estimates : bool, default True
        If False, return NaN for bases whose token count is only a third-party estimate.

    Returns
    -------
    float
        FLOPs (e.g. about 7.2e23 for Llama-3-8B); NaN where the token count is unknown.
    """
    t = _tokens_table()
    rows = t[t["base_model"] == base_model]
    if rows.empty:
        raise ValueError(f"pretraining_compute: unknown base model {base_model!r}; known: "
                         f"{', '.join(t['base_model'].head(8))}, ...")
    if params_b is not None and (not np.isfinite(params_b) or params_b <= 0):
        raise ValueError(f"pretraining_compute: params_b must be positive, got {params_b}")
    return _compute_row(rows.iloc[0], params_b, include_estimates)


def add_compute(df: pd.DataFrame, base_col: str = "base_model",
                include_estimates: bool = True) -> pd.DataFrame:
    """Add pretraining tokens and compute of each row's base model.

    If ``df`` has no ``base_col`` column, :func:`identify` is run first (and its columns are
    added too).  Adds ``tokens_t`` (trillions), ``compute_flops`` (``6 N D`` in FLOPs, with N
    the base model's parameters, active ones for MoE) and ``log10_compute``.  Unattributed
    rows and bases with unknown tokens get NaN.

    Returns
    -------
    pandas.DataFrame
        A copy of ``df`` with the new columns.
    """
    out = df.copy()
    if base_col not in out.columns:
        ident = identify(df)
        out = out.join(ident)
        base_col = "base_model"
    t = _tokens_table().set_index("base_model")
    flops = {b: _compute_row(row, None, include_estimates) for b, row in t.iterrows()}
    tokens = t["tokens_t"].where(
        (t["tokens_kind"] == "reported") | include_estimates)
    base = out[base_col].astype("string")
    out["tokens_t"] = base.map(tokens).astype(float).to_numpy()
    out["compute_flops"] = base.map(pd.Series(flops)).astype(float).to_numpy()
    with np.errstate(divide="ignore", invalid="ignore"):
        out["log10_compute"] = np.log10(out["compute_flops"].to_numpy())
    return out
