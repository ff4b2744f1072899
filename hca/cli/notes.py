"""Python warnings as one-line notes, and a progress bar on stderr for long steps."""

from __future__ import annotations

import contextlib
import math
import sys
import threading
import time
import warnings
from collections.abc import Iterator
from typing import Any

import numpy as np

from hca.cli import one_line

__all__ = ["Notes", "Progress"]


class Notes:
    """Collect Python warnings (deduplicated, in order) as one-line notes.

    ``with notes.capture(run): ...`` records every warning raised inside as a note; ``run``
    labels the run (e.g. the FastICA seed) so that a note repeated over runs is counted
    once: ``"... (in 3 of 5 seeds)"``. Notes can also be added directly with :meth:`add`.
    """

    def __init__(self) -> None:
        self._runs: dict[str, set] = {}
        self._categories: dict[str, str] = {}
        self.n_runs = 0

    @contextlib.contextmanager
    def capture(self, run: Any = None) -> Iterator[None]:
        self.n_runs += 1
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            yield
        for w in caught:
            self.add(str(w.message), run, w.category.__name__)

    def add(self, message: str, run: Any = None, category: str = "note") -> None:
        text = one_line(message)
        self._runs.setdefault(text, set()).add(run)
        self._categories.setdefault(text, category)

    def has(self, category: str) -> bool:
        """Whether some note came from a warning of this class name."""
        return category in self._categories.values()

    def drop(self, category: str) -> None:
        """Forget the notes from warnings of this class name (replaced by a clearer note)."""
        for text in [t for t, c in self._categories.items() if c == category]:
            del self._runs[text], self._categories[text]

    def lines(self) -> list[str]:
        """Every note once, with the share of runs it occurred in when there were several."""
        out = []
        for text, runs in self._runs.items():
            runs = {r for r in runs if r is not None}
            if self.n_runs > 1 and runs and len(runs) < self.n_runs:
                text = f"{text} (in {len(runs)} of {self.n_runs} runs)"
            out.append(text)
        return out


def _clock(seconds: float) -> str:
    """``m:ss`` or ``h:mm:ss``; at least ``0:01`` (work that remains never reads 0:00)."""
    seconds = max(1, int(math.ceil(seconds)))
    h, rest = divmod(seconds, 3600)
    return f"{h}:{rest // 60:02d}:{rest % 60:02d}" if h else f"{rest // 60}:{rest % 60:02d}"


class Progress:
    """Progress on stderr: the seeds done, and within a fit each domain's ICA and each level
    of the search, with the time left (ETA) of the whole run.

    The ETA adds the current stage's time left to the expected seconds of the stages after
    it (:meth:`stage`: ``expected``, ``after``; from the work estimate). Within a stage, the
    ICA's time left follows from its domains done; a search's (whose beams and levels say
    little of the time left) from the stage's estimate less the time spent, an upper
    estimate for the sequential search (its budget). A stage that runs past its estimate
    shows ``ETA unknown`` rather than a time: the ETA never reads 0:00 while work remains.
    Without an estimate (``expected`` None) the ICA's and an exhaustive search's own
    counts give the stage's ETA, and the other steps none.

    On a terminal (``enabled=None`` and stderr a terminal, or ``enabled=True``) a tqdm bar
    that appears once the work lasts more than ``delay`` s; a background thread refreshes
    the elapsed time while a long step runs. Off a terminal with ``enabled=True``
    (``--progress``), plain lines ``hca fit: [seeds done/steps] stage: step, ETA`` on
    stderr once the work lasts more than ``delay`` s, at most one every ``interval`` s (and
    at every new stage). The library reports its steps to :meth:`listener`, passed as the
    ``progress`` argument of the fit (:mod:`hca.estimator.progress`).
    """

    def __init__(
        self,
        total: int,
        enabled: bool | None = None,
        delay: float = 2.0,
        desc: str = "hca fit",
        interval: float = 1.0,
    ) -> None:
        tty = sys.stderr.isatty()
        if enabled is None:
            enabled = tty
        self.bar = None
        self.plain = bool(enabled) and not tty
        self.total, self.done, self.interval = total, 0, interval
        self.desc, self.delay, self._start = desc, delay, time.monotonic()
        self._stage, self._detail = "", ""
        self._step_start: dict[str, float] = {}
        self._step_end = time.monotonic()
        self._stage_start = time.monotonic()
        self._expected: dict[str, float] | None = None
        self._after = 0.0
        self._last_line = -np.inf
        self._stop = threading.Event()
        if enabled and tty:
            from tqdm import tqdm

            self.bar = tqdm(
                total=total,
                desc=desc,
                file=sys.stderr,
                delay=delay,
                leave=False,
                unit="step",
                bar_format="{desc}: {n}/{total}{postfix} [{elapsed}]",
            )
            self._thread = threading.Thread(target=self._tick, daemon=True)
            self._thread.start()

    def _tick(self) -> None:
        while not self._stop.wait(0.5):
            bar = self.bar
            if bar is not None and time.time() >= bar.start_t + self.delay:
                bar.refresh()
                bar.last_print_t = time.time()  # so that close() clears the line

    def _show(self, force: bool = False) -> None:
        text = self._stage + (f": {self._detail}" if self._detail else "")
        if self.bar is not None:
            self.bar.set_postfix_str(text, refresh=False)
        elif self.plain:
            now = time.monotonic()
            if now - self._start < self.delay:
                return
            if force or now - self._last_line >= self.interval:
                self._last_line = now
                print(
                    f"{self.desc}: [{self.done}/{self.total}] {text}", file=sys.stderr, flush=True
                )

    def stage(
        self, text: str, expected: dict[str, float] | None = None, after: float = 0.0
    ) -> None:
        """A new stage; ``expected``: its parts' estimated seconds (``"ICA"``, ``"search"``,
        ``"rest"``, in that order; or one ``"stage"``), ``after``: the seconds of the
        stages still to come."""
        self._stage, self._detail = text, ""
        self._step_start.clear()
        self._step_end = self._stage_start = time.monotonic()
        self._expected, self._after = expected, after
        if expected is not None:
            self._detail = self._eta_text(None, 0, 0).lstrip(", ")
        self._show(force=True)

    def _left(self, step: str | None, done: int, total: int) -> float | None:
        """Seconds left in the whole run, or None when the stage ran past its estimate."""
        now = time.monotonic()
        exp = self._expected or {}
        spent = now - self._stage_start
        if "stage" in exp or not exp:
            left = exp.get("stage", 0.0) - spent
            return left + self._after if left > 0 or not exp else None
        if step == "ICA" and 0 < done:
            ica = (now - self._step_start.get(step, self._step_end)) / done * (total - done)
            return ica + exp.get("search", 0.0) + exp.get("rest", 0.0) + self._after
        if step is not None and step.startswith("search"):
            start = self._step_start.get("_search", now)
            left = exp.get("search", 0.0) - (now - start)
            return left + exp.get("rest", 0.0) + self._after if left > 0 else None
        left = sum(exp.values()) - spent
        return left + self._after if left > 0 else None

    def _eta_text(self, step: str | None, done: int, total: int) -> str:
        if self._expected is None:  # the step's own count, where it measures the work
            if step in ("ICA", "search") and 0 < done < total:
                start = self._step_start.get(step, self._step_end)
                elapsed = time.monotonic() - start
                return f", ETA {_clock(elapsed / done * (total - done))}"
            return ""
        left = self._left(step, done, total)
        if left is None:
            return ", ETA unknown (longer than estimated)"
        return f", ETA {_clock(left)}"

    def listener(self, step: str, done: int, total: int) -> None:
        """``(step, done, total)`` from the library: shown with the run's ETA."""
        now = time.monotonic()
        if step.startswith("search"):
            self._step_start.setdefault("_search", now)
        self._step_start.setdefault(step, self._step_end)
        done = min(done, total)
        eta = self._eta_text(step, done, total)
        what = f"domain {done}/{total}" if step == "ICA" else f"{done}/{total}"
        self._detail = f"{step} {what}{eta}"
        if done >= total:
            self._step_start.pop(step, None)
            self._step_end = now
        self._show(force=done >= total and self.plain and step == "ICA")

    def advance(self, n: int = 1) -> None:
        self.done += n
        if self.bar is not None:
            self.bar.update(n)

    def close(self) -> None:
        self._stop.set()
        if self.bar is not None:
            self._thread.join()
            self.bar.close()
            self.bar = None

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
