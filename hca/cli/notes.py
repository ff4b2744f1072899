"""Python warnings as one-line notes, and a progress bar on stderr for long steps."""

from __future__ import annotations

import contextlib
import sys
import threading
import time
import warnings
from collections.abc import Iterator
from typing import Any

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


class Progress:
    """A progress bar on stderr (tqdm) shown only when the work lasts more than ``delay`` s.

    The bar counts steps (``advance``) and shows the current stage (``stage``); a
    background thread refreshes the elapsed time while a long step runs. ``enabled=None``
    shows it only when stderr is a terminal.
    """

    def __init__(self, total: int, enabled: bool | None = None, delay: float = 2.0,
                 desc: str = "hca fit") -> None:
        if enabled is None:
            enabled = sys.stderr.isatty()
        self.bar = None
        self._stop = threading.Event()
        if enabled:
            from tqdm import tqdm

            self.bar = tqdm(total=total, desc=desc, file=sys.stderr, delay=delay, leave=False,
                            unit="step", bar_format="{desc}: {n}/{total}{postfix} [{elapsed}]")
            self._delay = delay
            self._thread = threading.Thread(target=self._tick, daemon=True)
            self._thread.start()

    def _tick(self) -> None:
        while not self._stop.wait(0.5):
            bar = self.bar
            if bar is not None and time.time() >= bar.start_t + self._delay:
                bar.refresh()
                bar.last_print_t = time.time()  # so that close() clears the line

    def stage(self, text: str) -> None:
        if self.bar is not None:
            self.bar.set_postfix_str(text, refresh=False)

    def advance(self, n: int = 1) -> None:
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
