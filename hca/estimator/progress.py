"""Progress of long fits: ICA per domain and the levels of the search, for a listener.

The library reports its progress through :func:`notify` (``stage``, steps done, steps in
all); nothing happens unless a caller listens (:func:`listen`, a context manager). The
command line uses it for its progress bar with an ETA. The listener is a
:class:`contextvars.ContextVar`, so it is seen by the code running in the same thread (and
by joblib's sequential backend), not by parallel workers.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Callable, Iterator

__all__ = ["listen", "notify"]

Listener = Callable[[str, int, int], None]
_LISTENER: contextvars.ContextVar[Listener | None] = contextvars.ContextVar(
    "hca_progress_listener", default=None
)


@contextlib.contextmanager
def listen(callback: Listener) -> Iterator[None]:
    """Call ``callback(stage, done, total)`` at every step reported inside the block."""
    token = _LISTENER.set(callback)
    try:
        yield
    finally:
        _LISTENER.reset(token)


def notify(stage: str, done: int, total: int) -> None:
    """Report that ``done`` of ``total`` steps of ``stage`` are finished (if anyone listens)."""
    callback = _LISTENER.get()
    if callback is not None:
        callback(stage, int(done), int(total))
