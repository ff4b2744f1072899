"""The answer first: a chapter's opening paragraph, written from its scorecard rows.

Every chapter page opens, before any table, with three to six sentences built here from the
rows of :func:`hca.paper.scorecard.evaluate_chapter`: what the paper claims (the chapter's
lead claim and how many claims the chapter judges), what held under each setup (the verdict
counts of the analysis claims), and the main difference under each setup with its reason and
a link to the figure that shows it. The notebook glues the paragraph
(:func:`hca.paper.glue.glue_markdown`) and pastes it with a ``{glue:md}`` directive, so that
no word of it is typed by hand.

The wording is generic in the verdicts: every verdict a row carries is counted and named as
it is (in the order of :data:`hca.paper.claims.VERDICTS`, then any other in the order met), so
a new verdict class renders without a change here. A claim *held* when its verdict is the
first of :data:`~hca.paper.claims.VERDICTS` ("reproduced"); "not applicable" is counted but is
never a difference; every other verdict is one.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from hca.paper.claims import VERDICTS
from hca.paper.scorecard import HEADLINE, ClaimRow
from hca.paper.setups import SETUPS

__all__ = [
    "HELD",
    "APART",
    "verdict_counts",
    "counts_text",
    "differences",
    "main_difference",
    "setup_disagreements",
    "lead_claim",
    "reason_text",
    "chapter_summary",
]

#: The verdict of a claim that held.
HELD: str = VERDICTS[0]
#: Verdicts that are counted but never read as a difference from the paper.
APART: frozenset[str] = frozenset({"not applicable"})


def _check_rows(rows: Sequence[ClaimRow]) -> list[str]:
    """The setups of ``rows`` (the same in every row), or a ValueError naming the problem."""
    if not rows:
        raise ValueError("chapter summary: no claims (rows is empty)")
    setups = list(rows[0].setups)
    for r in rows:
        if list(r.setups) != setups:
            raise ValueError(
                f"chapter summary: claim {r.id} has setups {list(r.setups)}, expected {setups}"
            )
    unknown = [s for s in setups if s not in SETUPS]
    if unknown:
        raise ValueError(f"chapter summary: unknown setups {unknown}; known: {list(SETUPS)}")
    return setups


def _text(text: str) -> str:
    """One line of text safe in a MyST paragraph: no line breaks, no trailing full stop, no
    math delimiters."""
    out = " ".join(str(text).split()).replace("$", "\\$").replace("*", "\\*")
    return out[:-1] if out.endswith(".") else out


def _link(r: ClaimRow) -> str:
    return f" ({{numref}}`{r.figure}`)" if r.figure else ""


def verdict_counts(rows: Sequence[ClaimRow], setup: str) -> dict[str, int]:
    """How many of ``rows`` got each verdict under ``setup``: the verdicts of
    :data:`~hca.paper.claims.VERDICTS` in their order, then any other verdict in the order met
    (only verdicts that occur)."""
    found = [r.setups[setup].verdict for r in rows]
    order = [v for v in VERDICTS if v in found]
    order += [v for v in dict.fromkeys(found) if v not in order]
    return {v: found.count(v) for v in order}


def counts_text(counts: dict[str, int]) -> str:
    """``"5 reproduced, 2 partly and 1 not reproduced"`` (every verdict named as it is)."""
    parts = [f"{n} {v}" for v, n in counts.items() if n]
    if not parts:
        return "none"
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


def differences(rows: Sequence[ClaimRow], setup: str) -> list[ClaimRow]:
    """The analysis claims whose verdict under ``setup`` is neither the held verdict nor one
    counted apart (:data:`APART`), in table order."""
    return [
        r for r in rows if r.kind == "analysis" and r.setups[setup].verdict not in {HELD, *APART}
    ]


def _severity(verdict: str) -> int:
    """Later verdicts of :data:`~hca.paper.claims.VERDICTS` weigh more; a verdict outside it
    weighs as much as the last one."""
    return VERDICTS.index(verdict) if verdict in VERDICTS else len(VERDICTS) - 1


def main_difference(
    rows: Sequence[ClaimRow], setup: str, lead: str | None = None
) -> ClaimRow | None:
    """The difference under ``setup`` to name first (None when every analysis claim held or is
    counted apart): the lead claim if it differs, else a headline claim
    (:data:`hca.paper.scorecard.HEADLINE`), else the heaviest verdict, ties in table order."""
    diffs = differences(rows, setup)
    if not diffs:
        return None
    order = {r.id: i for i, r in enumerate(rows)}
    return min(
        diffs,
        key=lambda r: (
            r.id != lead,
            r.id not in HEADLINE,
            -_severity(r.setups[setup].verdict),
            order[r.id],
        ),
    )


def setup_disagreements(rows: Sequence[ClaimRow]) -> list[ClaimRow]:
    """The claims (analysis and lookups) whose verdict is not the same under every setup."""
    _check_rows(rows)
    return [r for r in rows if len({o.verdict for o in r.setups.values()}) > 1]


def lead_claim(rows: Sequence[ClaimRow], lead: str | None = None) -> ClaimRow:
    """The claim the summary opens with: ``lead`` (its id), else the first headline claim of
    the chapter, else its first analysis claim, else its first claim."""
    by_id = {r.id: r for r in rows}
    if lead is not None:
        if lead not in by_id:
            raise ValueError(f"lead claim {lead!r} is not a claim of this chapter: {list(by_id)}")
        return by_id[lead]
    for cid in HEADLINE:
        if cid in by_id:
            return by_id[cid]
    return next((r for r in rows if r.kind == "analysis"), rows[0])


#: Where an ensemble outcome's reason quotes its typical run (:func:`~hca.paper.claims.ensemble_outcome`).
_TYPICAL = re.compile(r"Typical run \(seed \d+\):\s*(.+)$")


def reason_text(outcome) -> str:
    """An outcome's reason in plain words: for a claim read from an ensemble of FastICA runs,
    how many runs reproduced it and what its typical run shows (the rule and the spread are
    left to the verdicts section); otherwise the reason as it is."""
    reason = _text(outcome.reason)
    e = getattr(outcome, "ensemble", None)
    m = _TYPICAL.search(reason)
    if e is None or m is None:
        return reason
    n = int(getattr(e, "evidence_runs", e.runs))
    k, kp = round(e.share * n), round(e.share_partly * n)
    return (
        f"reproduced in {k}, at least partly in {kp} of {n} FastICA runs; "
        f"in a typical run, {_text(m.group(1))}"
    )


def _difference_text(r: ClaimRow, setup: str) -> str:
    o = r.setups[setup]
    return f"**{r.id}** is {o.verdict}{_link(r)}: {reason_text(o)}"


def chapter_summary(
    rows: Sequence[ClaimRow], *, lead: str | None = None, why: str | None = None
) -> str:
    """The chapter's opening paragraph (MyST markdown, three to six sentences).

    Parameters
    ----------
    rows : sequence of ClaimRow
        The chapter's claims, as :func:`hca.paper.scorecard.evaluate_chapter` returns them.
    lead : str, optional
        The id of the claim to open with (default: :func:`lead_claim`).
    why : str, optional
        The label of the chapter's section that explains the differences (a ``{ref}`` target);
        the last sentence links to it.

    Returns
    -------
    str
        The sentences the module docstring describes (one on the main difference when both
        setups agree on it), then how many claims the setups judge differently.
    """
    setups = _check_rows(rows)
    first = lead_claim(rows, lead)
    analysis = [r for r in rows if r.kind == "analysis"]
    n_look = len(rows) - len(analysis)
    what = f"{len(analysis)} analyses of the data" + (
        f" and {n_look} value{'s' * (n_look != 1)} read off the leaderboard" if n_look else ""
    )
    out = [
        f"This chapter judges {len(rows)} claim{'s' * (len(rows) != 1)} of the paper ({what}), "
        f"led by **{first.id}**{_link(first)}: *{_text(first.claim)}*."
    ]
    mains = {s: main_difference(rows, s, first.id) for s in setups}
    for s in setups:
        label = SETUPS[s].label
        counts = counts_text(verdict_counts(analysis, s)) if analysis else "none"
        held = f"**{first.id}** is {first.setups[s].verdict}"
        out.append(f"Under the {label} the {len(analysis)} analysis claims read {counts}; {held}.")
    keys = {
        (m.id, m.setups[s].verdict, reason_text(m.setups[s])) if m else None
        for s, m in mains.items()
    }
    same = len(setups) > 1 and None not in keys and len(keys) == 1
    if same:
        m = mains[setups[0]]
        assert m is not None
        out.append(f"Under both setups the main difference: {_difference_text(m, setups[0])}.")
    else:
        for s in setups:
            m = mains[s]
            label = SETUPS[s].label
            if m is None:
                out.append(f"Under the {label} no analysis claim differs from the paper.")
            else:
                out.append(f"The main difference under the {label}: {_difference_text(m, s)}.")
    split = setup_disagreements(rows)
    if len(setups) > 1:
        see = f"see {{ref}}`{why}`" if why else ""
        if split:
            ids = ", ".join(r.id for r in split[:4]) + (", …" if len(split) > 4 else "")
            out.append(
                f"The two setups judge {len(split)} of the {len(rows)} claims differently "
                f"({ids}{'; ' + see if see else ''})."
            )
        else:
            out.append(
                "The two setups give every claim the same verdict" + (f" ({see})." if see else ".")
            )
    return " ".join(out)
