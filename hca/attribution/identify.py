"""Layered identification of each leaderboard model's base model (Appendix B)."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date as _date
from datetime import timedelta
from types import MappingProxyType

import numpy as np
import pandas as pd

from hca.attribution.catalogue import BASE_MODELS, BaseModel

__all__ = [
    "Attribution",
    "identify",
    "identify_name",
    "domain_sizes",
    "join_v1_metadata",
]


# A model dated more than this many days before a base's public release cannot descend from
# it.
_DATE_MARGIN_DAYS = 7
# The developers' own organisations upload official checkpoints before the public release;
# their models are exempt from the date check.
_DEVELOPER_ORGS = set(
    """
    meta-llama qwen mistralai google microsoft 01-ai tiiuae huggingfacetb upstage deepseek-ai
    codellama
    """.split()
)
# Relative tolerance of the parameter-consistency check in the name and hub layers
# (fine-tunes with resized vocabularies, LoRA merges, counting artefacts).
_NAME_REL_TOL = 0.12
# The name-family layer only knows the family: parameters must fit more closely.
_FAMILY_REL_TOL = 0.03


# ------------------------------------------------------------------------------ Attribution result


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


# ------------------------------------------------------------------------------------ Name parsing

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
            if vm and re.match(r"[bmx]", s[vm.end() : vm.end() + 1] or " "):
                # "llama-3_8b": the version is "3", the size "8b"
                vm = _VERSION_INT.match(s, pos)
            if vm and not re.match(r"[bmx]", s[vm.end() : vm.end() + 1] or " "):
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
        text = s[m.start() : stop].strip("-_ ")
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


def _alias_regex() -> tuple[re.Pattern, dict[str, BaseModel]]:
    groups, owners = [], {}
    for i, b in enumerate(BASE_MODELS):
        for j, a in enumerate(b.aliases):
            g = f"a{i}_{j}"
            groups.append(f"(?P<{g}>{a})")
            owners[g] = b
    return re.compile("|".join(groups)), owners


def _alias_hits(name: str) -> list[BaseModel]:
    s = name.lower()
    found: dict[str, BaseModel] = {}
    for m in _ALIAS_RX.finditer(s):
        b = _ALIAS_OWNERS[m.lastgroup]
        found[b.name] = b
    return list(found.values())


# ---------------------------------------------------------- Parameter / architecture / date checks


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


def _params_consistent(
    b: BaseModel,
    iv: tuple[float, float] | None,
    rel: float = _NAME_REL_TOL,
    allow_double: bool = False,
) -> bool:
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


def _nearest(
    cands: list[BaseModel], iv: tuple[float, float], rel: float, tie: float = 0.003
) -> list[BaseModel]:
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


_ARCH_ALIASES = {
    "Qwen2Model": "Qwen2ForCausalLM",
    "LlamaModel": "LlamaForCausalLM",
    "MistralModel": "MistralForCausalLM",
}


def _norm_arch(a: str | None) -> str | None:
    if a is None or (isinstance(a, float) and math.isnan(a)):
        return None
    a = str(a).strip()
    if a in ("", "?", "Unknown", "nan"):
        return None
    return _ARCH_ALIASES.get(a, a)


def _arch_ok(b: BaseModel, arch: str | None) -> bool:
    return arch is None or arch in b.archs


def _earliest_descendant_date(released: str) -> str:
    """The earliest ISO date a descendant of a base released on ``released`` may carry."""
    return (_date.fromisoformat(released) - timedelta(days=_DATE_MARGIN_DAYS)).isoformat()


def _date_ok(b: BaseModel, date: str | None) -> bool:
    """False if a model dated ``date`` (ISO) is too early to descend from ``b``."""
    if date is None:
        return True
    return date >= _EARLIEST[b.name]


# -------------------------------------------------------------------------------------- Hub column

_TRUSTED_ORGS = _DEVELOPER_ORGS | set(
    """
    mistral-community unsloth nousresearch huggyllama allenai nvidia arcee-ai huggingfaceh4
    openchat intel nexusflow berkeley-nest teknium akjindal53244 alpindale
    """.split()
)
_HUB_SUFFIX = re.compile(r"(?:-(?:bnb-4bit|4bit|8bit|unsloth-bnb-4bit|fp8|awq|gptq|hf|gguf))+$")


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
    table = _HUB_TABLE
    return table.get(repo) or table.get(_HUB_SUFFIX.sub("", repo))


#: Tables derived from the constant :data:`BASE_MODELS` at import and never changed
#: (read-only mappings; constants, not stores): the alias regex and its groups' owners, the
#: hub names, and the earliest date a descendant of each base may carry.
_ALIAS_RX, _owners = _alias_regex()
_ALIAS_OWNERS: Mapping[str, BaseModel] = MappingProxyType(_owners)
_HUB_TABLE: Mapping[str, BaseModel] = MappingProxyType(_hub_lookup())
_EARLIEST: Mapping[str, str] = MappingProxyType(
    {b.name: _earliest_descendant_date(b.released) for b in BASE_MODELS}
)
del _owners


@dataclass(frozen=True)
class _Lookup:
    """The state of one identification run: ``mentions``, a memo of :func:`_parse_mentions`
    for this run only (a name is parsed for its own layer, its hub's and its family's). Made
    at the start of every :func:`identify` / :func:`identify_name` call and passed down, so
    nothing is kept between calls."""

    mentions: dict[str, tuple[_Mention, ...]] = field(default_factory=dict)

    def parse(self, name: str) -> tuple[_Mention, ...]:
        """:func:`_parse_mentions` of ``name``, parsed once per run."""
        found = self.mentions.get(name)
        if found is None:
            found = self.mentions[name] = _parse_mentions(name)
        return found


# ----------------------------------------------------------------------------------- identify_name


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


def _name_explicit(name: str, lookup: _Lookup) -> tuple[BaseModel | None, str, bool]:
    """Explicit layer on one name: (base, matched text, conflict)."""
    hits: dict[str, tuple[BaseModel, str]] = {}
    for b in _alias_hits(name):
        hits[b.name] = (b, "alias")
    alias_names = set(hits)
    for m in lookup.parse(name):
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


def _family_layer(
    name: str, params_b, iv, arch, date, lookup: _Lookup, developer: bool = False
) -> Attribution | None:
    """Name-family layer; None if the name mentions no known family keyword."""
    mentions = lookup.parse(name)
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
        return Attribution(
            None, None, f"family {texts}: no known base of that family, version and size"
        )
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
                sorted(b.name for b in pool if b is not kept[0])
            )
        return Attribution(kept[0].name, "name_family", ev)
    if len(kept) > 1:
        return Attribution(
            None,
            None,
            f"family {texts} ambiguous at {p_txt}: " + ", ".join(sorted(k.name for k in kept)),
        )
    return Attribution(
        None, None, f"family {texts} but no base fits {p_txt}" + (f", {arch}" if arch else "")
    )


def _identify_one(
    lookup: _Lookup,
    name: str,
    params_b: float | None,
    arch: str | None,
    hub: str | None,
    date: str | None,
    merge: bool,
    pretrained: bool = False,
) -> Attribution:
    iv = _param_interval(params_b)
    short = name.split("/", 1)[-1]
    p_txt = _fmt_params(params_b)
    notes = []
    developer = "/" in name and name.split("/", 1)[0].lower() in _DEVELOPER_ORGS
    if developer:
        date = None

    # -- explicit parse of the model's own name (used by the hub and name layers) ---------
    own, own_text, own_conflict = _name_explicit(short, lookup)

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
        hub_b, _, hub_conflict = _name_explicit(hub_other.split("/", 1)[-1], lookup)
    if own is not None:
        if hub_b is not None and hub_b.name != own.name and hub_b.name != own.parent:
            return Attribution(
                None,
                None,
                f"name says {own.name} ('{own_text}') but hub "
                f"ancestor {hub_other} says {hub_b.name}",
            )
        if not _params_consistent(own, iv, allow_double=True):
            return Attribution(
                None,
                None,
                "; ".join(
                    notes
                    + [
                        f"name '{own_text}' -> {own.name} ({own.params_b:g}B) but {p_txt} "
                        "inconsistent"
                    ]
                ),
            )
        return Attribution(own.name, "name_explicit", f"'{own_text}'; {p_txt}")

    # -- layer: hub ancestor's name -------------------------------------------------------
    if hub_b is not None:
        if _params_consistent(hub_b, iv, allow_double=True):
            return Attribution(hub_b.name, "hub_name", f"hub ancestor '{hub_other}'; {p_txt}")
        notes.append(f"hub ancestor {hub_other} -> {hub_b.name} inconsistent with {p_txt}")

    # -- layer: family (+ version) in the name, parameters disambiguate ---------------------
    fam = _family_layer(short, params_b, iv, arch, date, lookup, developer)
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
        return Attribution(
            None,
            None,
            "pretrained (from scratch) model without name/hub "
            "evidence: architecture alone is no evidence",
        )
    if arch is None or iv is None:
        return Attribution(None, None, "no name/hub evidence and no architecture/parameters")
    arch_c = [
        b for b in BASE_MODELS if b.arch_rule and arch in b.archs and _arch_window_match(b, iv)
    ]
    arch_c = _nearest(arch_c, iv, rel=1.0)
    if not arch_c:
        return Attribution(None, None, f"no base fits {arch} at {p_txt}")
    kept = [b for b in arch_c if _date_ok(b, date)]
    if len(kept) == 1 and kept[0].arch_rule == "compete":
        return Attribution(
            None,
            None,
            f"{arch} at {p_txt} has the shape of {kept[0].name}, "
            "which is not attributed by architecture alone",
        )
    if len(kept) == 1:
        ev = f"{arch}; {p_txt}"
        if len(arch_c) > 1:
            ev += f"; date={date} excludes " + ", ".join(
                sorted(b.name for b in arch_c if b is not kept[0])
            )
        return Attribution(kept[0].name, "architecture", ev)
    return Attribution(
        None,
        None,
        f"{arch} at {p_txt} ambiguous: " + ", ".join(sorted(b.name for b in (kept or arch_c))),
    )


def identify_name(
    name: str,
    params_b: float | None = None,
    architecture: str | None = None,
    base_model_hub: str | None = None,
    date: str | None = None,
    merge: bool = False,
    pretrained: bool = False,
) -> Attribution:
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
    return _identify_one(
        _Lookup(),
        name.strip(),
        _clean_float(params_b),
        _norm_arch(_clean_str(architecture)),
        _clean_str(base_model_hub),
        _clean_date(date),
        bool(merge),
        bool(pretrained),
    )


# -------------------------------------------------------------------------- identify (data frames)

_DATE_COLUMNS = ("upload_date", "submission_date", "date")


def _pretrained_flags(frame: pd.DataFrame) -> np.ndarray:
    if "type" not in frame.columns:
        return np.zeros(len(frame), dtype=bool)
    t = frame["type"].astype("string").str.lower()
    return (
        t.str.contains("pretrained", na=False) & ~t.str.contains("continuous", na=False)
    ).to_numpy()


def _merge_flags(frame: pd.DataFrame) -> np.ndarray:
    flags = np.zeros(len(frame), dtype=bool)
    if "type" in frame.columns:
        flags |= (
            frame["type"].astype("string").str.contains("merge", case=False, na=False).to_numpy()
        )
    if "base_model_hub" in frame.columns:
        flags |= (
            frame["base_model_hub"]
            .astype("string")
            .str.contains(r"\(Merge\)\s*$", case=False, na=False)
            .to_numpy()
        )
    return flags


def _earliest_date(frame: pd.DataFrame) -> pd.Series:
    cols = [c for c in _DATE_COLUMNS if c in frame.columns]
    if not cols:
        return pd.Series([None] * len(frame), index=frame.index, dtype=object)
    parsed = [pd.to_datetime(frame[c], errors="coerce", utc=True) for c in cols]
    earliest = pd.concat(parsed, axis=1).min(axis=1)
    txt = earliest.dt.strftime("%Y-%m-%d").tolist()
    return pd.Series(
        [t if isinstance(t, str) else None for t in txt], index=frame.index, dtype=object
    )


def identify(frame: pd.DataFrame) -> pd.DataFrame:
    """Attribute every row of a leaderboard frame to a base model.

    Parameters
    ----------
    frame : pandas.DataFrame
        Must have ``model_id``.  Uses, when present: ``params_b``, ``architecture``,
        ``base_model_hub`` (v2), ``type`` (merges, flagged by a type containing "merge" or a
        ``base_model_hub`` ending in "(Merge)", and from-scratch pretrained models are never
        attributed by architecture alone) and the earliest of ``upload_date``,
        ``submission_date``, ``date`` (release-date exclusion).  Works for v2, v1 and the
        MMLU-by-task frame (for the latter see :func:`join_v1_metadata`).

    Returns
    -------
    pandas.DataFrame
        Aligned with ``frame.index``; columns ``base_model`` and ``layer`` (string dtype, NA when
        unattributed) and ``evidence`` (string).
    """
    if not isinstance(frame, pd.DataFrame):
        raise TypeError(f"identify expects a pandas DataFrame, got {type(frame).__name__}")
    if "model_id" not in frame.columns:
        raise ValueError(
            "identify: required column 'model_id' is missing; found columns "
            f"{list(frame.columns)[:12]}"
        )
    names = frame["model_id"]
    if names.isna().any():
        bad = frame.index[names.isna()][:5].tolist()
        raise ValueError(f"identify: column 'model_id' has missing values (rows {bad})")
    n = len(frame)
    params = (
        pd.to_numeric(frame["params_b"], errors="coerce")
        if "params_b" in frame.columns
        else pd.Series(np.nan, index=frame.index)
    )
    none = pd.Series([None] * n, index=frame.index)
    arch, hub = frame.get("architecture", none), frame.get("base_model_hub", none)
    dates = _earliest_date(frame)
    merges = _merge_flags(frame)
    pretrained = _pretrained_flags(frame)
    keys = zip(
        names.astype(str).str.strip().tolist(),
        params.to_numpy(dtype=float).tolist(),
        [_norm_arch(_clean_str(a)) for a in arch.tolist()],
        [_clean_str(h) for h in hub.tolist()],
        dates.tolist(),
        merges.tolist(),
        pretrained.tolist(),
    )
    lookup = _Lookup()
    done: dict[tuple, Attribution] = {}  # rows with the same inputs (within this call)
    results = []
    for nm, p, a, h, d, mg, pt in keys:
        key = (nm, p if np.isfinite(p) else None, a, h, d, bool(mg), bool(pt))
        if key not in done:
            done[key] = _identify_one(lookup, *key)
        results.append(done[key])
    columns = ("base_model", "layer", "evidence")
    return pd.DataFrame(
        {c: pd.array([getattr(r, c) for r in results], dtype="string") for c in columns},
        index=frame.index,
    )


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


def join_v1_metadata(
    mmlu: pd.DataFrame, v1: pd.DataFrame, columns: tuple[str, ...] = ("architecture", "date")
) -> pd.DataFrame:
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
                pd.Series(v1p, index=out.index)
            )
        else:
            out["params_b"] = v1p
    return out
