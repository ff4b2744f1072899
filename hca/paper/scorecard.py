"""The replication scorecard: every claim of the paper, judged under two setups.

One source of truth for the book's scorecard page, each chapter's verdict box, the intro's
"What held" and ``python -m hca scorecard [--json FILE]``. The paper's side of a claim comes
only from the packaged table ``paper_values.csv`` (:func:`hca.data.load_paper_values`); our
side from the chapters' own results: for every chapter of
:data:`hca.paper.chapters.CHAPTER_LIST` with claims and every setup, the chapter's results
(:meth:`hca.paper.shape.ChapterSpec.run` or, for fit-based claims, its ensemble) are judged by
every evaluator the chapter registered. :func:`build_scorecard` returns a :class:`Scorecard`;
:meth:`Scorecard.records` is the JSON of ``--json`` (documented in the README).
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

import pandas as pd

from hca.data.tables import load_paper_values
from hca.paper.cache import json_plain, stored_json
from hca.paper.chapters import CHAPTER_LIST, ChapterSpec
from hca.paper.chapters import chapter as get_chapter
from hca.paper.claims import (
    CHAPTERS,
    KINDS,
    OBJECTIVE,
    VERDICTS,
    ClaimSpec,
    Ensemble,
    Optimum,
    Outcome,
    RunEvidence,
    Stability,
    as_evidence,
    ensemble_outcome,
    needs_more_runs,
    typical_index,
)
from hca.paper.setups import SETUP_NAMES, SETUPS, Setup, get_setup
from hca.paper.shape import check_settings
from hca.paper.words import count, join_words, k_of_n, share_words

__all__ = [
    "ClaimRow",
    "ChapterPage",
    "chapter_page",
    "numeric_claim",
    "Scorecard",
    "chapter_spec",
    "chapter_results",
    "chapter_ensemble",
    "ensemble_seeds",
    "run_evidence",
    "typical_seed",
    "typical_run",
    "evaluate_chapter",
    "build_scorecard",
    "HEADLINE",
    "verdict_box_markdown",
    "verdicts_markdown",
    "summary_markdown",
    "headline_markdown",
    "chapter_details_markdown",
    "chapter_number",
    "chapter_label",
    "summary_counts",
    "headline_shares",
    "scorecard_frame",
    "scorecard_csv",
    "claims_frame",
    "synthesis_markdown",
    "intro_answer",
    "not_determined_markdown",
]

#: The headline claims whose stability over refits the scorecard reports.
HEADLINE: tuple[str, ...] = ("S4-order", "S4-best-four", "F18-four-smallest", "F2b-sinv-v2")
#: Short names of the headline claims (figure labels).
HEADLINE_NAMES: dict[str, str] = {
    "S4-order": "causal order",
    "S4-best-four": "best four domains",
    "F18-four-smallest": "four smallest MICs",
    "F2b-sinv-v2": "the five domains of S_inv",
}

_PAPER_FIELDS = ("id", "section", "claim", "paper", "criterion", "kind", "citation")


@dataclass(frozen=True)
class ClaimRow:
    """One claim: the paper's side and our outcome under every setup."""

    id: str
    section: str
    claim: str
    paper: str
    criterion: str
    kind: str
    citation: str
    chapter: str
    figure: str | None
    setups: dict[str, Outcome]

    def record(self) -> dict[str, Any]:
        """The JSON object of this claim (schema in the README)."""
        setups = {}
        for name, o in self.setups.items():
            d = {"ours": o.ours, "verdict": o.verdict, "reason": o.reason}
            if o.stability is not None:
                d["stability"] = {
                    "share": round(o.stability.share, 4),
                    "n_fits": o.stability.n_fits,
                    "design": o.stability.design,
                }
            if o.ensemble is not None:
                e = o.ensemble
                d["ensemble"] = {
                    "runs": e.runs,
                    "share": round(e.share, 4),
                    "share_partly": round(e.share_partly, 4),
                    "typical_seed": e.typical_seed,
                    "median": None if e.median is None else round(e.median, 6),
                    "range": None if e.low is None else [round(e.low, 6), round(e.high, 6)],
                    "rule": e.rule,
                    "borderline": e.borderline,
                    "fragile_share": round(e.fragile_share, 4),
                    "fragile_runs": e.fragile,
                    "fragile_domains": dict(e.fragile_domains),
                    "share_insensitive": _round(e.share_insensitive),
                    "share_partly_insensitive": _round(e.share_partly_insensitive),
                    "objective": OBJECTIVE,
                    "optima": [_optimum_record(x) for x in e.optima],
                    "preferred": e.preferred,
                    "case": e.case,
                }
            setups[name] = d
        return {
            "id": self.id,
            "section": self.section,
            "claim": self.claim,
            "paper": self.paper,
            "criterion": self.criterion,
            "kind": self.kind,
            "chapter": CHAPTERS[self.chapter][0],
            "figure": self.figure,
            "setups": setups,
        }


def _round(x: float | None) -> float | None:
    return None if x is None else round(x, 4)


def _optimum_record(o: Optimum) -> dict[str, Any]:
    """One FastICA optimum of a fragile fit, as the JSON gives it."""
    return {
        "groups": dict(o.groups),
        "runs": o.runs,
        "fragile_runs": o.fragile,
        "seeds": list(o.seeds),
        "objective": {
            d: {"median": round(m, 6), "range": [round(lo, 6), round(hi, 6)]}
            for d, m, lo, hi in o.objective
        },
        "share": round(o.share, 4),
        "share_partly": round(o.share_partly, 4),
        "answer": o.answer,
        "major": o.major,
    }


def chapter_spec(chapter: str) -> ChapterSpec[Any, Any]:
    """The declared shape (``CHAPTER``) of a chapter with claims."""
    if chapter not in CHAPTERS:
        raise ValueError(f"unknown chapter {chapter!r}; known: {list(CHAPTERS)}")
    return get_chapter(chapter)


def chapter_results(chapter: str, setup: str | Setup, settings: Any = None) -> Any:
    """The chapter's results under ``setup`` (default settings: the book's)."""
    return chapter_spec(chapter).run(setup, settings)


def chapter_ensemble(
    chapter: str,
    setup: str | Setup,
    settings: Any = None,
    *,
    seeds: Sequence[int] | None = None,
    more: bool = False,
) -> tuple[Any, ...]:
    """The chapter's results under ``setup`` with every FastICA seed of its ensemble (the
    settings' ``n_seeds`` seeds; ``n_seeds_more`` with ``more``; or ``seeds``) for its single
    fits (:meth:`~hca.paper.setups.Setup.with_seed`): the ensemble its fit-based claims are
    read from, computed in one batch (:meth:`hca.paper.shape.ChapterSpec.runs`)."""
    return chapter_spec(chapter).runs(setup, settings, seeds=seeds, more=more)


def _typical_index(chapter: str, ensemble: Sequence[Any]) -> int:
    spec = chapter_spec(chapter).ensemble
    if spec is None:
        raise ValueError(f"chapter {chapter!r} has no ensemble")
    return typical_index([spec.typical_key(r) for r in ensemble])


def typical_seed(chapter: str, setup: str | Setup, settings: Any = None) -> int:
    """The typical run of the chapter's ensemble under ``setup``: the seed whose fit is
    nearest the ensemble's median by the chapter's ``typical_key`` (its main fit's MIC)."""
    ensemble = chapter_ensemble(chapter, setup, settings)
    return chapter_spec(chapter).seeds(settings)[_typical_index(chapter, ensemble)]


def typical_run(chapter: str, setup: str | Setup, settings: Any = None) -> Any:
    """The chapter's results at its :func:`typical_seed` under ``setup``: the run of the
    ensemble the verdicts are read from that the book shows."""
    ensemble = chapter_ensemble(chapter, setup, settings)
    return ensemble[_typical_index(chapter, ensemble)]


def ensemble_seeds(
    verdicts: Sequence[str],
    evidence: Sequence[Any] = (),
    *,
    first: Sequence[int],
    more: Sequence[int],
) -> tuple[int, ...]:
    """The seeds a claim is read from, given its verdicts on the runs of the ``first`` seeds
    of its ensemble (and, per run, the fit its claims read, :func:`run_evidence`): the
    larger set ``more`` (which starts with ``first``) when one of them is rounding-sensitive
    or a share lies near a threshold (:func:`needs_more_runs`). Every run counts."""
    fragile = sum(bool(as_evidence(w).fragile) for w in evidence)
    need = needs_more_runs(list(verdicts), len(more), fragile)
    return tuple(more) if need else tuple(first)


def run_evidence(spec: ClaimSpec, results: Any) -> RunEvidence:
    """The fit ``spec``'s claims read in this run (:class:`~hca.paper.claims.RunEvidence`:
    the domains whose FastICA rounding steered, and every domain's ICA solution): the
    claim's ``evidence`` or else its chapter's (:attr:`hca.paper.shape.EnsembleSpec.evidence`;
    :data:`hca.paper.claims.ENSEMBLE_RULE`; the run counts either way)."""
    if spec.evidence is not None:
        return as_evidence(spec.evidence(results))
    ensemble = chapter_spec(spec.chapter).ensemble
    return as_evidence("" if ensemble is None else ensemble.evidence(results))


def _ensemble_outcomes(
    spec: ClaimSpec,
    chapter: str,
    rows: pd.DataFrame,
    ensemble: Sequence[Any],
    extra_runs: Callable[[], Sequence[Any]],
    seeds: tuple[tuple[int, ...], tuple[int, ...]],
) -> dict[str, Outcome]:
    """The outcomes of ``spec``'s claims read from the chapter's ``ensemble`` (the runs of the
    first seeds), and from the runs of the larger set where the rule asks for it
    (``extra_runs()``: the runs of its seeds beyond the first ones); ``seeds`` are the first
    and the larger set."""
    first, more_seeds = seeds
    members = [_outcomes(spec, res, rows) for res in ensemble]
    why = [run_evidence(spec, res) for res in ensemble]
    more: list[tuple[dict[str, Outcome], RunEvidence]] = []
    t = _typical_index(chapter, ensemble)
    out = {}
    for cid in rows.index:
        runs = [m[cid] for m in members]
        chosen = ensemble_seeds([o.verdict for o in runs], why, first=first, more=more_seeds)
        evidence = list(why)
        if chosen == tuple(more_seeds) and len(more_seeds) > len(first):
            if not more:
                more = [
                    (_outcomes(spec, res, rows), run_evidence(spec, res)) for res in extra_runs()
                ]
            runs += [m[cid] for m, _ in more]
            evidence += [w for _, w in more]
        out[cid] = ensemble_outcome(
            runs, chosen, typical=t, evidence=evidence, show_value=numeric_claim(rows.loc[cid])
        )
    return out


def numeric_claim(row: pd.Series) -> bool:
    """Whether a claim's paper value is a number, so that our value is the same quantity
    (its ensemble median is shown in ``ours``); else the value is a count or flag behind the
    verdict, kept in the JSON only."""
    try:
        float(str(row.get("value", "")))
    except ValueError:
        return False
    return True


def _more_runs(chapter: str, setup: str, settings: Any) -> tuple[Any, ...]:
    """The runs of the larger ensemble (``n_seeds_more``) beyond the first seeds."""
    first = chapter_spec(chapter).seeds(settings)
    return chapter_ensemble(chapter, setup, settings, more=True)[len(first) :]


def _outcomes(spec: ClaimSpec, results: Any, rows: pd.DataFrame) -> dict[str, Outcome]:
    out = dict(spec.fn(results, rows))
    missing = [i for i in rows.index if i not in out]
    extra = [i for i in out if i not in rows.index]
    if missing or extra:
        raise RuntimeError(f"{spec.name}: answered {sorted(out)}, expected {list(rows.index)}")
    for cid, o in out.items():
        if not isinstance(o, Outcome):
            raise TypeError(f"{spec.name}: {cid} is not an Outcome ({type(o).__name__})")
    return out


def evaluate_chapter(
    chapter: str,
    *,
    paper: pd.DataFrame | None = None,
    settings: Any = None,
    setups: Sequence[str] | None = None,
) -> list[ClaimRow]:
    """Every claim of ``chapter`` judged under ``setups`` (default: the settings' setups;
    rows in the table's order) on the chapter's results under ``settings`` (default: the
    book's).

    With the paper's own values (``paper`` None), the book's settings and both setups, the
    rows are computed once per build and stored as plain JSON
    (:func:`hca.paper.cache.stored_json`): the chapter's page computes them, the scorecard
    page and the intro read them. The rows returned are always the rows as read back from
    JSON, so a stored and a fresh computation agree. Other settings (a reader's) are judged
    afresh from their own results."""
    spec = chapter_spec(chapter)
    st = spec.book_settings() if settings is None else settings
    check_settings(st, ensemble=spec.ensemble is not None)
    chosen = tuple(st.setups) if setups is None else tuple(setups)
    unknown = [s for s in chosen if s not in st.setups]
    if unknown:
        raise ValueError(f"evaluate_chapter: setups {unknown} are not run by the settings {st}")
    book = st == spec.book_settings()
    if paper is None and book and chosen == SETUP_NAMES:
        data = stored_json("scorecard_rows", _rows_data, chapter, check=_is_rows_data)
        return [_row_from_data(d) for d in data]
    rows = _evaluate_chapter(chapter, paper, chosen, st)
    return [_row_from_data(d) for d in json_plain([asdict(r) for r in rows])]


def _rows_data(chapter: str) -> list[dict[str, Any]]:
    # stored_json writes them as JSON (numpy numbers as Python numbers, tuples as lists)
    return [asdict(r) for r in _evaluate_chapter(chapter)]


_NESTED: dict[str, type] = {"stability": Stability, "ensemble": Ensemble}
#: Fields holding a tuple of dataclasses.
_NESTED_MANY: dict[str, type] = {"optima": Optimum}


def _from_plain(cls: type, data: dict[str, Any]) -> Any:
    kwargs: dict[str, Any] = {}
    for f in fields(cls):
        if f.name not in data:
            continue
        v = data[f.name]
        if f.name in _NESTED and v is not None:
            v = _from_plain(_NESTED[f.name], v)
        elif f.name in _NESTED_MANY and v is not None:
            v = tuple(_from_plain(_NESTED_MANY[f.name], x) for x in v)
        elif isinstance(v, list):  # JSON has no tuples: nested ones come back as lists
            v = _as_tuple(v)
        kwargs[f.name] = v
    return cls(**kwargs)


def _as_tuple(v: list) -> tuple:
    """A JSON list back as the tuple it was, lists inside it too (e.g. ``fragile_domains``,
    a tuple of ``(domain, count)`` pairs)."""
    return tuple(_as_tuple(x) if isinstance(x, list) else x for x in v)


def _row_from_data(data: dict[str, Any]) -> ClaimRow:
    plain = {k: v for k, v in data.items() if k != "setups"}
    return ClaimRow(**plain, setups={s: _from_plain(Outcome, o) for s, o in data["setups"].items()})


def _is_rows_data(data: Any) -> bool:
    """Whether stored JSON has the shape of :func:`_rows_data` (a list of row objects whose
    outcomes can be rebuilt)."""
    if not isinstance(data, list):
        return False
    try:
        for d in data:
            _row_from_data(d)
    except (TypeError, ValueError, KeyError, AttributeError):
        return False
    return True


def _evaluate_chapter(
    chapter: str,
    paper: pd.DataFrame | None = None,
    setups: Sequence[str] = SETUP_NAMES,
    settings: Any = None,
) -> list[ClaimRow]:
    paper = load_paper_values() if paper is None else paper
    spec_c = chapter_spec(chapter)
    st = spec_c.book_settings() if settings is None else settings
    per_setup: dict[str, dict[str, Outcome]] = {s: {} for s in setups}
    figures: dict[str, str | None] = {}
    specs = [(spec, spec.rows(paper)) for spec in chapter_spec(chapter).claims()]
    specs = [(spec, rows) for spec, rows in specs if not rows.empty]
    for spec, rows in specs:
        for cid in rows.index:
            if cid in figures:
                raise RuntimeError(f"claim {cid} has two evaluators")
            figures[cid] = spec.figure
    has_ensemble = spec_c.ensemble is not None
    seeds = (spec_c.seeds(st), spec_c.seeds(st, more=True)) if has_ensemble else ((), ())
    for s in setups:
        # a chapter with an ensemble: its other claims read the run at the setup's own seed
        ensemble = chapter_ensemble(chapter, s, st) if has_ensemble else ()
        # the larger set's other runs: read once, and only if a claim's rule asks for them
        extra_runs = functools.cache(functools.partial(_more_runs, chapter, s, st))
        seed = get_setup(s).ica_seed
        own = [r for r in ensemble if r.setup.ica_seed == seed]
        results = own[0] if own else chapter_results(chapter, s, st)
        for spec, rows in specs:
            if spec.ensemble:
                per_setup[s].update(
                    _ensemble_outcomes(spec, chapter, rows, ensemble, extra_runs, seeds)
                )
            else:
                per_setup[s].update(_outcomes(spec, results, rows))
    out = []
    for cid in (i for i in paper.index if i in figures):
        r = paper.loc[cid]
        out.append(
            ClaimRow(
                **{f: str(r[f]) for f in _PAPER_FIELDS},
                chapter=chapter,
                figure=figures[cid],
                setups={s: per_setup[s][cid] for s in setups},
            )
        )
    return out


@dataclass(frozen=True)
class Scorecard:
    """Every claim with the paper's side and our outcome per setup.

    Attributes
    ----------
    rows : tuple of ClaimRow
        In book order (chapter, then the order of ``paper_values.csv``).
    """

    rows: tuple[ClaimRow, ...]

    def records(self) -> list[dict]:
        """The JSON list (one object per claim)."""
        return [r.record() for r in self.rows]

    def counts(self, kind: str | None = None) -> pd.DataFrame:
        """Claims per verdict (rows) and setup (columns), of one kind or all."""
        rows = [r for r in self.rows if kind is None or r.kind == kind]
        data = {
            s: pd.Series([r.setups[s].verdict for r in rows], dtype=object)
            .value_counts()
            .reindex(list(VERDICTS), fill_value=0)
            for s in self._setups()
        }
        return pd.DataFrame(data).rename_axis("verdict")

    def by_chapter(self, kind: str | None = "analysis") -> pd.DataFrame:
        """Verdict counts per chapter and setup (columns ``(setup, verdict)``)."""
        recs = [
            {"chapter": CHAPTERS[r.chapter][1], "setup": s, "verdict": o.verdict}
            for r in self.rows
            if kind is None or r.kind == kind
            for s, o in r.setups.items()
        ]
        df = pd.DataFrame(recs, columns=["chapter", "setup", "verdict"])
        t = pd.crosstab(df["chapter"], [df["setup"], df["verdict"]])
        order = [CHAPTERS[c][1] for c in CHAPTERS if CHAPTERS[c][1] in t.index]
        cols = pd.MultiIndex.from_product([self._setups(), list(VERDICTS)])
        return t.reindex(index=order, columns=cols, fill_value=0)

    def chapter_rows(self, chapter: str) -> list[ClaimRow]:
        return [r for r in self.rows if r.chapter == chapter]

    def _setups(self) -> list[str]:
        return list(self.rows[0].setups) if self.rows else list(SETUP_NAMES)

    def summary(self) -> str:
        """The table as text, by chapter, with the counts per kind and setup."""
        lines = []
        for chapter in CHAPTERS:
            rows = self.chapter_rows(chapter)
            if not rows:
                continue
            lines.append(f"== {CHAPTERS[chapter][1]}  [{CHAPTERS[chapter][0]}]")
            for r in rows:
                lines.append(f"  {r.id:<28} [{r.kind}] paper: {r.paper}")
                for s, o in r.setups.items():
                    stab = f"; {o.stability.text()}" if o.stability else ""
                    lines.append(f"  {'':<28} {s:<8} {o.verdict:<15} {o.ours}{stab}")
        for kind in KINDS:
            c = self.counts(kind)
            n = sum(r.kind == kind for r in self.rows)
            lines.append(
                f"{n} {kind} claims: "
                + "; ".join(
                    f"{s}: " + ", ".join(f"{v} {int(c.loc[v, s])}" for v in VERDICTS)
                    for s in c.columns
                )
            )
        return "\n".join(lines)


def build_scorecard(
    only: Sequence[str] | None = None, *, paper_values: str | Path | None = None
) -> Scorecard:
    """Judge every claim (or the chapters / id prefixes in ``only``) under both setups.

    Parameters
    ----------
    only : sequence of str, optional
        Chapter keys (:data:`~hca.paper.claims.CHAPTERS`) or claim-id prefixes.
    paper_values : path, optional
        Another copy of ``paper_values.csv``.

    Raises
    ------
    ValueError
        If ``only`` names no chapter and matches no claim id.
    """
    paper = load_paper_values(paper_values)
    # the chapters with claims, in the order of the explicit list
    chapters = [c.key for c in CHAPTER_LIST if c.key in CHAPTERS]
    prefixes: list[str] = []
    if only:
        chosen = [c for c in only if c in CHAPTERS]
        prefixes = [p for p in only if p not in CHAPTERS]
        bad = [p for p in prefixes if not paper["id"].str.startswith(p).any()]
        if bad:
            raise ValueError(f"--only: {bad} match no chapter ({list(CHAPTERS)}) and no claim id")
        chapters = chosen if not prefixes else chapters
    rows: list[ClaimRow] = []
    for chapter in chapters:
        sub = paper
        if prefixes:
            sub = paper[paper["id"].map(lambda i: any(i.startswith(p) for p in prefixes))]
            if not any(not s.rows(sub).empty for s in get_chapter(chapter).claims()):
                continue
        rows += evaluate_chapter(
            chapter, paper=sub if prefixes or paper_values is not None else None
        )
    return Scorecard(tuple(rows))


# =========================================================================== a chapter's page
@dataclass(frozen=True, eq=False)
class ChapterPage:
    """Everything a chapter's page shows, computed from the notebook's own settings.

    Attributes
    ----------
    chapter : str
        The chapter's key (``"recovery"``).
    settings : object
        The settings the page was computed with (the chapter's ``Settings``).
    book : bool
        Whether they are the book's (the ``Settings`` defaults).
    results : dict
        Setup name -> the results the page shows: the typical run of the setup's ensemble
        for a chapter with one (:func:`typical_run`), else the setup's results.
    ensembles : dict
        Setup name -> every run of the setup's ensemble (empty for a chapter without one).
    rows : tuple of ClaimRow
        The chapter's claims judged under the settings' setups on these results.
    """

    chapter: str
    settings: Any
    book: bool
    results: dict[str, Any]
    ensembles: dict[str, tuple[Any, ...]]
    rows: tuple[ClaimRow, ...]

    @property
    def setups(self) -> tuple[str, ...]:
        """The setups the page runs, in the settings' order."""
        return tuple(self.settings.setups)

    def differences(self) -> dict[str, tuple[Any, Any]]:
        """Field -> (these settings' value, the book's) for every field that differs."""
        book = chapter_spec(self.chapter).book_settings()
        return {
            f.name: (getattr(self.settings, f.name), getattr(book, f.name))
            for f in fields(self.settings)
            if getattr(self.settings, f.name) != getattr(book, f.name)
        }

    def note(self) -> str:
        """One paragraph (MyST) saying that the page follows settings other than the book's,
        and which; empty for the book's settings."""
        diff = self.differences()
        if not diff:
            return ""
        items = "; ".join(f"`{k}` = {v!r} (the book: {b!r})" for k, (v, b) in diff.items())
        return (
            f"**These settings differ from the book's**: {items}. Every number, figure and "
            "verdict on this page follows them; the scorecard and the published book use the "
            "book's settings."
        )

    def show_note(self) -> None:
        """Display :meth:`note` in the notebook (nothing for the book's settings)."""
        text = self.note()
        if text:
            from IPython.display import Markdown, display

            display(Markdown(text))

    def verdict_box(self) -> str:
        """The chapter's verdict box (:func:`verdict_box_markdown`) from these rows."""
        return verdict_box_markdown(list(self.rows))

    def summary(self) -> str:
        """One line per setup: the claims' verdict counts, and whether the settings are the
        book's."""
        lines = [
            f"{CHAPTERS[self.chapter][1]}: "
            + (
                "the book's settings"
                if self.book
                else f"settings other than the book's ({', '.join(self.differences())})"
            )
        ]
        for s in self.setups:
            verdicts = [r.setups[s].verdict for r in self.rows]
            lines.append(f"  {SETUPS[s].label}: {_counts_md(verdicts) or 'no claims'}")
        return "\n".join(lines)


def chapter_page(chapter: str, settings: Any = None) -> ChapterPage:
    """The chapter's page under ``settings`` (default: the book's): its results per setup
    (the typical run of each setup's ensemble, for a chapter with one), the ensembles, and
    its claims judged on them. With the book's settings the rows are the stored ones
    (:func:`evaluate_chapter`); with a reader's, everything is computed from them.

    Raises
    ------
    ValueError
        If the chapter is unknown or the settings are not valid (before any work).
    """
    spec = chapter_spec(chapter)
    st = spec.book_settings() if settings is None else settings
    if type(st) is not type(spec.book_settings()):
        raise ValueError(
            f"chapter_page({chapter!r}): settings must be a {type(spec.book_settings()).__module__}"
            f".Settings, got {type(st).__name__}"
        )
    check_settings(st, ensemble=spec.ensemble is not None)
    setups = tuple(st.setups)
    if spec.ensemble is not None:
        ensembles = {s: chapter_ensemble(chapter, s, st) for s in setups}
        results = {s: typical_run(chapter, s, st) for s in setups}
    else:
        ensembles = {}
        results = {s: chapter_results(chapter, s, st) for s in setups}
    rows = tuple(evaluate_chapter(chapter, settings=st)) if spec.claims() else ()
    return ChapterPage(
        chapter=chapter,
        settings=st,
        book=st == spec.book_settings(),
        results=results,
        ensembles=ensembles,
        rows=rows,
    )


# =========================================================================== rendering
def _cell(text: str) -> str:
    """Text safe inside a MyST table cell (pipes escaped, one line)."""
    return " ".join(str(text).split()).replace("|", "\\|")


def _verdict_md(o: Outcome) -> str:
    return f"**{o.verdict}**"


def _claim_md(r: ClaimRow) -> str:
    link = f" ({{numref}}`{r.figure}`)" if r.figure else ""
    return f"**{_cell(r.id)}**{link}"


def _group_key(cid: str) -> str | None:
    """The table or figure whose cells ``cid`` is one of (``T2a``, ``T3b``, ``F8``), or None:
    only the cells of a table, and Figure 8's leaderboard cells, are counted together."""
    key = cid.split("-", 1)[0]
    return key if (key[:1] == "T" and key[1:2].isdigit()) or key == "F8" else None


def _table_md(table: str, caption: str, name: str | None = None) -> str:
    """A MyST pipe table inside a ``{table}`` directive: numbered and captioned in the book."""
    opts = f":name: {name}\n" if name else ""
    return f"````{{table}} {caption}\n{opts}\n{table}\n````"


def _head_md(first: str, setups: Sequence[str]) -> list[str]:
    """The head and separator lines of a MyST table with one column per setup."""
    head = f"| {first} | " + " | ".join(SETUPS[s].label for s in setups) + " |"
    return [head, "|" + "---|" * (len(setups) + 1)]


def _counts_md(verdicts: Sequence[str]) -> str:
    parts = [f"{verdicts.count(v)} {v}" for v in VERDICTS if verdicts.count(v)]
    return ", ".join(parts)


def verdict_box_markdown(rows: Sequence[ClaimRow], min_group: int = 4) -> str:
    """The chapter's verdict box (MyST markdown): one line per claim with its verdict under
    each setup, each claim linked to the book figure that shows it (``{numref}``, so a broken
    link fails the build). The cells of one table (ids such as ``T2a-z1-bbh``) or of Figure 8
    get one line with their verdict counts when there are at least ``min_group`` of them."""
    if not rows:
        raise ValueError("verdict_box_markdown: no claims")
    setups = list(rows[0].setups)
    lines = _head_md("claim", setups)
    sizes: dict[str | None, int] = {}
    for r in rows:
        sizes[_group_key(r.id)] = sizes.get(_group_key(r.id), 0) + 1
    done: set[str] = set()
    for r in rows:
        key = _group_key(r.id)
        if key is not None and sizes[key] >= min_group:
            if key in done:
                continue
            done.add(key)
            group = [x for x in rows if _group_key(x.id) == key]
            fig = next((x.figure for x in group if x.figure), None)
            link = f" ({{numref}}`{fig}`)" if fig else ""
            kinds = {x.kind for x in group}
            lines.append(
                f"| **{key}-…**{link}: {len(group)} {'/'.join(sorted(kinds))} claims "
                f"({_cell(group[0].section)}) | "
                + " | ".join(_counts_md([x.setups[s].verdict for x in group]) for s in setups)
                + " |"
            )
            continue
        lines.append(
            f"| {_claim_md(r)}: {_cell(r.claim)} | "
            + " | ".join(_verdict_md(r.setups[s]) for s in setups)
            + " |"
        )
    counts = []
    for s in setups:
        analysis = [r.setups[s].verdict for r in rows if r.kind == "analysis"]
        counts.append(
            f"{SETUPS[s].label}: {analysis.count('reproduced')} of {len(analysis)} "
            "analysis claims reproduced"
        )
    caption = (
        "Verdicts of this chapter's claims under each setup (one line per claim; the "
        "cells of one table or figure of the paper counted together, lookups included)."
    )
    chapter = rows[0].chapter
    return (
        _table_md("\n".join(lines), caption, f"tab-{chapter}-verdicts")
        + "\n\n"
        + "; ".join(counts)
        + "."
    )


def verdicts_markdown(rows: Sequence[ClaimRow]) -> str:
    """The chapter's verdicts section (MyST markdown): per claim the paper's value, and per
    setup our value, verdict and reason (with the stability share of a headline claim)."""
    out = []
    for r in rows:
        out.append(
            f"**{_cell(r.id)}** ({_cell(r.section)}; {r.kind}) {_cell(r.claim)} "
            f"Paper: {_cell(r.paper)}." + (f" Shown in {{numref}}`{r.figure}`." if r.figure else "")
        )
        out.append("")
        for s, o in r.setups.items():
            stab = f" Stability: {o.stability.text()}." if o.stability else ""
            out.append(
                f"- *{SETUPS[s].label}*: {_verdict_md(o)}. Ours: {_cell(o.ours)}. "
                f"Why: {_cell(o.reason)}.{stab}"
            )
        out.append("")
    return "\n".join(out)


def summary_markdown(card: Scorecard, name: str | None = None) -> str:
    """Verdict counts per chapter (rows) and setup (columns) for analysis claims, then the
    lookups in one line (MyST markdown table, numbered; ``name`` its anchor)."""
    setups = card._setups()
    lines = _head_md("chapter", setups)
    for chapter, (nb, title) in CHAPTERS.items():
        rows = [r for r in card.chapter_rows(chapter) if r.kind == "analysis"]
        if not rows:
            continue
        lines.append(
            f"| {{doc}}`{title} </notebooks/{nb}>` ({len(rows)}) | "
            + " | ".join(_counts_md([r.setups[s].verdict for r in rows]) for s in setups)
            + " |"
        )
    total = [r for r in card.rows if r.kind == "analysis"]
    lines.append(
        f"| **all analysis claims** ({len(total)}) | "
        + " | ".join(_counts_md([r.setups[s].verdict for r in total]) for s in setups)
        + " |"
    )
    look = [r for r in card.rows if r.kind == "lookup"]
    text = _table_md(
        "\n".join(lines),
        "Analysis claims per chapter: verdict counts under each "
        "setup (the number of analysis claims in brackets; lookups apart).",
        name,
    )
    if look:
        text += (
            "\n\nLookups (values read off the leaderboard, counted apart): "
            + "; ".join(
                f"{SETUPS[s].label}: " + _counts_md([r.setups[s].verdict for r in look])
                for s in setups
            )
            + f" ({len(look)} claims)."
        )
    return text


def headline_markdown(card: Scorecard, name: str | None = None) -> str:
    """The headline claims (:data:`HEADLINE`) with their verdict and refit share per setup
    (a numbered MyST table; ``name`` its anchor), then one line on what the verdict reads and
    one on what the refit share measures, so that a claim that is reproduced and holds in
    half the refits reads as both."""
    setups = card._setups()
    lines = _head_md("headline claim", setups)
    by_id = {r.id: r for r in card.rows}
    designs: list[str] = []
    runs: set[int] = set()
    for cid in HEADLINE:
        if cid not in by_id:
            continue
        r = by_id[cid]
        cells = []
        for s in setups:
            o = r.setups[s]
            stab = ""
            if o.stability:
                k = share_words(o.stability.share, o.stability.n_fits)
                stab = f"; refits: holds in {k}"
                if o.stability.design not in designs:
                    designs.append(o.stability.design)
            if o.ensemble is not None:
                runs.add(o.ensemble.runs)
            cells.append(f"verdict: {_verdict_md(o)}{stab}")
        lines.append(f"| {_claim_md(r)}: {_cell(r.claim)} | " + " | ".join(cells) + " |")
    seeds = " or ".join(str(n) for n in sorted(runs)) if runs else "20"
    design = "; ".join(designs) if designs else "resampled models × FastICA seeds"
    notes = (
        f"*The verdict* reads the claim on all of the setup's models, judged on every run of "
        f"an ensemble of {seeds} FastICA seeds (a fit-based claim) or on the setup's own fit, "
        "by the rule of the scorecard page (reproduced: at least 2/3 of the runs reproduce it).\n\n"
        f"*The refit share* measures how often the claim holds when the models themselves are "
        f"resampled ({_cell(design)}): how much it depends on which models happen to be in "
        "the data, not a second verdict; a claim can be reproduced on all models and hold in "
        "only half of the resamples."
    )
    return (
        _table_md(
            "\n".join(lines),
            "The headline claims: the verdict (on all models) and the share of refits on "
            "resampled models in which the claim holds, per setup.",
            name,
        )
        + "\n\n"
        + notes
    )


def chapter_details_markdown(card: Scorecard) -> str:
    """Every claim, chapter by chapter, each chapter in a collapsed block (MyST)."""
    out = []
    for chapter, (nb, title) in CHAPTERS.items():
        rows = card.chapter_rows(chapter)
        if not rows:
            continue
        n_look = sum(r.kind == "lookup" for r in rows)
        what = (
            f"{len(rows)} claims ({len(rows) - n_look} analysis, {n_look} lookups)"
            if n_look
            else f"{len(rows)} analysis claims"
        )
        out.append(
            f"````{{admonition}} {title}: {what}\n:class: dropdown\n\n"
            f"Chapter: {{doc}}`/notebooks/{nb}`.\n\n{verdicts_markdown(rows)}\n````\n"
        )
    return "\n".join(out)


# =========================================================================== instrument
def chapter_number(chapter: str) -> int:
    """The book's chapter number of a chapter key: its notebook ``NN_name`` is chapter NN."""
    return int(CHAPTERS[chapter][0][:2])


def chapter_label(chapter: str) -> str:
    """A short label: ``"3 HCA recovery"``."""
    return f"{chapter_number(chapter)} {CHAPTERS[chapter][1].split(' (')[0].split(':')[0]}"


def summary_counts(card: Scorecard, kind: str | None = "analysis") -> pd.DataFrame:
    """Claims per chapter (rows, short labels) and ``(setup, verdict)`` (columns)."""
    t = card.by_chapter(kind)
    labels = {CHAPTERS[c][1]: chapter_label(c) for c in CHAPTERS}
    return t.rename(index=labels)


def headline_shares(card: Scorecard) -> pd.DataFrame:
    """Share of refits in which each headline claim holds (rows) per setup (columns)."""
    by_id = {r.id: r for r in card.rows}
    data = {
        f"{HEADLINE_NAMES.get(cid, cid)}\n({cid})": {
            s: o.stability.share for s, o in by_id[cid].setups.items() if o.stability
        }
        for cid in HEADLINE
        if cid in by_id
    }
    return pd.DataFrame(data).T.rename_axis("claim")


def _flat(prefix: str, value: Any, out: dict) -> None:
    if isinstance(value, dict):
        for k, v in value.items():
            _flat(f"{prefix}_{k}", v, out)
    elif isinstance(value, (list, tuple)):
        out[prefix] = "; ".join(map(str, value))
    else:
        out[prefix] = value


def scorecard_frame(card: Scorecard) -> pd.DataFrame:
    """The JSON records flattened to one row per claim (``<setup>_verdict``,
    ``<setup>_stability_share``, ... and whatever else a setup's record holds)."""
    rows = []
    for rec in card.records():
        row = {k: v for k, v in rec.items() if k != "setups"}
        for s, d in rec["setups"].items():
            _flat(s, d, row)
        rows.append(row)
    return pd.DataFrame(rows)


def scorecard_csv(card: Scorecard) -> str:
    """:func:`scorecard_frame` as CSV text (the book's ``scorecard.csv`` download)."""
    return scorecard_frame(card).to_csv(index=False)


def _share_text(o: Outcome, record: dict) -> str:
    """The refit share and the ensemble's share, one sentence each (two run sets)."""
    parts = []
    if o.stability is not None:
        k = share_words(o.stability.share, o.stability.n_fits, "refits on resampled models")
        parts.append(f"The claim holds in {k}.")
    ens = record.get("ensemble")  # the seed ensemble's share (as rounded in the JSON)
    if ens is not None:
        k = round(float(ens["share"]) * int(ens["runs"]))
        parts.append(f"It is reproduced in {k_of_n(k, ens['runs'], 'FastICA runs')}.")
    return " ".join(parts)


def _verdict_html(verdict: str) -> str:
    """A verdict cell of the scorecard's table: a ``verdict`` span whose ``data-rank`` is the
    verdict's place in :data:`VERDICTS` (any other verdict after them), so that the page's
    verdict filter lists the verdicts in that order."""
    rank = VERDICTS.index(verdict) if verdict in VERDICTS else len(VERDICTS)
    slug = verdict.replace(" ", "-")
    return f'<span class="verdict verdict-{slug}" data-rank="{rank}">{verdict}</span>'


def claims_frame(card: Scorecard, html: bool = True) -> pd.DataFrame:
    """One row per claim, both setups side by side, for the scorecard page's table.

    Columns: chapter (its number), claim id, claim, kind, the paper's value, then per setup its verdict and
    one cell with our value, the stability (or ensemble) share of a headline claim and the
    reason, and the figure. With
    ``html`` the verdicts are ``<span class="verdict verdict-...">`` and the figure a link to
    its anchor on the chapter's page (relative to a page in ``notebooks/``).
    """
    recs = {r["id"]: r for r in card.records()}
    rows = []
    for r in card.rows:
        d = {
            "chapter": str(chapter_number(r.chapter)),
            "id": r.id,
            "claim": r.claim,
            "kind": r.kind,
            "paper": r.paper,
        }
        for s, o in r.setups.items():
            label = SETUPS[s].label
            v = o.verdict
            d[f"{label}: verdict"] = _verdict_html(v) if html else v
            share = _share_text(o, recs[r.id]["setups"][s])
            d[f"{label}: ours, why"] = (
                f"{o.ours}." + (f" {share}" if share else "") + f" Why: {o.reason}"
            )
        nb = CHAPTERS[r.chapter][0]
        d["figure"] = (
            (f'<a href="{nb}.html#{r.figure}" title="{r.figure}">figure</a>' if html else r.figure)
            if r.figure
            else ""
        )
        rows.append(d)
    return pd.DataFrame(rows)


def intro_answer(card: Scorecard, *, links: dict[str, str] | None = None) -> str:
    """The book's opening paragraph (MyST): how many of the paper's analysis claims each setup
    reproduces, what becomes of the central claim (the causal order) and why, and how many
    claims the data do not determine. Every count and word that depends on a result comes
    from ``card``; ``links`` maps ``why`` (the section explaining the order's differences)
    and ``not_determined`` (the section saying what "not determined" means) to labels."""
    links = links or {}
    setups = card._setups()
    label = {s: f"the {SETUPS[s].label}" for s in setups}
    analysis = [r for r in card.rows if r.kind == "analysis"]
    n = len(analysis)
    out = [
        f"This book judges each of the paper's {count(n, 'analysis claim')} twice, from public "
        "data.",
        "The authors' setup follows their data and choices as far as public material allows; "
        "the careful setup uses this book's attribution of models to base models and its own "
        "choices.",
    ]
    held = []
    for s in setups:
        v = [r.setups[s].verdict for r in analysis]
        held.append(
            f"under {label[s]}, {k_of_n(v.count('reproduced'), n)} are reproduced and "
            f"{v.count('partly')} partly"
        )
    out.append(f"{held[0][0].upper()}{held[0][1:]}" + "".join(f"; {h}" for h in held[1:]) + ".")
    by_id = {r.id: r for r in card.rows}
    order = by_id.get("S4-order")
    if order is not None:
        said = {"partly": "partly reproduced", "not determined": "not determined by the data"}
        verdicts = [
            f"{said.get(order.setups[s].verdict, order.setups[s].verdict)} under {label[s]}"
            for s in setups
        ]
        if len(setups) > 1 and len({order.setups[s].verdict for s in setups}) == 1:
            v = order.setups[setups[0]].verdict
            if v == "not reproduced":
                verdicts = [
                    "not reproduced under either setup"
                    if len(setups) == 2
                    else "not reproduced under any setup"
                ]
            else:
                both = "both setups" if len(setups) == 2 else f"all {len(setups)} setups"
                verdicts = [f"{said.get(v, v)} under {both}"]
        out.append(
            "The paper's central claim, the causal order general capability → instruction "
            f"following → mathematics, is {join_words(verdicts)}."
        )
        stab = {s: order.setups[s].stability for s in setups if order.setups[s].stability}
        sizes = {x.n_fits for x in stab.values()}
        if stab and len(sizes) == 1:
            parts = [
                f"{share_words(x.share, x.n_fits, 'refits' if i == 0 else '')} under {label[s]}"
                for i, (s, x) in enumerate(stab.items())
            ]
            out.append(f"Refitted on resampled models, it holds in {join_words(parts)}.")
        else:
            for s, x in stab.items():
                out.append(
                    f"Under {label[s]}, refitted on resampled models, it holds in "
                    f"{share_words(x.share, x.n_fits, 'refits')}."
                )
        why = links.get("why")
        out.append(
            "What moves it is which models count as a base model's domain, a FastICA local "
            "optimum and a near tie between the two best orders"
            + (f" ({{ref}}`why <{why}>`)." if why else ".")
        )
    nd = {s: sum(r.setups[s].verdict == "not determined" for r in analysis) for s in setups}
    if any(nd.values()):
        where = links.get("not_determined")
        parts = [
            f"{count(nd[s], 'analysis claim') if i == 0 else nd[s]} under {label[s]}"
            for i, s in enumerate(setups)
        ]
        out.append(
            f"The data do not determine {join_words(parts)}"
            + (f" ({{ref}}`what that means <{where}>`)." if where else ".")
        )
    return " ".join(out)


def not_determined_markdown(card: Scorecard, *, evidence: str | None = None) -> str:
    """What "not determined" means, in a few plain sentences (MyST), with the claims it
    applies to under each setup (from ``card``) and a link to the evidence (``evidence``:
    the label of the section that shows it)."""
    setups = card._setups()
    analysis = [r for r in card.rows if r.kind == "analysis"]
    text = [
        "HCA's first step, FastICA, maximises an objective from a random start and can stop in "
        "one of several local optima of it.",
        "Listing a domain's models in reverse order changes nothing in exact arithmetic, so "
        "when it changes where FastICA stops, rounding decided it: that run is "
        "*rounding-sensitive*.",
        "The book groups the runs of such a domain by the optimum they land in and compares "
        "the optima by FastICA's own objective.",
        "When two optima give a claim different answers and the objective cannot tell them "
        "apart, rounding, not the data, picks the answer: the claim is *not determined* by "
        "these data.",
        "When one optimum is clearly better, the book says which, and judges the claim from "
        "all runs.",
    ]
    for s in setups:
        ids = [r.claim.rstrip(".") for r in analysis if r.setups[s].verdict == "not determined"]
        text.append(
            f"Under the {SETUPS[s].label}, "
            + (
                f"{count(len(ids), 'claim')} {'is' if len(ids) == 1 else 'are'} not determined"
                + (": " + "; ".join(f"\u201c{_cell(i)}\u201d" for i in ids) if ids else "")
                if ids
                else "no claim is not determined"
            )
            + "."
        )
    if evidence:
        text.append(f"The evidence: {{ref}}`the MMLU chapter <{evidence}>`.")
    return " ".join(text)


def synthesis_markdown(
    card: Scorecard, *, near_tie: float | None = None, links: dict[str, str] | None = None
) -> str:
    """The intro's synthesis (MyST): what held, what did not, why, and what it means.

    Every count comes from ``card``; ``near_tie`` is the MIC gap between the two best row
    orders of the authors' better-optimum fit (:mod:`hca.paper.recovery`); ``links`` maps the
    causes (``domains``, ``optimum``, ``near_tie``, ``stored_run``, ``reading_rule``) to the
    labels of the sections that show them (linked with ``{ref}``).
    """
    links = links or {}

    def link(key: str, text: str) -> str:
        return f"{{ref}}`{text} <{links[key]}>`" if key in links else text

    setups = card._setups()
    analysis = [r for r in card.rows if r.kind == "analysis"]
    both_fail = [
        r for r in analysis if all(r.setups[s].verdict == "not reproduced" for s in setups)
    ]
    both_hold = [r for r in analysis if all(r.setups[s].verdict == "reproduced" for s in setups)]
    only_authors = [
        r
        for r in analysis
        if r.setups.get("authors") is not None
        and r.setups["authors"].verdict == "reproduced"
        and any(r.setups[s].verdict == "not reproduced" for s in setups if s != "authors")
    ]
    by_id = {r.id: r for r in card.rows}

    def chap_counts(rows: Sequence[ClaimRow]) -> str:
        n = Counter(chapter_label(r.chapter) for r in rows)
        return ", ".join(
            f"{v} in chapter {k.split(' ', 1)[0]}"
            for k, v in sorted(n.items(), key=lambda kv: -kv[1])[:4]
        )

    def examples(rows: Sequence[ClaimRow], n: int = 4) -> str:
        seen: dict[str, ClaimRow] = {}
        for r in rows:  # the first claim of each chapter, in book order
            seen.setdefault(r.chapter, r)
        picked = list(seen.values())[:n]
        return "; ".join(
            f"\u201c{_cell(r.claim).rstrip('.')}\u201d ({r.id}, chapter "
            f"{chapter_number(r.chapter)})"
            for r in picked
        )

    one_hold = [
        r
        for r in analysis
        if r not in both_hold and any(r.setups[s].verdict == "reproduced" for s in setups)
    ]
    partly = [
        r
        for r in analysis
        if all(r.setups[s].verdict in ("reproduced", "partly") for s in setups)
        and r not in both_hold
    ]
    undetermined = {
        s: [r.id for r in analysis if r.setups[s].verdict == "not determined"] for s in setups
    }
    lines = [
        f"**What held.** {len(both_hold)} of the {len(analysis)} analysis claims are reproduced "
        f"under both setups ({chap_counts(both_hold)}), for example: "
        f"{examples(both_hold, 6)}. {len(one_hold)} more are reproduced under one setup, and "
        f"{len(partly)} hold at least partly under both.",
        "",
        f"**What did not.** {len(both_fail)} analysis claims are not reproduced under either "
        f"setup ({chap_counts(both_fail)}), for example: {examples(both_fail)}. "
        f"{len(only_authors)} hold only under the authors' setup. "
        + link("reading_rule", "The reading rule")
        + ": a claim that fails under both setups "
        "fails on the paper's own terms; one that holds only under the authors' setup depends "
        "on their data choices.",
    ]
    if any(undetermined.values()):
        lines += [
            "",
            "**Not determined by these data.** "
            + "; ".join(
                f"{SETUPS[s].label}: {len(ids)} ({', '.join(ids)})"
                if ids
                else f"{SETUPS[s].label}: none"
                for s, ids in undetermined.items()
            )
            + ". In these claims' fits, FastICA lands in different local optima from one run "
            "to the next, the optima give different answers, and FastICA's own objective "
            "cannot tell them apart: rounding, not the data, picks the answer, so the "
            "scorecard shows every optimum and judges none.",
        ]
    order = by_id.get("S4-order")
    if order is not None:
        verdicts = {o.verdict for o in order.setups.values()}
        shares = "; ".join(
            f"{SETUPS[s].label}: {o.verdict}"
            + (
                ", the paper's order in "
                + share_words(o.stability.share, o.stability.n_fits, "refits")
                if o.stability
                else ""
            )
            for s, o in order.setups.items()
        )
        tie = (
            f"the two best row orders are only {near_tie:.4f} apart in MIC"
            if near_tie is not None
            else "the two best row orders are nearly tied"
        )
        lines += [
            "",
            "**The central claim**, the causal order general capability → "
            f"instruction following → mathematics: {shares}. What moves it:",
            "",
            "1. " + link("domains", "the domain rule") + ": which fine-tuned models "
            "count as a base model's domain moves the fit more than any other choice;",
            "2. " + link("optimum", "a FastICA local optimum") + ": one FastICA run per "
            "domain (seed 0) can stop short of the best fit;",
            "3. " + link("near_tie", "a near tie") + f": even in the better fit {tie}, "
            "so small differences in the rows can swap them;",
            "4. " + link("stored_run", "the authors' own stored run") + " of their "
            "alignment code prints the paper's order, which neither setup finds on the "
            "public data.",
        ]
        if verdicts == {"not reproduced"}:
            meaning = (
                "the paper's central causal story, one hierarchy general → instruction "
                "following → mathematics shared by the base models, is not reproduced "
                "under either setup, so by the reading rule it fails on the paper's own "
                "terms: it rests on a single fit"
                + (
                    " that refits rarely return"
                    if max(
                        (o.stability.share for o in order.setups.values() if o.stability),
                        default=1.0,
                    )
                    < 0.25
                    else ""
                )
                + ", and should be read as one possible order, not as a finding"
            )
        elif "reproduced" in verdicts and len(verdicts) == 1:
            meaning = "the paper's central causal story holds under both setups"
        else:
            meaning = (
                "the paper's central causal story holds only under some choices of "
                "data and estimation, so it depends on them"
            )
        lines += [
            "",
            f"**What this means for the paper.** {meaning[0].upper()}{meaning[1:]}. "
            f"The claims that hold under both setups ({len(both_hold)}) are the part of "
            "the paper that the public data support whichever way the models are "
            "attributed.",
        ]
    return "\n".join(lines)
