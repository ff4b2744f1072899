"""``python -m hca fit``: run HCA on a user's own leaderboard CSV.

Reads a CSV with one row per model, a domain column and one numeric column per benchmark;
prints the causal order (also in benchmark terms), the MIC against its range under random
rotations of the ICA sources, the one-to-one alignment of factors with benchmarks, each
domain's structural equations after the OLS adjustment and the stability over FastICA
seeds (:mod:`hca.cli.report`); ``--json`` and ``--plot`` also write the report and its figure
(:mod:`hca.cli.outputs`). Everything that can be checked before fitting is checked first,
each problem in one line; warnings become one-line notes and progress goes to stderr
(:mod:`hca.cli.notes`). Only :mod:`argparse` is imported at import time (fast ``--help``).
"""

from __future__ import annotations

import argparse

from hca.cli import COMMAND_MODULES, ESTIMATE_NOTE_SECONDS, register_command

__all__ = ["capped_n_jobs", "unencodable_note"]


def _integer(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None


def _int_at_least(low: int):
    def parse(text: str) -> int:
        value = _integer(text)
        if value < low:
            raise argparse.ArgumentTypeError(f"must be at least {low}, got {value}")
        return value

    parse.__name__ = f"integer >= {low}"
    return parse


#: Seeds numpy's and scikit-learn's generators accept.
MAX_SEED = 2**32 - 1
#: ``--time-limit`` by default (minutes): work estimated beyond it is refused before the fit.
DEFAULT_TIME_LIMIT = 60.0


def _int_between(low: int, high: int):
    def parse(text: str) -> int:
        value = _int_at_least(low)(text)
        if value > high:
            raise argparse.ArgumentTypeError(
                f"must be at most {high} (2**32 - 1, the largest seed numpy accepts), got {value}"
            )
        return value

    parse.__name__ = f"integer in {low}..{high}"
    return parse


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"must be a positive finite number, got {text!r}")
    return value


def _n_jobs(text: str) -> int:
    """``--n-jobs``: an integer other than 0 (joblib's convention: -1 every core)."""
    value = _integer(text)
    if value == 0:
        raise argparse.ArgumentTypeError(
            "0 jobs cannot run anything: give 1 for one process, N for N processes or -1 "
            "for every core"
        )
    return value


def capped_n_jobs(n_jobs: int | None, cores: int) -> tuple[int | None, str | None]:
    """``--n-jobs`` within the machine's ``cores``, and a one-line note when it was capped
    (more worker processes than cores only add their start-up and memory)."""
    if n_jobs is None or n_jobs <= cores:
        return n_jobs, None
    return cores, (
        f"--n-jobs {n_jobs} is more than the {cores} core{'s' * (cores != 1)} this process "
        f"can use: running {cores} job{'s' * (cores != 1)}"
    )


def unencodable_note(stream: object, texts: list[str]) -> str | None:
    """A note, before the work, when ``stream``'s encoding cannot show some of ``texts``
    (domain and benchmark names): they will be printed with backslash escapes."""
    encoding = getattr(stream, "encoding", None)
    if not encoding:
        return None
    bad = []
    for text in texts:
        try:
            text.encode(encoding)
        except UnicodeEncodeError:
            bad.append(text)
        except LookupError:  # pragma: no cover - an encoding Python does not know
            return None
    if not bad:
        return None
    example = bad[0].encode(encoding, errors="backslashreplace").decode(encoding)
    return (
        f"the output's encoding ({encoding}) cannot show {len(bad)} domain or benchmark "
        f"name{'s' * (len(bad) > 1)} as written (e.g. {example}): they are printed with "
        "backslash escapes; set PYTHONIOENCODING=utf-8 to see them (the --json report "
        "keeps them exact)"
    )


def _setup(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "csv",
        help="CSV with a header line and one row per model; - (or /dev/stdin, <(...)) reads "
        "it from a pipe, once",
    )
    p.add_argument(
        "--domain-col", metavar="COLUMN", required=True, help="column naming each model's domain"
    )
    p.add_argument(
        "--benchmarks",
        metavar="COLUMNS",
        required=True,
        help="comma-separated benchmark columns, e.g. ifeval,bbh,math_lvl_5",
    )
    p.add_argument(
        "--n-components",
        metavar="D",
        type=_int_at_least(1),
        default=3,
        help="latent factors (default 3)",
    )
    p.add_argument(
        "--search",
        default="exhaustive",
        choices=["exhaustive", "sequential"],
        help="row-order search: exhaustive (the best of all (d0!)^K orders, up to "
        "5,000,000; orders that cannot be the best are ruled out by their bounds) "
        "or sequential (beam search, bounded by --max-nodes); default "
        "exhaustive",
    )
    p.add_argument(
        "--max-nodes",
        metavar="N",
        type=_int_at_least(1),
        default=1_000_000,
        help="budget of the sequential search (prefixes evaluated; it also bounds "
        "memory); default 1000000",
    )
    p.add_argument(
        "--random-state",
        metavar="SEED",
        type=_int_between(0, MAX_SEED),
        default=0,
        help="FastICA seed of the reported fit, 0 to 2**32 - 1 (default 0)",
    )
    p.add_argument(
        "--n-restarts",
        metavar="N",
        type=_int_at_least(1),
        default=1,
        help="FastICA runs per domain, the best by negentropy kept (default 1)",
    )
    p.add_argument(
        "--seeds",
        metavar="N",
        type=_int_at_least(1),
        default=1,
        help="refit with N FastICA seeds (SEED, SEED+1, ...) and "
        "report how often the causal order and the alignment agree; the "
        "first seed's fit is the one reported (default 1)",
    )
    p.add_argument(
        "--dropna",
        action="store_true",
        help="drop rows with a missing score or domain (reported per domain) instead of stopping",
    )
    p.add_argument(
        "--drop-domain",
        metavar="LABEL",
        action="append",
        default=[],
        help="drop the rows of this domain (repeat for several; compared ignoring case), e.g. "
        "placeholders such as Removed or '?' (reported)",
    )
    p.add_argument(
        "--min-domain-size",
        type=_int_at_least(0),
        default=0,
        metavar="N",
        help="drop domains with fewer than N rows (reported)",
    )
    p.add_argument(
        "--drop-duplicates",
        action="store_true",
        help="drop rows that repeat an earlier row (same domain and scores; "
        "reported) instead of counting them twice",
    )
    p.add_argument(
        "--null-draws",
        metavar="N",
        type=_int_at_least(0),
        default=None,
        help="random rotations of the ICA sources for the MIC's reference range "
        "(one search each; 0 skips it); default 20, fewer (with a note) when 20 searches, "
        "each estimated from the calibration, would take longer than a minute or, if longer, the "
        "fit; none when fewer than 5 would fit; with N draws the 5-95%% range covers on "
        "average 0.9 (N-1)/(N+1) of the rotations' MICs (81%% for 20, 60%% for 5)",
    )
    p.add_argument(
        "--n-jobs",
        metavar="N",
        type=_n_jobs,
        default=None,
        help="parallel jobs (joblib) for the per-domain ICA and the --seeds "
        "refits, -1 for every core, not 0; more than the machine's cores are capped to "
        "them (with a note); the results do not depend on it (default: one)",
    )
    p.add_argument(
        "--time-limit",
        metavar="MINUTES",
        type=_positive_float,
        default=DEFAULT_TIME_LIMIT,
        help="refuse, before any fit, a run whose work (measured on this machine before it "
        f"starts: the fit, --seeds, the MIC reference) may exceed MINUTES (default "
        f"{DEFAULT_TIME_LIMIT:g}); the estimate is shown when it exceeds "
        f"{ESTIMATE_NOTE_SECONDS:g} s",
    )
    p.add_argument(
        "--json",
        metavar="PATH",
        help="also write the full report as JSON (a file is replaced atomically, "
        "a link's target is written, a device or FIFO is written through; standard output "
        "(/dev/stdout, or the file it is redirected to) is written through it and the "
        "printed report goes to stderr)",
    )
    p.add_argument(
        "--plot",
        metavar="PATH",
        help="also draw the unmixing matrix and the causal graphs (.svg, .png, .pdf)",
    )
    p.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="progress on stderr with an ETA per domain's ICA and search level: a "
        "bar on a terminal (for runs longer than 2 s), plain 'progress:' "
        "lines otherwise (default: when stderr is a terminal)",
    )


def _check_domains(board, n_components: int, search: str) -> None:
    """Problems visible before any ICA, by the library's own validation
    (:func:`hca.validation.check_fit_data`: at least two domains, more models than benchmarks
    in each, no constant benchmark, a valid number of factors), then the size of an
    exhaustive search."""
    from hca.estimator.search import check_search_size
    from hca.validation import InputError, check_fit_data

    sizes = board.domain_sizes()
    p = board.X.shape[1]
    if len(sizes) < 2:
        raise InputError(
            f"HCA needs at least 2 domains, found {len(sizes)} "
            f"({list(sizes)}) after the rows dropped"
        )
    if n_components > p:
        raise InputError(f"--n-components {n_components} exceeds the number of benchmarks ({p})")
    try:
        check_fit_data(board.X, board.domains, n_components)
    except ValueError as err:
        small = sum(v <= p for v in sizes.values())
        if small and "models but at least" in str(err):
            raise InputError(
                f"{err} ({small} of {len(sizes)} domains have {p} rows or fewer); "
                f"drop them with --min-domain-size {p + 1}"
            ) from None
        raise
    check_search_size(search, len(sizes), n_components, hint="use --search sequential")


def _run(args: argparse.Namespace) -> int:
    import dataclasses
    import json
    import sys
    import time

    import joblib

    from hca.cli import report as rep
    from hca.cli.estimate import (
        Shape,
        check_memory,
        check_table,
        check_work,
        estimate_memory,
        estimate_work,
    )
    from hca.cli.inputs import PLOT_SUFFIXES, load_leaderboard
    from hca.cli.notes import Notes, Progress
    from hca.cli.outputs import check_output_path, write_outputs
    from hca.validation import InputError, check_params

    early: list[str] = []

    def announce(line: str) -> None:  # a note shown at once (e.g. the work estimate)
        print(f"note: {line}", file=sys.stderr, flush=True)
        early.append(line)

    n_jobs, note = capped_n_jobs(args.n_jobs, joblib.cpu_count())
    settings = rep.FitSettings(
        n_components=args.n_components,
        search=args.search,
        max_nodes=args.max_nodes,
        random_state=args.random_state,
        n_restarts=args.n_restarts,
        seeds=args.seeds,
        min_domain_size=args.min_domain_size,
        dropna=args.dropna,
        drop_duplicates=args.drop_duplicates,
        null_draws=args.null_draws,
        n_jobs=n_jobs,
    )
    check_params(settings.estimator(args.random_state))  # HCA's own ranges, before the data
    benchmarks = [b.strip() for b in args.benchmarks.split(",") if b.strip()]
    outputs = {}
    for option, value, suffixes in (
        ("--json", args.json, None),
        ("--plot", args.plot, PLOT_SUFFIXES),
    ):
        if value is not None:
            inputs = [] if args.csv == "-" else [args.csv]
            outputs[option] = check_output_path(value, option, suffixes, inputs=inputs)
    if len(outputs) == 2 and all(o.stdout for o in outputs.values()):
        raise InputError("--json and --plot both name standard output; give one a file")
    if (
        len(outputs) == 2
        and not outputs["--json"].stream
        and outputs["--json"].target.resolve() == outputs["--plot"].target.resolve()
    ):
        raise InputError("--json and --plot name the same file")
    to_stdout = [o.option for o in outputs.values() if o.stdout]
    report_out = sys.stderr if to_stdout else sys.stdout
    if note:
        announce(note)
    if to_stdout:
        announce(f"{to_stdout[0]} writes to standard output, so the report is printed on stderr")
    board = load_leaderboard(
        args.csv,
        args.domain_col,
        benchmarks,
        dropna=args.dropna,
        min_domain_size=args.min_domain_size,
        drop_duplicates=args.drop_duplicates,
        drop_domains=args.drop_domain,
    )
    _check_domains(board, args.n_components, args.search)
    for line in board.notes:
        announce(line)
    note = unencodable_note(report_out, [*board.domain_sizes(), *benchmarks, str(args.csv)])
    if note:
        announce(note)
    shape = Shape(
        tuple(board.domain_sizes().values()),
        board.X.shape[1],
        args.n_components,
        args.search,
        args.max_nodes,
        settings.beam_width,
    )
    check_table(shape)
    options = {"seeds": args.seeds, "null_draws": args.null_draws or 0, "n_jobs": n_jobs}
    work = estimate_work(shape, speed=1.0, **options)
    if work.high * 4 >= min(ESTIMATE_NOTE_SECONDS, 60 * args.time_limit):  # it may matter:
        work = estimate_work(shape, **options)  # this machine's speed and load now
    if args.null_draws is None:  # the default reference: at most its budget
        work = dataclasses.replace(work, reference_cap=rep.reference_budget(work.fit))
    check_work(work, args.time_limit, shape)
    memory = estimate_memory(
        shape,
        null_draws=rep.DEFAULT_NULL_DRAWS if args.null_draws is None else args.null_draws,
        seeds=args.seeds,
        n_jobs=n_jobs or 1,
    )
    check_memory(memory)
    if work.total > ESTIMATE_NOTE_SECONDS:
        announce(work.text())
    if args.null_draws:
        rep.reference_draws(work.per_draw, work.fit, args.null_draws, announce)
    notes = Notes()
    note = rep.duplicates_note(board.duplicated_rows, board.dropped_duplicates)
    if note:
        announce(note)
    steps = args.seeds + (args.null_draws != 0) + ("--plot" in outputs)
    started, cpu = time.perf_counter(), time.process_time()
    with Progress(steps, enabled=args.progress) as progress:
        one_fit = {"ICA": work.ica, "search": work.search_high, "rest": work.rest}
        fits = rep.fit_seeds(
            board, settings, notes, progress, announce=announce, expected=one_fit,
            after=work.reference,
        )  # fmt: skip
        for category in ("UncertifiedSearchWarning", "ConvergenceWarning"):
            notes.drop(category)  # one note each below, instead of one per seed or domain
        if args.null_draws is None:  # the default: as many draws as fit in the budget
            draws = rep.reference_draws(work.per_draw, fits.seconds, None, announce)
        else:
            draws = args.null_draws
        settings = dataclasses.replace(settings, null_draws=draws)
        reference = None
        if draws > 0:
            progress.stage(
                f"MIC reference ({draws} random rotations)", {"search": work.per_draw * draws}
            )
            reference = rep.mic_reference(fits.reference.model, draws, progress=progress.listener)
            progress.advance()
        report = rep.build_report(
            board,
            settings,
            fits,
            csv=args.csv,
            domain_col=args.domain_col,
            reference=reference,
            estimate=rep.estimate_record(
                work, memory, time.perf_counter() - started, time.process_time() - cpu
            ),
        )
        report["search"]["stop"] = rep.stop_reason(report)
        for line in early:
            notes.add(line)
        for note in (rep.search_note(report), rep.convergence_note(report), rep.trust_note(report)):
            if note:
                notes.add(note)
        if len(report["domains"]) > 12 and "--plot" in outputs:
            notes.add(
                f"the figure shows the causal graphs of the first 12 of "
                f"{len(report['domains'])} domains"
            )
        report["notes"] = notes.lines()
        text = json.dumps(report, indent=2, allow_nan=False)  # fails before anything is written
        writers = {}
        if "--plot" in outputs:
            progress.stage("figure")
            # lazy: matplotlib and hca.plots load only for --plot (a small fit without a
            # figure: 2.1 s instead of 2.9 s, 166 MB instead of 191 MB)
            from hca.plots.report import plot_fit_report

            ref = fits.reference
            writers[outputs["--plot"]] = lambda tmp: plot_fit_report(
                ref.adjusted, ref.assignment, tmp
            )
        if "--json" in outputs:
            writers[outputs["--json"]] = lambda tmp: tmp.write_text(text, encoding="utf-8")
        written = write_outputs(writers)  # all or none; streams written through
        if "--plot" in outputs:
            progress.advance()
    print(rep.format_report(report), file=report_out)
    for out in written[::-1]:
        print(f"wrote {out.path}", file=report_out)
    for line in report["notes"]:
        if line not in early:
            print(f"note: {line}", file=sys.stderr)
    return 0


register_command("fit", COMMAND_MODULES["fit"][1], _setup, _run)
