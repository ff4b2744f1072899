"""The catalogue of canonical base models (names, sizes, architectures, release dates).

The entries live by family in :mod:`hca.attribution.families_llama_qwen` and
:mod:`hca.attribution.families_other`; :class:`BaseModel` in :mod:`hca.attribution.base_model`.
This module assembles :data:`BASE_MODELS` and sets each model's ``parent``.
"""

from __future__ import annotations

from dataclasses import replace

from hca.attribution.base_model import LAYERS, BaseModel
from hca.attribution.families_llama_qwen import LLAMA_QWEN
from hca.attribution.families_other import OTHER_FAMILIES

__all__ = [
    "BaseModel",
    "BASE_MODELS",
    "LAYERS",
]

_PARENTS = {
    **{f"Qwen2.5-Coder-{s}": f"Qwen2.5-{s}" for s in ("0.5B", "1.5B", "3B", "7B", "14B", "32B")},
    **{f"Qwen2.5-Math-{s}": f"Qwen2.5-{s}" for s in ("1.5B", "7B", "72B")},
    "CodeLlama-7B": "Llama-2-7B",
    "CodeLlama-13B": "Llama-2-13B",
    "Yi-1.5-6B": "Yi-6B",
    "Yi-1.5-9B": "Yi-9B",
    "Yi-1.5-34B": "Yi-34B",
    "Yi-9B": "Yi-6B",
    "SOLAR-10.7B": "Mistral-7B",
    "Falcon3-10B": "Falcon3-7B",
}
#: Every canonical base model, in catalogue order (Llama and Qwen first).
BASE_MODELS: tuple[BaseModel, ...] = tuple(
    replace(b, parent=_PARENTS.get(b.name)) for b in (*LLAMA_QWEN, *OTHER_FAMILIES)
)
