"""Numbers that say what they are: the few typed helpers every sentence of the book uses.

The book's house style (CONTRIBUTING.md, "Writing prose") asks that every number that reaches
a reader says what it counts and over which runs: counts as whole numbers, shares as "k of n",
a fit-based quantity as its ensemble median with its range (one seed only when labelled), and
one run set per sentence. These helpers are the one way the scorecard's texts, the chapters'
answers and the notebooks' glued phrases write such numbers, so that a slip is a type error
or a :class:`ValueError` here rather than a wrong sentence on a page.
:func:`prose_slips` finds the slips that text can still carry (the text tests run it over
every glued string and every scorecard text of a build).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

__all__ = [
    "number",
    "whole",
    "count",
    "k_of_n",
    "share_words",
    "median_range",
    "one_seed",
    "seed_list",
    "join_words",
    "prose_slips",
    "sentences",
]


def _finite(x: Any, what: str) -> float:
    try:
        v = float(x)
    except (TypeError, ValueError):
        raise ValueError(f"{what}: expected a number, got {x!r}") from None
    if not np.isfinite(v):
        raise ValueError(f"{what}: expected a finite number, got {x!r}")
    return v


def whole(x: Any, what: str = "count") -> int:
    """``x`` as an int, refusing a value that is not a whole number (``3.0`` is 3; ``2.5``
    raises), so a count never prints with decimals."""
    v = _finite(x, what)
    if v != round(v):
        raise ValueError(f"{what}: expected a whole number, got {x!r}")
    return int(round(v))


def number(x: Any, digits: int = 3) -> str:
    """The book's way of printing a measured value: ``digits`` decimals below 10 in size, one
    decimal from 10, no decimals from 1,000 (with a thousands separator); whole numbers as
    whole numbers."""
    v = _finite(x, "number")
    if v == round(v) and abs(v) < 1e15:
        return f"{int(round(v)):,}"
    if abs(v) >= 1000:
        return f"{v:,.0f}"
    if abs(v) >= 10:
        return f"{v:.1f}"
    return f"{v:.{digits}f}"


def count(n: Any, noun: str, plural: str | None = None) -> str:
    """``"1 run"``, ``"20 runs"``, ``"3 domains"`` (``plural`` for irregular nouns)."""
    k = whole(n)
    word = noun if k == 1 else (plural if plural is not None else f"{noun}s")
    return f"{k:,} {word}"


def k_of_n(k: Any, n: Any, what: str = "") -> str:
    """``"7 of 20 runs"`` (``what`` the run set, plural; empty: ``"7 of 20"``)."""
    a, b = whole(k, "k"), whole(n, "n")
    if not 0 <= a <= b:
        raise ValueError(f"k_of_n: expected 0 <= k <= n, got {a} of {b}")
    return f"{a:,} of {b:,}" + (f" {what}" if what else "")


def share_words(share: Any, n: Any, what: str = "") -> str:
    """A share of ``n`` items as ``"k of n"`` (the nearest whole count; a share that is not a
    multiple of 1/n raises: it is not a share of these items)."""
    b = whole(n, "n")
    s = _finite(share, "share")
    k = s * b
    if abs(k - round(k)) > 1e-6 * max(1, b):
        raise ValueError(f"share_words: {share!r} is not a share of {b} items")
    return k_of_n(int(round(k)), b, what)


def median_range(
    values: Iterable[Any] | None = None,
    *,
    median: Any = None,
    low: Any = None,
    high: Any = None,
    n: Any = None,
    what: str = "runs",
    digits: int = 3,
) -> str:
    """A fit-based quantity as its ensemble median with its range:
    ``"median 0.037 (range 0.036-0.072) over 20 runs"``; whole-number values (counts, ranks)
    as whole numbers (``"median 3 (range 2-3) over 20 runs"``); a value the same in every run
    as ``"0.750 in all 40 runs"``. Give ``values`` or ``median``, ``low``, ``high`` and ``n``."""
    if values is not None:
        arr = np.asarray(list(values), dtype=float)
        if arr.size == 0 or not np.all(np.isfinite(arr)):
            raise ValueError("median_range: values must be finite and non-empty")
        median, low, high, n = np.median(arr), arr.min(), arr.max(), arr.size
        integer = bool(np.all(arr == np.round(arr)))
    else:
        if median is None or low is None or high is None or n is None:
            raise ValueError("median_range: give values, or median, low, high and n")
        integer = all(_finite(x, "value") == round(float(x)) for x in (low, high))
    k = whole(n, "n")
    m, lo, hi = (_finite(x, "value") for x in (median, low, high))
    if not lo <= m <= hi:
        raise ValueError(f"median_range: median {m} outside its range {lo}-{hi}")

    def fmt(x: float) -> str:
        return f"{x:g}" if integer and x != round(x) else number(x, digits)

    set_ = f" over {k:,} {what}" if what else ""
    if number(lo, digits) == number(hi, digits):
        return f"{fmt(m)} in all {k:,} {what}".rstrip() if k > 1 else f"{fmt(m)}{set_}"
    return f"median {fmt(m)} (range {fmt(lo)} to {fmt(hi)}){set_}"


def one_seed(text: str, seed: Any, label: str = "one run") -> str:
    """A value read from one FastICA run, labelled as such: ``"0.07 (one run, seed 0)"``."""
    return f"{text} ({label}, seed {whole(seed, 'seed')})"


def seed_list(seeds: Sequence[Any]) -> str:
    """Seeds as a short phrase: ``"seed 3"``, ``"seeds 0-19"`` for a run of consecutive seeds,
    else ``"seeds 1, 4 and 7"``."""
    s = [whole(x, "seed") for x in seeds]
    if not s:
        raise ValueError("seed_list: no seeds")
    if len(s) == 1:
        return f"seed {s[0]}"
    if s == list(range(s[0], s[0] + len(s))):
        return f"seeds {s[0]}-{s[-1]}"
    return "seeds " + join_words(str(x) for x in s)


def join_words(items: Iterable[Any], last: str = "and") -> str:
    """``"a"``, ``"a and b"``, ``"a, b and c"``."""
    xs = [str(x) for x in items]
    if not xs:
        return ""
    return xs[0] if len(xs) == 1 else ", ".join(xs[:-1]) + f" {last} " + xs[-1]


# =========================================================================== checking texts
_ABBREV = re.compile(r"\b(e\.g|i\.e|cf|vs|etc|approx|Fig|Figs|App|Sec|Eq|al|No)\.", re.I)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"“(*])")


def sentences(text: str) -> list[str]:
    """``text`` split into sentences (full stops of abbreviations and of numbers such as 0.25
    do not end one; ``;`` does not either)."""
    protected = _ABBREV.sub(lambda m: m.group(0).replace(".", "\u2024"), " ".join(text.split()))
    parts = _SENTENCE_END.split(protected)
    return [p.replace("\u2024", ".").strip() for p in parts if p.strip()]


#: Units that name a set of runs (fits of a randomised optimiser, resamples).
_RUN_UNITS = r"(?:FastICA |ensemble |seed |bootstrap )?(?:runs?|seeds?|refits?|fits?|resamples?)"
_RUN_SET = re.compile(rf"\b(?:of|over|all|in|from)\s+(?:the\s+)?(\d[\d,]*)\s+{_RUN_UNITS}\b")
_SLIPS: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "a count printed with decimals",
        re.compile(r"median (\d+)\.0+ \(range \d+\.0+[-\u2013 to]+\d+\.0+\)"),
    ),
    ("'in every one of N runs' (a value that does not vary)", re.compile(r"in every one of \d")),
    (
        "'as do 0 of ...' (none agreeing, written as agreement)",
        re.compile(r"\bas do(?:es)? 0 of\b"),
    ),
    ("'the others move: none'", re.compile(r"the others move: none")),
    (
        "a share as a percentage of a run set (write k of n)",
        re.compile(rf"\b\d+(?:\.\d+)? ?% of (?:the )?\d[\d,]* {_RUN_UNITS}\b"),
    ),
    ("a number formatted as a NumPy repr", re.compile(r"\bnp\.(?:float|int)\d*\(")),
    ("a missing value in prose", re.compile(r"\b(?:nan|NaN|<NA>|None)\b(?![-_])")),
)


def prose_slips(text: str) -> list[str]:
    """The slips of the house style that ``text`` carries, one line each (empty when none):
    counts with decimals, a constant called an ensemble's value, contradictions such as
    "as do 0 of 10 seeds", shares as percentages of a run set, NumPy reprs, missing values
    in prose, and a sentence that puts two run sets of different sizes side by side."""
    found = [f"{what}: {m.group(0)!r}" for what, rx in _SLIPS for m in rx.finditer(text)]
    for s in sentences(text):
        sizes = {int(m.group(1).replace(",", "")) for m in _RUN_SET.finditer(s)}
        if len(sizes) > 1:
            found.append(
                f"two run sets ({', '.join(map(str, sorted(sizes)))}) in one sentence: {s[:160]!r}"
            )
    return found
