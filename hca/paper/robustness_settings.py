"""The settings of the robustness page: one way of running the analysis per perturbation.

:class:`Setting` and the functions that build the perturbed settings; :func:`paper_settings`
lists them all, in the order of the table of :mod:`hca.paper.robustness`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import pandas as pd

from hca.data.registry import V2_BENCHMARKS
from hca.estimator.ica import check_ica
from hca.estimator.model import HCA
from hca.paper.constants import AUTHORS_V2_LABELS
from hca.validation import check_frame

__all__ = [
    "RAW_SUFFIX",
    "Setting",
    "search_for",
    "default_setting",
    "final_table_setting",
    "raw_scores_setting",
    "ica_setting",
    "components_setting",
    "without_merged_setting",
    "authors_domains_setting",
    "paper_settings",
]

_MAX_EXHAUSTIVE = 10_000
#: Suffix of the raw-accuracy score columns (``bbh_raw``: 0-1; ``bbh``: normalized, 0-100).
RAW_SUFFIX = "_raw"


def search_for(n_components: int, n_domains: int) -> str:
    """The search of the robustness fits: exhaustive up to 10,000 row orders ``(d0!)^K``,
    otherwise the certified sequential search (which then finds the exhaustive optimum)."""
    return (
        "exhaustive"
        if math.factorial(n_components) ** n_domains <= _MAX_EXHAUSTIVE
        else "sequential"
    )


@dataclass(frozen=True, eq=False)
class Setting:
    """One way of running the analysis.

    Attributes
    ----------
    name : str
        Row label of the table (e.g. ``"raw scores"``).
    group : str
        The perturbation it belongs to (``"data"``, ``"scores"``, ``"ICA"``, ...).
    frame : DataFrame
        Leaderboard rows with a ``base_model`` column and the score columns.
    benchmarks : tuple of str
        Score columns.
    n_components : int
    ica : str
        One of :data:`ICA_METHODS`.
    subspace : bool
        Whether the perturbation can change S_inv (PCA-based, so not for the ICA algorithm
        or its seed); when False the default's S_inv is reported.
    """

    name: str
    group: str
    frame: pd.DataFrame = field(repr=False)
    benchmarks: tuple = tuple(V2_BENCHMARKS)
    n_components: int = 3
    ica: str = "fastica"
    subspace: bool = True

    def __post_init__(self) -> None:
        check_ica(self.ica)
        check_frame(self.frame, ["base_model", *self.benchmarks])

    def estimator(self, n_domains: int, random_state: int = 0) -> HCA:
        """The :class:`~hca.estimator.HCA` of this setting for ``n_domains`` domains: its
        ``n_components`` and ``ica``, the search of :func:`search_for`, ICA seed
        ``random_state``."""
        return HCA(
            self.n_components,
            ica=self.ica,
            search=search_for(self.n_components, n_domains),
            random_state=random_state,
        )


def default_setting(frame: pd.DataFrame, benchmarks: Sequence[str] = V2_BENCHMARKS) -> Setting:
    """The default analysis: the CSV's normalized scores, FastICA, three components."""
    return Setting("default", "default", frame, tuple(benchmarks))


def final_table_setting(
    final_frame: pd.DataFrame, benchmarks: Sequence[str] = V2_BENCHMARKS
) -> Setting:
    """The CSV plus the models only in the final 4,576-model table (the paper's snapshot)."""
    return Setting("CSV + final table", "data", final_frame, tuple(benchmarks))


def raw_scores_setting(frame: pd.DataFrame, benchmarks: Sequence[str] = V2_BENCHMARKS) -> Setting:
    """Raw accuracies (``*_raw``, 0-1) instead of the normalized scores (0-100)."""
    return Setting("raw scores", "scores", frame, tuple(f"{b}{RAW_SUFFIX}" for b in benchmarks))


def ica_setting(
    frame: pd.DataFrame, ica: str, benchmarks: Sequence[str] = V2_BENCHMARKS
) -> Setting:
    """Another ICA algorithm (``"picard-o"`` or ``"picard"``); S_inv is unaffected."""
    name = {"fastica": "FastICA", "picard-o": "Picard-O", "picard": "Picard"}[check_ica(ica)]
    return Setting(name, "ICA", frame, tuple(benchmarks), ica=ica, subspace=False)


def components_setting(
    frame: pd.DataFrame, n_components: int, benchmarks: Sequence[str] = V2_BENCHMARKS
) -> Setting:
    """``n_components`` latent factors (and rank-``n_components`` subspaces for S_inv)."""
    return Setting(
        f"{n_components} components",
        "components",
        frame,
        tuple(benchmarks),
        n_components=int(n_components),
    )


def without_merged_setting(
    frame: pd.DataFrame, benchmarks: Sequence[str] = V2_BENCHMARKS
) -> Setting:
    """Without merged models (``merged`` flag or ``type == "merge"``)."""
    check_frame(frame, ["merged", "type"])
    merged = frame["merged"].fillna(False).astype(bool) | (frame["type"] == "merge").fillna(False)
    return Setting(
        "without merges", "merged models", frame.loc[~merged.to_numpy()], tuple(benchmarks)
    )


def authors_domains_setting(
    authors_frame: pd.DataFrame, benchmarks: Sequence[str] = V2_BENCHMARKS
) -> Setting:
    """Domains by the authors' looser base-model rule instead of this book's attribution.

    ``authors_frame`` has an ``authors_label`` column (e.g.
    :func:`hca.attribution.v2_frame_authors`); its ``base_model`` is rebuilt from it for all
    eight candidates (:data:`AUTHORS_V2_LABELS`).
    """
    check_frame(authors_frame, ["authors_label"])
    frame = authors_frame.copy()
    frame["base_model"] = frame["authors_label"].map(AUTHORS_V2_LABELS).astype("string")
    return Setting("authors' domain rule", "domains", frame, tuple(benchmarks))


def paper_settings(
    frame: pd.DataFrame,
    final_frame: pd.DataFrame | None = None,
    authors_frame: pd.DataFrame | None = None,
) -> list[Setting]:
    """The default and every single perturbation of the robustness page, in table order.

    ``final_frame`` adds the final-table setting, ``authors_frame`` the authors' domains.
    """
    out = [default_setting(frame)]
    if final_frame is not None:
        out.append(final_table_setting(final_frame))
    if authors_frame is not None:
        out.append(authors_domains_setting(authors_frame))
    out += [
        raw_scores_setting(frame),
        ica_setting(frame, "picard-o"),
        ica_setting(frame, "picard"),
        components_setting(frame, 2),
        components_setting(frame, 4),
        without_merged_setting(frame),
    ]
    return out
