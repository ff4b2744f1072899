"""Tests for hca.validation: the shared input checks and their messages."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.exceptions import NotFittedError

from hca import validation as v
from hca.estimator import HCA, domain_ica, mic_by_subset
from hca.synthetic import simulate_scm


@pytest.fixture(scope="module")
def small():
    sim = simulate_scm(n_domains=3, n_per_domain=20, random_state=4)
    X = pd.DataFrame(sim.X, columns=list(sim.feature_names), index=[f"m{i}" for i in range(60)])
    return X, np.asarray(sim.domains, dtype=object)


# --------------------------------------------------------------------------- check_matrix
def test_check_matrix_converts_and_names_the_fault():
    X = pd.DataFrame({"a": [1, 2, 3], "b": [0.5, 1.5, 2.5]}, index=["r0", "r1", "r2"])
    arr = v.check_matrix(X)
    assert arr.dtype == np.float64 and arr.shape == (3, 2)
    np.testing.assert_array_equal(v.check_matrix([[1, 2], [3, 4]]), [[1.0, 2.0], [3.0, 4.0]])
    bad = X.assign(b=[0.5, np.nan, 2.5])
    with pytest.raises(ValueError, match=r"X contains NaN or infinite values in column\(s\) "
                                         r"\['b'\], rows \['r1'\]"):
        v.check_matrix(bad)
    with pytest.raises(ValueError, match=r"column\(s\) \['x1'\], rows \[1\]"):
        v.check_matrix(bad.to_numpy())
    with pytest.raises(TypeError, match=r"non-numeric column\(s\) \['c'\]"):
        v.check_matrix(X.assign(c=["x", "y", "z"]))
    with pytest.raises(ValueError, match="must be 2-D"):
        v.check_matrix(np.ones(3))
    with pytest.raises(ValueError, match="is empty"):
        v.check_matrix(np.ones((0, 3)))
    with pytest.raises(TypeError, match="must be a numeric array"):
        v.check_matrix([["a", "b"]])


def test_check_matrix_allow_nan_still_rejects_infinity():
    X = np.array([[1.0, np.nan], [2.0, 3.0]])
    np.testing.assert_array_equal(np.isnan(v.check_matrix(X, allow_nan=True)),
                                  [[False, True], [False, False]])
    X[1, 0] = np.inf
    with pytest.raises(ValueError, match=r"infinite values in column\(s\) \['x0'\], rows \[1\]; "
                                         "only NaN marks a missing entry"):
        v.check_matrix(X, allow_nan=True)


def test_check_matrix_columns_and_names():
    X = pd.DataFrame({"b": [1.0, 2.0], "a": [3.0, 4.0], "c": [5.0, 6.0]})
    np.testing.assert_array_equal(v.check_matrix(X, columns=["a", "b"]), [[3, 1], [4, 2]])
    with pytest.raises(ValueError, match=r"missing the fitted benchmark column\(s\) \['d'\]"):
        v.check_matrix(X, columns=["a", "d"])
    with pytest.raises(ValueError, match="has 3 columns but 2 benchmark columns are expected"):
        v.check_matrix(X.to_numpy(), columns=["a", "b"])
    with pytest.raises(TypeError, match="must be a DataFrame whose columns name"):
        v.check_matrix(X.to_numpy(), require_names=True)


def test_duplicated_column_name_raises_naming_it(small):
    X, dom = small
    dup = X.rename(columns={"b2": "b1"})
    with pytest.raises(ValueError, match=r"duplicated column name\(s\) \['b1'\]"):
        v.check_matrix(dup)
    with pytest.raises(ValueError, match=r"duplicated column name\(s\) \['b1'\]"):
        HCA().fit(dup, dom)


# --------------------------------------------------------------------------- vectors
def test_check_vector_and_binary():
    np.testing.assert_array_equal(v.check_vector([1, 2.5], "x"), [1.0, 2.5])
    t = v.check_vector(np.array([True, False, True]), "t", binary=True)
    assert t.dtype.kind == "i" and t.tolist() == [1, 0, 1]
    with pytest.raises(ValueError, match=r"t must be binary .* found values \[2.0\]"):
        v.check_vector([0, 1, 2], "t", binary=True)
    with pytest.raises(ValueError, match=r"y contains 1 NaN/inf value\(s\) \(first at position 1\)"):
        v.check_vector([1.0, np.nan], "y")
    with pytest.raises(ValueError, match="one-dimensional"):
        v.check_vector(np.ones((2, 2)), "x")
    with pytest.raises(TypeError, match="x must be numeric"):
        v.check_vector(["a"], "x")
    with pytest.raises(ValueError, match="same length"):
        v.check_same_length(x=np.ones(3), y=np.ones(2))


# --------------------------------------------------------------------------- domains
def test_check_domains_orders_and_counts():
    X = np.zeros((6, 2))
    dom = v.check_domains(["b", "a", "b", "c", "b", "a"], X)
    assert dom.order == ["a", "b", "c"] and dom.sizes() == {"a": 2, "b": 3, "c": 1}
    assert v.check_domains(["b", "a", "b", "c", "b", "a"], X, by="size").order == ["b", "a", "c"]
    with_missing = ["b", None, "b", "c", "b", np.nan]
    assert v.check_domains(with_missing, X, order=["c", "b"]).order == ["c", "b"]
    with pytest.raises(ValueError, match="domains contains 2 missing labels"):
        v.check_domains(with_missing, X)
    with pytest.raises(ValueError, match=r"order domain\(s\) \['z'\] not found in domains"):
        v.check_domains(with_missing, X, order=["b", "z"])
    with pytest.raises(ValueError, match=r"candidate domain\(s\) \['b'\] listed more than once"):
        v.check_domains(with_missing, X, order=["b", "b"], order_name="candidate")
    with pytest.raises(ValueError, match="X has 6 rows but domains has 5 labels"):
        v.check_domains(["a"] * 5, X)
    with pytest.raises(ValueError, match=r"need at least 2 domains, found 1 \(\['a'\]\)"):
        v.check_domains(["a"] * 6, X, min_domains=2)


def test_domains_series_must_carry_the_index_of_X(small):
    X, dom = small
    ok = pd.Series(dom, index=X.index)
    assert v.check_domains(ok, X).order == ["D1", "D2", "D3"]
    shifted = pd.Series(dom, index=[f"n{i}" for i in range(60)])
    with pytest.raises(ValueError, match=r"index does not match X's index: X's row label\(s\) "
                                         r"\['m0', 'm1', 'm10', 'm11', 'm12'\]"):
        HCA().fit(X, shifted)
    reordered = ok.iloc[::-1]
    with pytest.raises(ValueError, match="X's row labels in another order .* reindex it like X"):
        HCA().fit(X, reordered)
    # by position when X is an array, or when the labels are not a Series
    HCA().fit(X.to_numpy(), shifted)
    HCA().fit(X, shifted.to_numpy())


def test_domain_needs_more_models_than_benchmarks(small):
    X, dom = small
    keep = np.r_[0:40, 40:46]  # D3 keeps 6 models for 6 benchmarks
    msg = (r"domain 'D3' has 6 models but at least 6 \(the number of benchmarks\) plus one "
           r"are needed")
    with pytest.raises(ValueError, match=msg):
        HCA().fit(X.iloc[keep], dom[keep])
    HCA().fit(X.iloc[:47], dom[:47])  # seven models for six benchmarks: fine


def test_benchmark_constant_within_one_domain_raises(small):
    X, dom = small
    flat = X.copy()
    flat.loc[dom == "D2", "b4"] = 50.0
    with pytest.raises(ValueError, match="benchmark 'b4' is constant within domain 'D2' "
                                         r"\(50 for all 20 models\)"):
        HCA().fit(flat, dom)
    with pytest.raises(ValueError, match="constant within domain 'D2'"):
        domain_ica(flat, dom)
    with pytest.raises(ValueError, match="constant within domain 'D2'"):
        mic_by_subset(HCA(), flat, dom, min_size=2)
    flat["b4"] = 50.0  # constant everywhere: the column is named first
    with pytest.raises(ValueError, match=r"X has constant column\(s\) \['b4'\]"):
        HCA().fit(flat, dom)


def test_top_groups():
    assert v.top_groups(["x", "y", "y", None, "z"], 2) == ["y", "x"]  # ties: first seen
    with pytest.raises(ValueError, match="n must be a positive int"):
        v.top_groups(["x"], 0)


# --------------------------------------------------------------------------- scalars, frames
def test_scalar_checks():
    assert v.check_n_components(3, 6) == 3
    with pytest.raises(ValueError, match=r"n_components \(7\) must be between 1 and the number "
                                         r"of benchmarks \(6\)"):
        v.check_n_components(7, 6)
    with pytest.raises(ValueError, match=r"n_components \(6\) must be between 0 and 5"):
        v.check_n_components(6, 6, minimum=0, maximum=5)
    with pytest.raises(TypeError, match="n_components must be an int"):
        v.check_n_components(2.0, 6)
    assert v.check_positive_int(np.int64(4), "n_boot") == 4
    for bad in (0, True, 1.5):
        with pytest.raises(ValueError, match="n_boot must be a positive int"):
            v.check_positive_int(bad, "n_boot")
    assert v.check_fraction(0.9, "ci") == 0.9
    with pytest.raises(ValueError, match=r"ci must be in \(0, 1\), got 1"):
        v.check_fraction(1, "ci")


def test_check_frame_and_labels():
    frame = pd.DataFrame({"a": [1], "b": [2]})
    assert v.check_frame(frame, ["a"]) is frame
    with pytest.raises(ValueError, match=r"f: frame lacks column\(s\) \['c'\]: 1 missing column"):
        v.check_frame(frame, ["a", "c"], context="f")
    with pytest.raises(TypeError, match="frame must be a pandas DataFrame, got list"):
        v.check_frame([1], ["a"])
    assert v.check_labels([1, 2], 2, "row_labels") == ["1", "2"]
    with pytest.raises(ValueError, match="row_labels has 1 labels for 2 entries"):
        v.check_labels(["a"], 2, "row_labels")


def test_labels_of_and_show_labels():
    rows, cols = v.labels_of(np.zeros((2, 3)))
    assert rows == [0, 1] and cols == ["x0", "x1", "x2"]
    assert v.show_labels(list("abcdefghijkl"), range(12)) == (
        "['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j'] and 2 more")


# --------------------------------------------------------------------------- fitted
def test_hca_not_fitted_is_sklearn_not_fitted_error():
    with pytest.raises(NotFittedError, match="This HCA instance is not fitted yet"):
        HCA().transform(np.zeros((2, 6)))
    with pytest.raises(NotFittedError):
        HCA().adjust()
    assert issubclass(NotFittedError, ValueError)
    assert v.NotFittedError is NotFittedError
