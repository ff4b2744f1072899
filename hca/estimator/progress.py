"""Progress of long fits: ICA per domain and the levels of the search, for a callback.

The functions that run the long steps take a keyword argument ``progress``, a
:data:`Listener` ``progress(stage, done, total)`` or ``None`` (nothing is reported), and pass
it on explicitly; :func:`report` is the one call that reports a step. The callback runs in the
caller's process (joblib workers never call it), and nothing is held in module-level state.
"""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["Listener", "report"]

#: A progress callback: ``progress(stage, done, total)``.
Listener = Callable[[str, int, int], None]


def report(progress: Listener | None, stage: str, done: int, total: int) -> None:
    """Report that ``done`` of ``total`` steps of ``stage`` are finished to ``progress``
    (nothing when ``progress`` is None)."""
    if progress is not None:
        progress(stage, int(done), int(total))
