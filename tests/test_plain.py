"""Results as plain data (:mod:`hca.paper.plain`): the round trip is exact, and a file can
neither run code nor rebuild anything but hca's own dataclasses and estimators."""

from __future__ import annotations

import dataclasses
import pickle

import numpy as np
import pandas as pd
import pytest

from hca.estimator import HCA
from hca.paper import plain
from hca.synthetic import simulate_scm


def assert_same(a, b, where="value"):
    """``a`` and ``b`` are the same value: types, dtypes, bits (NaN equal), order, attrs."""
    assert type(a) is type(b), f"{where}: {type(a).__name__} vs {type(b).__name__}"
    if isinstance(a, pd.DataFrame):
        pd.testing.assert_frame_equal(a, b, check_exact=True, check_freq=True)
        assert list(a.dtypes) == list(b.dtypes) and a.attrs.keys() == b.attrs.keys(), where
        for i in range(a.shape[1]):
            if a.dtypes.iloc[i] == object:
                for x, y in zip(a.iloc[:, i], b.iloc[:, i]):
                    assert_same(x, y, f"{where}[{a.columns[i]!r}]")
        assert_same(a.attrs, b.attrs, f"{where}.attrs")
    elif isinstance(a, pd.Series):
        pd.testing.assert_series_equal(a, b, check_exact=True)
        assert_same(a.attrs, b.attrs, f"{where}.attrs")
    elif isinstance(a, pd.Index):
        pd.testing.assert_index_equal(a, b, exact=True)
    elif isinstance(a, np.ndarray):
        assert a.dtype == b.dtype and a.shape == b.shape, where
        if a.dtype == object:
            for x, y in zip(a.flat, b.flat):
                assert_same(x, y, where)
        else:
            assert np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"), where
    elif isinstance(a, np.generic):
        assert a.dtype == b.dtype and (a == b or (a != a and b != b)), where
    elif isinstance(a, float):
        assert a == b or (a != a and b != b), where
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b)):
            assert_same(x, y, f"{where}[{i}]")
    elif isinstance(a, dict):
        assert list(a) == list(b), where
        for k in a:
            assert_same(a[k], b[k], f"{where}[{k!r}]")
    elif isinstance(a, (set, frozenset)):
        assert a == b, where
    elif dataclasses.is_dataclass(a) or hasattr(a, "__dict__"):
        fa = (
            {f.name: getattr(a, f.name) for f in dataclasses.fields(a)}
            if dataclasses.is_dataclass(a) and not hasattr(a, "__dict__")
            else vars(a)
        )
        fb = (
            {f.name: getattr(b, f.name) for f in dataclasses.fields(b)}
            if dataclasses.is_dataclass(b) and not hasattr(b, "__dict__")
            else vars(b)
        )
        assert list(fa) == list(fb), where
        for k in fa:
            assert_same(fa[k], fb[k], f"{where}.{k}")
    else:
        assert a == b, where


def test_round_trip_of_values_and_frames():
    frame = pd.DataFrame(
        {
            "f": [1.5, np.nan, -0.0],
            "i": np.array([1, 2, 3], dtype=np.int64),
            "b": [True, False, True],
            "s": pd.array(["a", None, "c"], dtype="str"),
            "S": pd.array(["a", None, "c"], dtype="string"),
            "I": pd.array([1, None, 3], dtype="Int64"),
            "o": [("x", 1), None, [1, 2]],
            "t": pd.to_datetime(["2024-01-01", "2024-02-01", None]).as_unit("us"),
        },
        index=pd.Index(["r1", "r2", "r3"], name="row"),
    )
    frame.attrs["caption"] = "a table"
    multi = frame.set_index(["i", "b"])
    value = {
        ("a", 1): (np.float64(0.1), np.int64(3), np.bool_(True)),
        "frame": frame,
        "multi": multi,
        "series": frame["f"],
        "wide": pd.DataFrame([[1, 2]], columns=pd.MultiIndex.from_tuples([("a", "x"), ("a", "y")])),
        "tuples": pd.Index([("a", 1), ("b", 2)], tupleize_cols=False),
        "floats": [float("nan"), float("inf"), 1e-300, 0.1 + 0.2],
        "sets": (frozenset({"a", "b"}), {1, 2}),
        "arrays": (np.arange(6.0).reshape(2, 3), np.array([["a", None]], dtype=object)),
        "empty": pd.DataFrame(index=pd.RangeIndex(3)),
        "range": range(2, 9, 3),
    }
    assert_same(plain.loads(plain.dumps(value)), value)


def test_round_trip_of_a_fitted_hca():
    sim = simulate_scm(n_domains=3, n_per_domain=200, random_state=1)
    model = HCA(random_state=0).fit(sim.X, sim.domains)
    again = plain.loads(plain.dumps(model))
    assert_same(again, model)
    np.testing.assert_array_equal(again.transform(sim.X), model.transform(sim.X))


def test_what_is_not_plain_data_is_refused():
    with pytest.raises(plain.NotPlainError, match="function"):
        plain.dumps({"f": lambda x: x})
    import enum

    class Colour(str, enum.Enum):  # would read back as a plain str
        RED = "red"

    with pytest.raises(plain.NotPlainError, match="Colour"):
        plain.dumps([Colour.RED])
    with pytest.raises(plain.NotPlainError, match="category"):
        plain.dumps(pd.DataFrame({"c": pd.Categorical(["a", "b"])}))

    @dataclasses.dataclass
    class Outside:  # not a class of hca
        x: int = 1

    with pytest.raises(plain.NotPlainError, match="Outside"):
        plain.dumps(Outside())


class Planted:
    def __reduce__(self):
        return (exec, ("open('PLANTED', 'w').write('ran')",))


def test_a_planted_file_runs_nothing(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ValueError):  # a pickle is not an npz file
        plain.loads(pickle.dumps(Planted()))
    # an npz whose tree names a class outside hca, or an object array (a pickle inside)
    import io
    import json

    data = np.zeros(64, dtype=np.uint8)
    for root, layout in (
        ({"$": "object", "cls": "subprocess:Popen", "k": [], "v": []}, {}),
        ({"$": "object", "cls": "hca.paper.cache:cached", "k": [], "v": []}, {}),
        ({"$": "object", "cls": "hca.__main__:sys", "k": [], "v": []}, {}),
        ({"$": "object", "cls": "hca.estimator:HCA.__init__.__globals__", "k": [], "v": []}, {}),
        ({"$": "array", "a": "p"}, {}),  # the object array p is not one of the file's arrays
        ({"$": "array", "a": "a0"}, {"a0": ["O", [1], 0]}),  # object dtype
        ({"$": "array", "a": "a0"}, {"a0": ["i8,f8", [1], 0]}),  # structured dtype
        ({"$": "array", "a": "a0"}, {"a0": ["<f8", [9], 0]}),  # past the end of the data
        ({"$": "array", "a": "a0"}, {"a0": ["no such dtype", [1], 0]}),
        ({"$": "array", "a": "a0"}, {"a0": ["<f8", [-1], 0]}),  # a negative shape
        ({"$": "array", "a": "a0"}, {"a0": ["<f8", [1], -8]}),  # a negative offset
    ):
        tree = json.dumps({"arrays": layout, "root": root}).encode()
        buf = io.BytesIO()
        np.savez(buf, __tree__=np.frombuffer(tree, dtype=np.uint8), __data__=data,
                 p=np.array([Planted()], dtype=object))
        with pytest.raises(ValueError):
            plain.loads(buf.getvalue())
    buf = io.BytesIO()  # the former layout (one member per array): not a stored result
    np.savez(buf, __tree__=np.frombuffer(b'{"$": "array", "a": "a0"}', dtype=np.uint8),
             a0=np.arange(3.0))
    with pytest.raises(ValueError, match="no tree or no data"):
        plain.loads(buf.getvalue())
    assert not (tmp_path / "PLANTED").exists()


def test_shared_values_stay_shared_and_are_written_once():
    big = np.arange(100_000.0)
    frame = pd.DataFrame({"x": big})
    value = {"a": big, "b": (big, frame), "c": [frame]}
    data = plain.dumps(value)
    assert len(data) < 2 * big.nbytes + 10_000  # the array once, the frame's column once
    again = plain.loads(data)
    assert again["a"] is again["b"][0] and again["b"][1] is again["c"][0]
    assert_same(again, value)
    loop: dict = {}
    loop["self"] = loop
    with pytest.raises(plain.NotPlainError, match="contains itself"):
        plain.dumps(loop)
