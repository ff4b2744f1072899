"""The HCA estimator (scikit-learn style) and the MIC-by-subset sweep (Figure 18)."""

from __future__ import annotations

import itertools
import warnings
from collections.abc import Hashable, Mapping, Sequence
from numbers import Integral, Real
from typing import Any

import numpy as np
import pandas as pd
from joblib import Parallel, delayed, effective_n_jobs
from sklearn.base import BaseEstimator, TransformerMixin, clone

from hca.estimator.ica import ICA_METHODS, DomainICA, fit_icas, fit_icas_many
from hca.estimator.progress import Listener
from hca.estimator.results import DomainSCM, OLSAdjustment, ols_adjustment
from hca.estimator.search import (
    RESIDUALS,
    SEARCHES,
    TINY,
    HCASearchResult,
    check_search_size,
    hca_search,
    hca_search_batch,
)
from hca.validation import (
    FitData,
    InputError,
    Interval,
    StrOptions,
    check_domains,
    check_fit_data,
    check_is_fitted,
    check_matrix,
)

__all__ = [
    "EXPECTED_FAILED_CHECKS",
    "HCA",
    "clone_hca",
    "ica_options",
    "fit_each_from_ica",
    "fit_many_from_ica",
    "mic_by_subset",
    "mic_by_subset_many",
    "search_many",
]


# =========================================================================== estimator
#: scikit-learn's common checks (``check_estimator``) that cannot apply to HCA, with the
#: reason: pass it as ``expected_failed_checks`` (scikit-learn 1.6+ removed the xfail tag).
#: Every other check passes with ``HCA(n_components=1)`` (the checks' data have 1-2 columns).
EXPECTED_FAILED_CHECKS: dict[str, str] = {
    "check_fit_score_takes_y": "fit's second argument is `domains` (the domain of every "
    "row), not a target `y`",
    "check_transformer_general": "fit_transform takes `domains`, not the keyword `y`",
    "check_requires_y_none": "the message for missing domains names `domains`, not `y`",
    "check_fit2d_1sample": "one row is one domain: the message says that HCA needs at least "
    "2 domains, not scikit-learn's '1 sample' wording",
    "check_fit2d_predict1d": "hca.validation's message for 1-D input differs from "
    "scikit-learn's 'Reshape your data'",
    "check_estimators_empty_data_messages": "hca.validation's message for 0 columns differs "
    "from scikit-learn's wording",
    "check_complex_data": "hca.validation refuses complex data with a TypeError naming it "
    "(scikit-learn expects a ValueError)",
    "check_transformer_data_not_an_array": "the domains must be matched to the rows, so X must "
    "have a length (an array or DataFrame)",
}


class HCA(TransformerMixin, BaseEstimator):
    """Hierarchical Component Analysis (Appendix C of Jin et al., 2025).

    Parameters
    ----------
    n_components : int, default=3
        Number of latent factors ``d0``.
    ica : {"fastica", "picard-o", "picard"}, default="fastica"
        ICA algorithm of step 1 (see :func:`hca.estimator.domain_ica`): scikit-learn's
        ``FastICA`` (the paper's), or Picard-O / Picard from ``python-picard``.
    search : {"exhaustive", "sequential"}, default="exhaustive"
        Search over row orders (see the module docstring).
    residual : {"domain", "shared"}, default="domain"
        Row-residual definition: the domain's own earlier rows (Algorithm 1) or the
        recovered rows of ``H_hat`` (authors' code).
    beam_width : int, default=32
        Initial beam width of ``search="sequential"`` (doubled until certified).
    max_nodes : int, default=1_000_000
        Budget of evaluated prefixes for ``search="sequential"`` (see
        :func:`hca.estimator.hca_search`).
    random_state : int, RandomState or None, default=0
        Seed of every ICA run.
    max_iter : int, default=1000
        ICA iterations.
    tol : float, optional
        ICA tolerance; default the algorithm's (FastICA 1e-4, Picard 1e-7).
    n_restarts : int, default=1
        ICA runs per domain; the converged run with the largest negentropy is kept
        (see :func:`domain_ica`). The default, one run, is the authors' setting.
    n_jobs : int, optional
        Domains whose ICA runs in parallel (:class:`joblib.Parallel`; ``None``: one after
        another); every domain gets the same seed, so the fit does not depend on ``n_jobs``.

    Every parameter is checked in :meth:`fit` against :attr:`_parameter_constraints` by
    scikit-learn's own validation, before any work.

    Attributes
    ----------
    domains_ : list
        Sorted domain labels.
    n_features_in_ : int
        Number of benchmarks.
    feature_names_in_ : ndarray of str
        Benchmark names (only when ``X`` was a DataFrame).
    ica_ : dict
        Domain -> :class:`DomainICA`.
    ica_converged_ : dict
        Domain -> whether ICA converged.
    n_iter_ : int
        Largest number of ICA iterations over the domains.
    unmixing_ : ndarray of shape (n_components, n_benchmarks)
        ``H_hat`` (orthonormal rows), ``z = H_hat x``.
    mixing_ : ndarray of shape (n_benchmarks, n_components)
        ``G_hat = pinv(H_hat) = H_hat^T``.
    weights_ : dict
        Domain -> ``B_hat_k`` of the recovered SCM: the least-squares lower-triangular
        fit with each row rescaled so that the sources ``B_hat_k H_hat (x - mean_k)``
        have unit variance (ddof=0) in the domain; positive diagonal. (For an exact SCM
        the rescaling is 1; the unscaled fit is ``search_result_.weights``.)
    models_ : dict
        Domain -> :class:`DomainSCM` built from ``weights_``.
    mic_ : float
        Maximum inexactness coefficient.
    inexactness_ : dict
        Domain -> ``alpha_k``.
    permutations_ : dict
        Domain -> tuple, the ICA source placed at every causal position.
    rank1_error_ : ndarray of shape (n_components,)
        Table 3a.
    unmixing_error_ : dict
        Domain -> Table 3b error.
    certified_ : bool
        Whether the search proved the order optimal (always with ``"exhaustive"``; see
        ``search_result_`` for the nodes evaluated).
    search_result_ : HCASearchResult
        Full output of the search.
    """

    #: scikit-learn's parameter constraints, checked by :meth:`fit` (``_validate_params``).
    _parameter_constraints: dict = {
        "n_components": [Interval(Integral, 1, None, closed="left")],
        "ica": [StrOptions(set(ICA_METHODS))],
        "search": [StrOptions(set(SEARCHES))],
        "residual": [StrOptions(set(RESIDUALS))],
        "beam_width": [Interval(Integral, 1, None, closed="left")],
        "max_nodes": [Interval(Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        # finite: the interval's open right end refuses inf, and NaN is in no interval
        "tol": [Interval(Real, 0, None, closed="left"), None],
        "n_restarts": [Interval(Integral, 1, None, closed="left")],
        "n_jobs": [
            Interval(Integral, None, -1, closed="right"),
            Interval(Integral, 1, None, closed="left"),
            None,
        ],
    }

    def __init__(
        self,
        n_components: int = 3,
        *,
        ica: str = "fastica",
        search: str = "exhaustive",
        residual: str = "domain",
        beam_width: int = 32,
        max_nodes: int = 1_000_000,
        random_state: Any = 0,
        max_iter: int = 1000,
        tol: float | None = None,
        n_restarts: int = 1,
        n_jobs: int | None = None,
    ):
        self.n_components = n_components
        self.ica = ica
        self.search = search
        self.residual = residual
        self.beam_width = beam_width
        self.max_nodes = max_nodes
        self.random_state = random_state
        self.max_iter = max_iter
        self.tol = tol
        self.n_restarts = n_restarts
        self.n_jobs = n_jobs

    # ----------------------------------------------------------------- fitting
    def fit(self, X: Any, domains: Any, *, progress: Listener | None = None) -> HCA:
        """Fit HCA.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_models, n_benchmarks)
            Benchmark scores (DataFrame column names are kept).
        domains : array-like or Series of shape (n_models,)
            Domain (e.g. base model) of every row; at least two domains, each with more
            models than benchmarks and no benchmark constant within it. A Series must carry
            ``X``'s index when ``X`` is a DataFrame.
        progress : callable, optional
            ``progress(stage, done, total)``, called after every domain's ICA (stage
            ``"ICA"``) and every step of the search (:mod:`hca.estimator.progress`); an
            argument of the fit, not a parameter of the estimator. None: nothing reported.

        Returns
        -------
        self
        """
        data = self._check_params_and_data(X, domains)
        self._set_data(data, stacklevel=3)  # before any ICA: refuses too large searches
        self._set_icas(self._fit_icas(data.values, data.labels, data.order, progress))
        return self._fit_search(progress)

    def fit_from_ica(self, X: Any, domains: Any, icas: Mapping[Hashable, DomainICA]) -> HCA:
        """Fit HCA from per-domain ICA results computed elsewhere (steps 2-3 only).

        ``HCA(random_state=s).fit(X, domains)`` equals
        ``HCA(random_state=s).fit_from_ica(X, domains, icas)`` with the ICA of that fit;
        :func:`fit_many_from_ica` fits many estimators with one batched search.

        Parameters
        ----------
        X, domains
            As in :meth:`fit`.
        icas : mapping
            Domain -> :class:`~hca.estimator.ica.DomainICA` for every domain of ``domains``
            (unmixing of shape ``(n_components, n_benchmarks)``).

        Returns
        -------
        self
        """
        data = self._check_params_and_data(X, domains)
        checked = _checked_icas(icas, data)  # before anything is set
        self._set_data(data, stacklevel=3)
        self._set_icas(checked)
        return self._fit_search()

    def _check_params_and_data(self, X: Any, domains: Any):
        self._validate_params()
        return check_fit_data(X, domains, self.n_components)

    def _fit_icas(
        self,
        values: np.ndarray,
        labels: np.ndarray,
        order: Sequence,
        progress: Listener | None = None,
    ) -> dict:
        return fit_icas(
            values,
            labels,
            order,
            int(self.n_components),
            random_state=self.random_state,
            n_jobs=self.n_jobs,
            progress=progress,
            **ica_options(self),
        )

    def _set_data(self, data: FitData, stacklevel: int) -> None:
        order, d = data.order, data.n_components
        check_search_size(self.search, len(order), d)
        if len(order) < d:
            warnings.warn(
                f"{len(order)} domains for {d} components: Theorem 1 needs at least as many "
                "domains as components for identifiability",
                UserWarning,
                stacklevel=stacklevel,
            )
        self.n_features_in_ = data.values.shape[1]
        if data.has_names:
            self.feature_names_in_ = np.array(data.feature_names, dtype=object)
        elif hasattr(self, "feature_names_in_"):  # refit on an array
            del self.feature_names_in_
        self._benchmarks = data.feature_names
        self.domains_ = order
        self._X_train = np.array(data.values, dtype=float, copy=True)
        self._labels_train = data.labels

    def _set_icas(self, icas: Mapping[Hashable, DomainICA]) -> None:
        self.ica_ = {label: icas[label] for label in self.domains_}
        self.ica_converged_ = {label: ica.converged for label, ica in self.ica_.items()}
        self.n_iter_ = max(int(ica.n_iter) for ica in self.ica_.values())

    def search_options(self) -> dict[str, Any]:
        """The search settings (keywords of :func:`hca.estimator.search.hca_search`)."""
        return {
            "search": self.search,
            "residual": self.residual,
            "beam_width": self.beam_width,
            "max_nodes": self.max_nodes,
        }

    def _unmixings(self) -> dict[Hashable, np.ndarray]:
        return {label: self.ica_[label].unmixing for label in self.domains_}

    def _fit_search(self, progress: Listener | None = None) -> HCA:
        """Steps 2-3: the search on the fitted ICA matrices, then the per-domain models."""
        res = hca_search(self._unmixings(), **self.search_options(), progress=progress)
        return self._set_search(res)

    def _set_search(self, res: HCASearchResult) -> HCA:
        order = self.domains_
        self.search_result_ = res
        self.certified_ = res.certified
        self.unmixing_ = res.unmixing
        self.mixing_ = np.linalg.pinv(res.unmixing)
        self.mic_ = res.mic
        self.inexactness_ = dict(zip(order, res.alphas.tolist()))
        self.permutations_ = {
            label: tuple(int(r) for r in perm) for label, perm in zip(order, res.permutations)
        }
        self.rank1_error_ = res.rank1_error
        self.unmixing_error_ = dict(zip(order, res.unmixing_error.tolist()))
        self.weights_ = {}
        self.models_ = {}
        for k, label in enumerate(order):
            B = self._unit_variance(res.weights[k], label)
            self.weights_[label] = B
            self.models_[label] = DomainSCM.from_B(label, B, res.alphas[k])
        return self

    def _unit_variance(self, B: np.ndarray, label: Hashable) -> np.ndarray:
        """Rescale the rows of ``B`` so that ``B H_hat (x - mean)`` has unit variance."""
        Xk = self._X_train[self._labels_train == label] - self.ica_[label].mean
        std = np.std(Xk @ (B @ self.unmixing_).T, axis=0)
        return B / np.maximum(std, TINY)[:, None]

    def _check_fitted(self) -> None:
        check_is_fitted(self, "unmixing_")

    # ----------------------------------------------------------------- transform
    def _as_input(self, X: Any) -> np.ndarray:
        if isinstance(X, pd.DataFrame) and hasattr(self, "feature_names_in_"):
            return check_matrix(X, columns=list(self.feature_names_in_))
        n_columns = np.shape(X)[1] if np.ndim(X) == 2 else None
        if n_columns is not None and n_columns != self.n_features_in_:
            raise ValueError(
                f"X has {n_columns} features, but HCA is expecting "
                f"{self.n_features_in_} features as input (the fitted benchmarks)"
            )
        if isinstance(X, pd.DataFrame):  # fitted without names: by position, as scikit-learn
            warnings.warn(
                "X has feature names, but HCA was fitted without feature names",
                UserWarning,
                stacklevel=3,
            )
            return check_matrix(X.to_numpy())
        return check_matrix(X, columns=self._benchmarks)

    def transform(self, X: Any) -> np.ndarray:
        """Latent factors ``Z = X H_hat^T`` (``z = H_hat x`` as in the paper; *not* centred).

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_models, n_benchmarks)

        Returns
        -------
        ndarray of shape (n_models, n_components)
        """
        self._check_fitted()
        return self._as_input(X) @ self.unmixing_.T

    def fit_transform(self, X: Any, domains: Any) -> np.ndarray:
        """Fit, then return the latent factors of ``X``."""
        return self.fit(X, domains).transform(X)

    def get_feature_names_out(self, input_features: Any = None) -> np.ndarray:
        """Names of the factors :meth:`transform` returns: ``z1, ..., z{n_components}``.

        ``input_features`` follows scikit-learn's convention: the fitted benchmarks for a model
        fitted on a DataFrame, else any names of the right number.
        """
        self._check_fitted()
        if input_features is None:
            pass
        elif hasattr(self, "feature_names_in_"):
            if list(input_features) != list(self.feature_names_in_):
                raise InputError(
                    f"input_features {list(input_features)} are not the fitted "
                    f"benchmarks {list(self.feature_names_in_)}"
                )
        elif len(input_features) != self.n_features_in_:
            raise InputError(
                f"input_features has {len(input_features)} names but HCA was fitted on "
                f"{self.n_features_in_} benchmarks"
            )
        return np.array([f"z{i + 1}" for i in range(len(self.unmixing_))], dtype=object)

    def __sklearn_tags__(self) -> Any:
        """scikit-learn tags: ``fit`` needs the domains as its second argument (``y``)."""
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True  # the domains
        tags.input_tags.allow_nan = False
        tags.non_deterministic = False
        return tags

    # ----------------------------------------------------------------- adjustment
    def adjust(self, X: Any = None) -> OLSAdjustment:
        """OLS ambiguity adjustment of Section 4.

        For ``i = 1..d0`` the OLS ``z_i ~ z_1..z_{i-1} + x_B + const`` is fitted on the pooled
        data for every benchmark ``B``; the one with the largest R^2 is chosen and ``z_i`` is
        replaced by ``z_i - sum_{j<i} a_ij z_j``. The composed map is a unit lower-triangular
        ``L``: the adjusted unmixing matrix is ``L H_hat`` and ``B_k`` becomes ``B_k L^{-1}``.

        Parameters
        ----------
        X : array-like or DataFrame, optional
            Scores to fit the OLS on; default the pooled training data.

        Returns
        -------
        OLSAdjustment
        """
        self._check_fitted()
        values = self._X_train if X is None else self._as_input(X)
        L, coefs, chosen, r2 = ols_adjustment(values @ self.unmixing_.T, values, self._benchmarks)
        L_inv = np.linalg.inv(L)
        weights = {label: np.tril(B @ L_inv) for label, B in self.weights_.items()}
        models = {
            label: DomainSCM.from_B(label, B, self.inexactness_[label])
            for label, B in weights.items()
        }
        return OLSAdjustment(
            L=L,
            coefficients=coefs,
            unmixing=L @ self.unmixing_,
            mixing=self.mixing_ @ L_inv,
            benchmarks=tuple(self._benchmarks[b] for b in chosen),
            r2=r2,
            weights=weights,
            models=models,
        )

    def alignment(self, unmixing: Any = None) -> tuple[str, ...]:
        """The benchmark the OLS adjustment (:meth:`adjust`) picks for every factor, on the
        training data; ``unmixing`` replaces the fitted ``H_hat`` (e.g. another row order's)."""
        self._check_fitted()
        H = self.unmixing_ if unmixing is None else np.asarray(unmixing, dtype=float)
        values = self._X_train
        _, _, chosen, _ = ols_adjustment(values @ H.T, values, self._benchmarks)
        return tuple(self._benchmarks[c] for c in chosen)

    def reconstruction_error(self, X: Any = None, *, centre: bool = False) -> pd.DataFrame:
        """Low-rank approximation error per benchmark (Figure 19 of Appendix H.2).

        The scores are projected on the ``n_components``-dimensional row space of
        ``H_hat``: ``x_hat = H_hat^T H_hat x`` (``z = H_hat x`` as in the paper, not centred).

        Parameters
        ----------
        X : array-like or DataFrame, optional
            Scores; default the pooled training data.
        centre : bool, default=False
            Subtract each training domain's mean first (only with ``X=None``), which
            measures the error of the within-domain variation alone.

        Returns
        -------
        DataFrame
            One row per benchmark: ``relative_error`` (``sum (x - x_hat)^2 / sum x^2``),
            ``mse`` and ``rmse`` (score units).
        """
        self._check_fitted()
        if centre and X is not None:
            raise ValueError("centre=True uses the training domains' means; pass X=None")
        values = self._X_train.copy() if X is None else self._as_input(X)
        if centre:
            for label, ica in self.ica_.items():
                values[self._labels_train == label] -= ica.mean
        residual = values - values @ self.unmixing_.T @ self.unmixing_
        sq = np.sum(residual**2, axis=0)
        return pd.DataFrame(
            {
                "relative_error": sq / np.maximum(np.sum(values**2, axis=0), TINY),
                "mse": sq / len(values),
                "rmse": np.sqrt(sq / len(values)),
            },
            index=pd.Index(self._benchmarks, name="benchmark"),
        )

    # ----------------------------------------------------------------- reporting
    def summary(self) -> str:
        """MIC, Table 3 diagnostics and the per-domain structural equations."""
        self._check_fitted()
        lines = [self.search_result_.summary()]
        lines += [m.summary() for m in self.models_.values()]
        return "\n".join(lines)


# =========================================================================== many fits
def _checked_icas(icas: Any, data: FitData) -> dict[Hashable, DomainICA]:
    """``icas`` checked to hold one DomainICA of the right shape per domain of ``data``."""
    if not isinstance(icas, Mapping):
        raise TypeError(f"icas must be a mapping domain -> DomainICA, got {type(icas).__name__}")
    missing = [label for label in data.order if label not in icas]
    extra = [label for label in icas if label not in set(data.order)]
    if missing or extra:
        raise ValueError(
            f"icas must hold exactly the domains {list(data.order)}; missing {missing}, "
            f"not in the data {extra}"
        )
    shape = (data.n_components, data.values.shape[1])
    for label in data.order:
        ica = icas[label]
        if not isinstance(ica, DomainICA):
            raise TypeError(f"icas[{label!r}] must be a DomainICA, got {type(ica).__name__}")
        if np.shape(ica.unmixing) != shape or np.shape(ica.mean) != shape[1:]:
            raise ValueError(
                f"icas[{label!r}]: unmixing of shape {np.shape(ica.unmixing)} and mean of shape "
                f"{np.shape(ica.mean)}, expected {shape} and {shape[1:]}"
            )
    return {label: icas[label] for label in data.order}


def fit_many_from_ica(
    estimators: Sequence[HCA],
    X: Any,
    domains: Any,
    icas: Sequence[Mapping[Hashable, DomainICA]],
    *,
    progress: Listener | None = None,
) -> tuple[HCA, ...]:
    """Fit every estimator on the same data from its own per-domain ICA, searches batched.

    ``fit_many_from_ica(estimators, X, domains, icas)[i]`` is ``estimators[i]`` fitted as by
    ``estimators[i].fit_from_ica(X, domains, icas[i])``; the searches of all estimators with
    the same search settings run in one :func:`hca.estimator.search.hca_search_batch`.

    Parameters
    ----------
    estimators : sequence of HCA
        Distinct instances (each is fitted in place and returned).
    X, domains
        As in :meth:`HCA.fit`.
    icas : sequence of mapping
        One ``{domain: DomainICA}`` per estimator.
    progress : callable, optional
        ``progress(stage, done, total)`` after every step of the searches (as in
        :meth:`HCA.fit`); None (default): nothing is reported.

    Returns
    -------
    tuple of HCA
        The fitted estimators, in order.
    """
    ests = list(estimators)
    return _fit_from_icas(ests, [(X, domains)] * len(ests), icas, progress)


def fit_each_from_ica(
    estimators: Sequence[HCA],
    datasets: Sequence[tuple[Any, Any]],
    icas: Sequence[Mapping[Hashable, DomainICA]],
    *,
    progress: Listener | None = None,
) -> tuple[HCA, ...]:
    """:func:`fit_many_from_ica` with data of its own for every estimator: ``estimators[i]``
    is fitted on ``datasets[i] = (X, domains)`` from ``icas[i]``."""
    return _fit_from_icas(estimators, datasets, icas, progress)


def _fit_from_icas(
    estimators: Sequence[HCA],
    datasets: Sequence[tuple[Any, Any]],
    icas: Sequence[Mapping[Hashable, DomainICA]],
    progress: Listener | None,
) -> tuple[HCA, ...]:
    ests = list(estimators)
    icas = list(icas)
    datasets = list(datasets)
    for e in ests:
        if not isinstance(e, HCA):
            raise TypeError(f"estimators must be HCA instances, got {type(e).__name__}")
    if len(ests) != len(icas) or len(ests) != len(datasets):
        raise ValueError(
            f"{len(ests)} estimators, {len(datasets)} data sets and {len(icas)} ICA results"
        )
    if len({id(e) for e in ests}) != len(ests):
        raise ValueError("estimators must be distinct instances (each is fitted in place)")
    validated: dict[Any, FitData] = {}
    checked: list[tuple[FitData, dict[Hashable, DomainICA]]] = []
    groups: dict[tuple, list[int]] = {}
    for e, (X, domains), ica in zip(ests, datasets, icas):
        seen = (id(X), id(domains), e.n_components)  # validated once per data set and d
        if seen not in validated:
            validated[seen] = e._check_params_and_data(X, domains)
        data = validated[seen]
        e._validate_params()  # every estimator's parameters, by scikit-learn's validation
        check_search_size(e.search, len(data.order), data.n_components)
        checked.append((data, _checked_icas(ica, data)))
    for i, (e, (data, ica)) in enumerate(zip(ests, checked)):  # every input checked: now fit
        e._set_data(data, stacklevel=4)
        e._set_icas(ica)
        groups.setdefault(tuple(sorted(e.search_options().items())), []).append(i)
    for key, members in groups.items():
        problems = [ests[i]._unmixings() for i in members]
        results = hca_search_batch(problems, **dict(key), progress=progress)
        for i, res in zip(members, results):
            ests[i]._set_search(res)
    return tuple(ests)


# =========================================================================== sweeps
def clone_hca(estimator: Any, **params: Any) -> HCA:
    """An unfitted copy of an :class:`HCA` (:func:`sklearn.base.clone`) with ``params`` set."""
    if not isinstance(estimator, HCA):
        raise TypeError(
            f"estimator must be an HCA instance (e.g. HCA(n_components=3)), got "
            f"{type(estimator).__name__}"
        )
    return clone(estimator).set_params(**params)


def ica_options(estimator: HCA) -> dict[str, Any]:
    """The per-domain ICA settings of ``estimator`` (``ica``, ``max_iter``, ``tol``,
    ``n_restarts``) as keyword arguments of :func:`hca.estimator.ica.fit_icas_many`."""
    return {
        "ica": estimator.ica,
        "max_iter": estimator.max_iter,
        "tol": estimator.tol,
        "n_restarts": estimator.n_restarts,
    }


def mic_by_subset(
    estimator: HCA,
    X: Any,
    domains: Any,
    candidates: Sequence[Hashable] | None = None,
    min_size: int = 3,
    *,
    align: Sequence[Sequence[Hashable]] = (),
    n_jobs: int | None = None,
) -> pd.DataFrame:
    """MIC of HCA on every subset of the candidate domains (Figure 18).

    ICA is fitted once per candidate domain and reused by every subset; the searches of all
    subsets run as one batch.

    Parameters
    ----------
    estimator : HCA
        Settings of the fits (cloned; ``HCA()`` is the paper's).
    X, domains
        As in :meth:`HCA.fit`.
    candidates : sequence, optional
        Domains to combine (default: all, sorted).
    min_size : int, default=3
        Smallest subset size (at least 2).
    align : sequence of subsets, optional
        Subsets whose fit is also read as the paper reads a fit: column ``alignment`` (added
        only with ``align``) holds the benchmark the OLS adjustment picks for every factor
        (on the subset's rows), ``None`` for the other subsets.
    n_jobs : int, optional
        The batch of searches is split into one chunk per job of :class:`joblib.Parallel`;
        the result does not depend on ``n_jobs``.

    Returns
    -------
    DataFrame
        One row per subset (by size, then in the order of ``candidates``), with columns
        ``subset`` (tuple of labels), ``size``, ``mic``, ``certified`` and one column
        ``alpha_<label>`` per candidate (NaN when the domain is not in the subset), and
        ``alignment`` with ``align``.

    Raises
    ------
    ValueError
        If a subset in ``align`` is not one of the swept subsets.
    """
    est = clone_hca(estimator)
    data = est._check_params_and_data(X, domains)
    cands = check_domains(data.labels, data.values, order=candidates, order_name="candidate").order
    subsets, targets = _checked_subsets(est, cands, min_size, align)
    icas = est._fit_icas(data.values, data.labels, cands)
    return _subset_tables(est, [(data, icas)], cands, subsets, targets, n_jobs)[0]


def mic_by_subset_many(
    estimator: HCA,
    datasets: Sequence[tuple[Any, Any]],
    seeds: Sequence[int],
    candidates: Sequence[Hashable] | None = None,
    min_size: int = 3,
    *,
    align: Sequence[Sequence[Hashable]] = (),
    n_jobs: int | None = None,
    icas: Sequence[Sequence[Mapping[Hashable, DomainICA]]] | None = None,
) -> list[list[pd.DataFrame]]:
    """:func:`mic_by_subset` of every data set of ``datasets`` under every FastICA seed of
    ``seeds``, as one batch of ICA runs and one batch of searches.

    Parameters
    ----------
    estimator : HCA
        Settings of the fits (cloned; its ``random_state`` is replaced by each seed).
    datasets : sequence of (X, domains)
        Data sets (for example bootstrap resamples), each as in :meth:`HCA.fit`, each
        holding every candidate domain.
    seeds : sequence of int
        FastICA seeds; every data set is fitted with each.
    candidates, min_size, align, n_jobs
        As in :func:`mic_by_subset`.
    icas : sequence of sequence of mapping, optional
        ``icas[g][i]``: the per-domain ICA (``{domain: DomainICA}``, holding every candidate)
        of data set ``g`` under ``seeds[i]``, computed before with the estimator's settings
        (:func:`hca.stability.domain_icas`); None: computed here.

    Returns
    -------
    list of list of DataFrame
        ``tables[g][i]`` equals ``mic_by_subset(clone_hca(estimator, random_state=seeds[i]),
        *datasets[g], candidates, min_size, align=align)``.
    """
    est = clone_hca(estimator)
    seeds = [int(s) for s in seeds]
    checked = [est._check_params_and_data(X, domains) for X, domains in datasets]
    if not checked:
        return []
    cands_of = [
        check_domains(d.labels, d.values, order=candidates, order_name="candidate").order
        for d in checked
    ]
    cands = cands_of[0]
    if any(list(c) != list(cands) for c in cands_of):
        raise ValueError("mic_by_subset_many: the data sets hold different candidate domains")
    subsets, targets = _checked_subsets(est, cands, min_size, align)
    if icas is None:
        icas = fit_icas_many(
            [(d.values, d.labels) for d in checked],
            cands,
            int(est.n_components),
            seeds,
            **ica_options(est),
        )
    elif len(icas) != len(checked) or any(len(per_seed) != len(seeds) for per_seed in icas):
        raise ValueError("icas must hold one ICA fit per data set and seed")
    elif any(not set(cands) <= set(fits) for per_seed in icas for fits in per_seed):
        raise ValueError("icas: an ICA fit lacks a candidate domain")
    fits = [(data, ica) for data, per_seed in zip(checked, icas) for ica in per_seed]
    flat = _subset_tables(est, fits, cands, subsets, targets, n_jobs)
    k = len(seeds)
    return [flat[g * k : (g + 1) * k] for g in range(len(checked))]


def _checked_subsets(est: HCA, cands: Sequence[Hashable], min_size: int, align) -> tuple:
    """The subsets of :func:`mic_by_subset` and the targets of ``align`` among them."""
    if not isinstance(min_size, (int, np.integer)) or not 2 <= min_size <= len(cands):
        raise ValueError(
            f"min_size must be between 2 and the number of candidates ({len(cands)}), "
            f"got {min_size}"
        )
    check_search_size(est.search, len(cands), int(est.n_components))  # before any ICA
    subsets = [
        s for size in range(min_size, len(cands) + 1) for s in itertools.combinations(cands, size)
    ]
    return subsets, _align_targets(align, subsets)


def _subset_tables(
    est: HCA,
    fits: Sequence[tuple[FitData, Mapping[Hashable, DomainICA]]],
    cands: Sequence[Hashable],
    subsets: Sequence[tuple],
    targets: set,
    n_jobs: int | None,
) -> list[pd.DataFrame]:
    """The table of :func:`mic_by_subset` of every fit, all searches in one batch."""
    problems = [{c: icas[c].unmixing for c in subset} for _, icas in fits for subset in subsets]
    results = search_many(problems, est.search_options(), n_jobs)
    tables = []
    for f, (data, _) in enumerate(fits):
        records = [
            _subset_record(
                res,
                subset,
                cands,
                (data.values[np.isin(data.labels, subset)], list(data.feature_names))
                if frozenset(subset) in targets
                else None,
            )
            for subset, res in zip(subsets, results[f * len(subsets) : (f + 1) * len(subsets)])
        ]
        table = pd.DataFrame.from_records(records)
        if not targets:
            table = table.drop(columns="alignment")
        tables.append(table)
    return tables


def search_many(
    problems: Sequence[Mapping[Hashable, np.ndarray]],
    options: Mapping[str, Any],
    n_jobs: int | None = None,
) -> list[HCASearchResult]:
    """:func:`hca.estimator.search.hca_search_batch` of ``problems`` with the search
    ``options``, split into one batch per joblib job (the same results)."""
    jobs = min(effective_n_jobs(n_jobs), len(problems))
    if jobs <= 1:
        return hca_search_batch(problems, **options)
    bounds = np.linspace(0, len(problems), jobs + 1).round().astype(int)
    parts = Parallel(n_jobs=n_jobs)(
        delayed(hca_search_batch)(problems[lo:hi], **options)
        for lo, hi in zip(bounds[:-1], bounds[1:])
    )
    return [res for part in parts for res in part]


def _align_targets(align: Sequence[Sequence[Hashable]], subsets: Sequence[tuple]) -> set:
    """The subsets of ``align`` as frozensets, each checked to be swept."""
    swept = {frozenset(s) for s in subsets}
    targets = {frozenset(s) for s in align}
    unknown = [sorted(map(str, t)) for t in targets if t not in swept]
    if unknown:
        raise ValueError(
            f"align: subset(s) {unknown} are not swept (subsets of the candidates "
            "of at least min_size domains)"
        )
    return targets


def _subset_record(
    res: HCASearchResult, subset: tuple, candidates: Sequence, rows: tuple | None = None
) -> dict:
    """One row of :func:`mic_by_subset`; ``rows`` (the subset's scores and the benchmark
    names) to read the fit's alignment."""
    row = {"subset": subset, "size": len(subset), "mic": res.mic, "certified": res.certified}
    alphas = dict(zip(subset, res.alphas))
    row.update({f"alpha_{c}": alphas.get(c, np.nan) for c in candidates})
    row["alignment"] = None
    if rows is not None:
        values, names = rows
        _, _, chosen, _ = ols_adjustment(values @ res.unmixing.T, values, names)
        row["alignment"] = tuple(names[c] for c in chosen)
    return row
