"""Shared fixtures. Tests never touch the network: real-data tests read the pinned files
from ``$HCA_DATA_DIR`` (default: ``../shared/data`` beside the checkout) or the cache."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
_shared = REPO.parent / "shared" / "data"
if not os.environ.get("HCA_DATA_DIR") and _shared.is_dir():
    os.environ["HCA_DATA_DIR"] = str(_shared)


@pytest.fixture(scope="session")
def v2():
    """The de-duplicated v2 leaderboard."""
    from hca.data import load_leaderboard_v2

    return load_leaderboard_v2()


@pytest.fixture(scope="session")
def v1():
    """The de-duplicated v1 leaderboard."""
    from hca.data import load_leaderboard_v1

    return load_leaderboard_v1()


@pytest.fixture(scope="session")
def mmlu():
    """The MMLU-by-task leaderboard."""
    from hca.data import load_mmlu_by_task

    return load_mmlu_by_task()
