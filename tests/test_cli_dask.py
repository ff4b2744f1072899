"""The seed and bootstrap sweeps on a local Dask cluster through joblib's dask backend give
exactly the numbers of joblib's default backend (issue 28)."""

from __future__ import annotations

import joblib
import pandas as pd
import pytest

from hca import HCA
from hca.stability import bootstrap_stability, seed_stability
from hca.synthetic import simulate_scm

distributed = pytest.importorskip("dask.distributed")


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                       dashboard_address=None)
    client = distributed.Client(cluster)
    yield client
    client.close()
    cluster.close()


@pytest.fixture(scope="module")
def sim():
    return simulate_scm(n_domains=4, n_per_domain=150, n_benchmarks=5, random_state=7)


def _numbers(result) -> pd.DataFrame:
    return result.records.drop(columns=["alignment"])


def test_seed_sweep_on_dask_equals_the_default_backend(client, sim):
    local = seed_stability(HCA(), sim.X, sim.domains, seeds=range(4))
    with distributed.get_task_stream(client) as tasks, joblib.parallel_backend("dask"):
        remote = seed_stability(HCA(), sim.X, sim.domains, seeds=range(4))
    pd.testing.assert_frame_equal(_numbers(remote), _numbers(local), check_exact=True)
    assert list(remote.records["alignment"]) == list(local.records["alignment"])
    assert len(tasks.data) >= 1  # the refits ran as tasks of the cluster


def test_bootstrap_sweep_on_dask_equals_the_default_backend(client, sim):
    local = bootstrap_stability(HCA(), sim.X, sim.domains, n_boot=4, random_state=3)
    with joblib.parallel_backend("dask"):
        remote = bootstrap_stability(HCA(), sim.X, sim.domains, n_boot=4, random_state=3)
    pd.testing.assert_frame_equal(_numbers(remote), _numbers(local), check_exact=True)


def test_cli_seeds_on_dask(client, sim, tmp_path, capsys):
    """``hca fit --seeds`` inside a dask backend: the same report as without."""
    import json

    from hca.cli import main

    df = pd.DataFrame(sim.X, columns=list(sim.feature_names))
    df.insert(0, "base", sim.domains)
    csv = tmp_path / "b.csv"
    df.to_csv(csv, index=False)
    args = ["fit", str(csv), "--domain-col", "base", "--benchmarks",
            ",".join(sim.feature_names), "--seeds", "3", "--null-draws", "0", "--json"]
    assert main(args + [str(tmp_path / "local.json")]) == 0
    with joblib.parallel_backend("dask"):
        assert main(args + [str(tmp_path / "dask.json")]) == 0
    capsys.readouterr()
    local, remote = (json.loads((tmp_path / f"{n}.json").read_text())["stability"]
                     for n in ("local", "dask"))
    assert remote == local
