"""One canonical base model (:class:`BaseModel`) and the helpers that write catalogue entries.

:mod:`hca.attribution.catalogue` assembles the catalogue from the families in
:mod:`hca.attribution.families_llama_qwen` and :mod:`hca.attribution.families_other`.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "BaseModel",
    "LAYERS",
    "LLAMA_ARCHS",
    "QWEN2_ARCHS",
    "MISTRAL_ARCHS",
    "entry",
    "qwen25_entry",
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


LLAMA_ARCHS = ("LlamaForCausalLM",)
QWEN2_ARCHS = ("Qwen2ForCausalLM",)
MISTRAL_ARCHS = ("MistralForCausalLM",)


def entry(
    name,
    family,
    key,
    version,
    variant,
    sizes,
    params,
    alt,
    archs,
    rule,
    released,
    hub=(),
    aliases=(),
):
    """A :class:`BaseModel` from plain values (lists become tuples, hub names lower case)."""
    return BaseModel(
        name,
        family,
        key,
        version,
        variant,
        tuple(sizes),
        float(params),
        tuple(float(a) for a in alt),
        tuple(archs),
        rule,
        released,
        tuple(h.lower() for h in hub),
        tuple(aliases),
    )


def qwen25_entry(size, params, alt, released="2024-09-19"):
    """The Qwen2.5 base model of ``size`` (all sizes share one naming scheme)."""
    s = size.lower()
    return entry(
        f"Qwen2.5-{size}",
        "Qwen2.5",
        "qwen",
        "2.5",
        None,
        [s],
        params,
        alt,
        QWEN2_ARCHS,
        "generous",
        released,
        hub=[f"qwen2.5-{s}", f"qwen2.5-{s}-instruct", f"qwen2.5-{s}-instruct-1m"],
    )
