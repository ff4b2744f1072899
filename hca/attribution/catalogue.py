"""The catalogue of canonical base models (names, sizes, architectures, release dates).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

__all__ = [
    "BaseModel",
    "BASE_MODELS",
    "LAYERS",
]


#: Identification layers in decreasing order of confidence.
LAYERS: tuple[str, ...] = ("hub", "name_explicit", "hub_name", "name_family", "architecture")


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
