"""The domain labels of ``python -m hca fit``, read as written and compared as a reader would.

The domain column is text, exactly as written in the CSV: ``"01"``, ``"1"``, ``"002"`` and
``"2"`` are four domains, ``"1"`` and ``"1.0"`` two. Then, in this order:

1. **Unicode forms.** Labels equal after NFC normalisation (a composed and a decomposed "é")
   are one domain, with a note.
2. **Invisible differences.** Labels that still print the same once invisible characters
   (Unicode format characters such as a zero-width space) and surrounding spaces are removed,
   and case is folded, are refused naming both: which one is meant cannot be told.
3. **Case.** Labels equal after case folding (``LlamaForCausalLM`` and ``LLaMAForCausalLM``,
   Hugging Face ids ``Org/Model`` and ``org/model``) are merged into the most frequent
   spelling, with a note naming every spelling and its rows. Merged rather than refused: on
   leaderboards these are one base model or architecture written two ways (the Hub's ids
   are case-insensitive; ``transformers`` renamed ``LLaMA`` to ``Llama``), and a refusal
   would stop every real table; two domains meant to differ only in case are renamed in the
   CSV.
4. **Placeholders.** Labels that name no domain (``?``, ``Unknown``, ``Removed``, ``N/A``,
   ``None``, ``-``, blank, ...) stay domains of their own, with a note giving their rows and
   the ``--drop-domain`` options that drop them.
"""

from __future__ import annotations

import shlex
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import pandas as pd

from hca.validation import InputError

__all__ = [
    "PLACEHOLDER_WORDS",
    "Labels",
    "fold",
    "is_placeholder",
    "normalise_labels",
    "drop_labels",
    "placeholder_note",
]

#: Labels (compared after case folding, spaces stripped) that stand for "no domain"; a label
#: with no letter or digit at all (``?``, ``-``, ``""``, spaces) is one too.
PLACEHOLDER_WORDS = frozenset(
    {
        "unknown",
        "removed",
        "deleted",
        "n/a",
        "na",
        "n.a.",
        "none",
        "null",
        "nil",
        "nan",
        "missing",
        "undefined",
        "unspecified",
        "not available",
        "tbd",
        "todo",
    }
)


def _visible(label: str) -> str:
    """``label`` without invisible characters (Unicode category Cf) and surrounding spaces."""
    return "".join(c for c in label if unicodedata.category(c) != "Cf").strip()


def fold(label: str) -> str:
    """The key under which two labels are one domain: NFC, case folded, NFC again."""
    return unicodedata.normalize("NFC", unicodedata.normalize("NFC", label).casefold())


def is_placeholder(label: str) -> bool:
    """Whether ``label`` stands for "no domain" (:data:`PLACEHOLDER_WORDS`, or no letter or
    digit at all)."""
    shown = _visible(label).casefold()
    return shown in PLACEHOLDER_WORDS or not any(c.isalnum() for c in shown)


@dataclass(frozen=True)
class Labels:
    """The domain column after :func:`normalise_labels`.

    Attributes
    ----------
    values : Series
        One label per row (missing ones stay missing), every spelling of a domain replaced
        by the domain's name.
    unicode_forms : dict
        Domain -> the Unicode forms merged into it (when more than one).
    case_spellings : dict
        Domain -> {spelling: rows} of the spellings merged into it (when more than one).
    notes : tuple of str
        One line per merge.
    """

    values: pd.Series
    unicode_forms: dict = field(default_factory=dict)
    case_spellings: dict = field(default_factory=dict)
    notes: tuple = ()


def _rows(n: int) -> str:
    return f"{n:,} row{'s' * (n != 1)}"


def normalise_labels(labels: pd.Series) -> Labels:
    """Merge the spellings of one domain and refuse labels that cannot be told apart (module
    docstring: steps 1-3).

    Parameters
    ----------
    labels : Series of str
        The domain column as written (missing values allowed).

    Raises
    ------
    InputError
        Two labels that print the same but differ in invisible characters or surrounding
        spaces.
    """
    present = labels.dropna().astype(str)
    nfc = present.map(lambda v: unicodedata.normalize("NFC", v))
    notes: list[str] = []
    forms: dict[str, list[str]] = {}
    for raw in pd.unique(present):
        forms.setdefault(unicodedata.normalize("NFC", raw), []).append(raw)
    unicode_forms = {k: v for k, v in forms.items() if len(v) > 1}
    for name, spelled in unicode_forms.items():
        notes.append(
            f"domain {name!r} is written in {len(spelled)} Unicode forms "
            f"({', '.join(ascii(f) for f in spelled)}); they print the same and are "
            "compared after NFC normalisation, as one domain"
        )
    counts = nfc.value_counts(sort=False)
    groups: dict[str, list[str]] = {}
    for name in pd.unique(nfc):
        groups.setdefault(fold(name), []).append(name)
    shown: dict[str, str] = {}
    for key, names in groups.items():
        seen = fold(_visible(names[0]))
        if seen in shown:
            raise InputError(
                f"domains {ascii(groups[shown[seen]][0])} and {ascii(names[0])} print the "
                "same but differ in invisible characters or surrounding spaces; make them "
                "one name (or two visibly different names)"
            )
        shown[seen] = key
    rename: dict[str, str] = {}
    case_spellings: dict[str, dict[str, int]] = {}
    for names in groups.values():
        if len(names) < 2:
            continue
        # the most frequent spelling names the domain (ties: the first in the file)
        main = max(names, key=lambda n: (int(counts[n]), -names.index(n)))
        spellings = {n: int(counts[n]) for n in sorted(names, key=lambda n: -int(counts[n]))}
        case_spellings[main] = spellings
        rename.update({n: main for n in names if n != main})
    if case_spellings:
        notes.append(_case_note(case_spellings))
    values = labels.copy().astype(object)
    values[present.index] = nfc.map(lambda v: rename.get(v, v)).to_numpy(dtype=object)
    return Labels(values, unicode_forms, case_spellings, tuple(notes))


def _case_note(case_spellings: dict[str, dict[str, int]], shown: int = 5) -> str:
    """One note for every domain written in several cases (the first ``shown`` named)."""

    def listing(spellings: dict[str, int]) -> str:
        return ", ".join(f"{n!r} ({_rows(c)})" for n, c in spellings.items())

    items = list(case_spellings.items())
    if len(items) == 1:
        ((main, spellings),) = items
        head = (
            f"domain labels {listing(spellings)} differ only in case and are merged as "
            f"{main!r} ({_rows(sum(spellings.values()))})"
        )
    else:
        more = f"; and {len(items) - shown} more" if len(items) > shown else ""
        head = (
            f"{len(items)} domains are written in several cases and merged into their most "
            "frequent spelling: "
            + "; ".join(f"{listing(sp)} as {m!r}" for m, sp in items[:shown])
            + more
        )
    return (
        f"{head}: on leaderboards such labels name one model (Hugging Face ids ignore case); "
        "rename one in the CSV to keep them apart"
    )


def drop_labels(
    values: pd.Series, names: Iterable[str], option: str = "--drop-domain"
) -> tuple[pd.Series, dict[str, int]]:
    """The rows of ``values`` whose label is one of ``names`` (compared after NFC and case
    folding, so the spelling typed in a shell need not match the CSV's), and the rows
    dropped per label. A name that matches no label is refused (a typo would drop
    nothing)."""
    wanted = {fold(str(n)): str(n) for n in names}
    if not wanted:
        return pd.Series(True, index=values.index), {}
    keys = values.map(lambda v: fold(v) if isinstance(v, str) else None)
    found = set(keys.dropna())
    missing = [typed for key, typed in wanted.items() if key not in found]
    if missing:
        raise InputError(
            f"{option} {', '.join(repr(m) for m in missing)}: no such domain label in the CSV"
        )
    drop = keys.isin(list(wanted))
    dropped = values[drop].value_counts(sort=False)
    return ~drop, {str(k): int(v) for k, v in dropped.items()}


def placeholder_note(sizes: Mapping[str, int], option: str = "--drop-domain") -> str | None:
    """A note naming the domains (label -> rows) whose label is a placeholder, with the
    options that drop them; None when there are none."""
    found = {k: v for k, v in sizes.items() if is_placeholder(k)}
    if not found:
        return None
    listing = " and ".join(
        [", ".join(f"{k!r} ({_rows(v)})" for k, v in list(found.items())[:-1])][: len(found) > 1]
        + [f"{k!r} ({_rows(v)})" for k, v in list(found.items())[-1:]]
    )
    drop = " ".join(f"{option} {shlex.quote(k)}" for k in found)
    if len(found) == 1:
        return (
            f"domain label {listing} looks like a placeholder, not the name of a domain: it "
            f"is fitted as a domain of its own; drop it with {drop}"
        )
    return (
        f"domain labels {listing} look like placeholders, not names of domains: each is "
        f"fitted as a domain of its own; drop them with {drop}"
    )
