"""The data layer: registry, verified fetching (against a local HTTP server) and loaders."""

from __future__ import annotations

import hashlib
import http.server
import threading
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from hca import data as D

PAYLOAD = b"model,score\na,1\nb,2\n" * 200




class _LocalSpec(D.DataFile):
    @property
    def url(self) -> str:  # served from 127.0.0.1
        return f"{self._base}/{self.path}"


class _Handler(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):  # keep test output clean
        pass

    def do_GET(self):
        if self.path == "/good":
            self._send(200, PAYLOAD)
        elif self.path == "/wrong":
            self._send(200, PAYLOAD.replace(b"2", b"3"))
        elif self.path == "/error":
            self._send(500, b"server error")
        elif self.path == "/truncated":
            self.send_response(200)
            self.send_header("Content-Length", str(len(PAYLOAD)))
            self.end_headers()
            self.wfile.write(PAYLOAD[: len(PAYLOAD) // 3])
            self.wfile.flush()
            self.close_connection = True
        else:
            self._send(404, b"not found")

    def _send(self, code: int, body: bytes) -> None:
        self.send_response(code)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture(scope="module")
def server():
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()


def _local(server: str, path: str) -> D.DataFile:
    spec = _LocalSpec("test.csv", "x/y", "0" * 40, path,
                      hashlib.sha256(PAYLOAD).hexdigest(), len(PAYLOAD), "test")
    object.__setattr__(spec, "_base", server)
    return spec


@pytest.fixture
def no_data_dir(monkeypatch):
    monkeypatch.delenv("HCA_DATA_DIR", raising=False)


def test_download_success_is_verified_and_cached(server, tmp_path, no_data_dir):
    path = D.fetch_file(_local(server, "good"), cache_dir=tmp_path)
    assert path == tmp_path / "test.csv"
    assert path.read_bytes() == PAYLOAD
    # second call uses the cache: the server path no longer matters
    again = D.fetch_file(_local(server, "missing"), cache_dir=tmp_path)
    assert again == path


@pytest.mark.parametrize("route, error", [
    ("wrong", D.DataIntegrityError),
    ("error", D.DataDownloadError),
    ("missing", D.DataDownloadError),
])
def test_failed_download_leaves_nothing(server, tmp_path, no_data_dir, route, error):
    with pytest.raises(error, match="test.csv"):
        D.fetch_file(_local(server, route), cache_dir=tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_truncated_body_is_refused(server, tmp_path, no_data_dir):
    with pytest.raises((D.DataDownloadError, D.DataIntegrityError), match="test.csv"):
        D.fetch_file(_local(server, "truncated"), cache_dir=tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_hash_mismatch_message_names_file_and_hashes(server, tmp_path, no_data_dir):
    spec = _local(server, "wrong")
    with pytest.raises(D.DataIntegrityError) as info:
        D.fetch_file(spec, cache_dir=tmp_path)
    assert spec.sha256 in str(info.value)


def test_corrupted_file_in_data_dir_is_refused(tmp_path, monkeypatch):
    spec = D.REGISTRY["obsscaling_base_models.csv"]
    (tmp_path / spec.name).write_bytes(b"not the real file")
    monkeypatch.setenv("HCA_DATA_DIR", str(tmp_path))
    with pytest.raises(D.DataIntegrityError) as info:
        D.fetch_file(spec, cache_dir=tmp_path / "cache", download=False)
    msg = str(info.value)
    assert spec.name in msg and spec.sha256 in msg and D.sha256sum(tmp_path / spec.name) in msg
    assert "HCA_DATA_DIR" in msg


def test_corrupted_cache_file_is_refused(tmp_path, no_data_dir):
    spec = D.REGISTRY["obsscaling_base_models.csv"]
    (tmp_path / spec.name).write_bytes(b"garbage")
    with pytest.raises(D.DataIntegrityError, match="cache"):
        D.fetch_file(spec, cache_dir=tmp_path, download=False)


def test_missing_file_without_download(tmp_path, no_data_dir):
    with pytest.raises(FileNotFoundError, match="HCA_DATA_DIR"):
        D.fetch("sloth_base_models.csv", cache_dir=tmp_path, download=False)


def test_unknown_name():
    with pytest.raises(KeyError, match="known files"):
        D.fetch("nope.csv")


def test_registry_matches_provenance():
    prov = Path(__file__).resolve().parents[2] / "shared" / "data" / "PROVENANCE.md"
    if not prov.is_file():
        pytest.skip("PROVENANCE.md not beside the checkout")
    text = prov.read_text()
    assert len(D.REGISTRY) == 7
    for spec in D.REGISTRY.values():
        row = next(line for line in text.splitlines() if line.startswith(f"| {spec.name} "))
        assert spec.sha256 in row and spec.commit in row and spec.path in row
        assert str(spec.size) in row


def test_registered_files_verify():
    for name, spec in D.REGISTRY.items():
        path = D.fetch(name, download=False)
        assert path.stat().st_size == spec.size


# ------------------------------------------------------------------ loaders


def test_v2_loader(v2):
    raw_rows = 3913
    assert 3800 < len(v2) < raw_rows  # 76 duplicate listings removed
    assert v2["model_id"].str.lower().is_unique
    assert set(D.V2_BENCHMARKS) <= set(v2.columns)
    for b in D.V2_BENCHMARKS:
        assert v2[b].dtype == np.float64
        assert v2[b].between(0, 100).all(), b
        assert v2[f"{b}_raw"].between(0, 1).all(), b
    assert set(v2["type"].dropna()) <= {"pretrained", "continuously_pretrained", "fine-tuned",
                                        "chat", "merge", "multimodal", "other"}
    assert pd.api.types.is_datetime64_any_dtype(v2["submission_date"])
    assert v2["params_b"].dtype == np.float64
    assert not v2["model_id"].str.contains("<").any()
    assert (v2["base_model_hub"] == "Removed").sum() == 0
    # model ids keep their original case (the CSV's fullname is lower-cased)
    assert (v2["model_id"] != v2["model_id"].str.lower()).mean() > 0.5


def test_v2_dedupe_rule_prefers_bfloat16():
    full = D.load_leaderboard_v2(dedupe=False)
    assert len(full) == 3913
    dup = full[full["model_id"].str.lower().duplicated(keep=False)]
    kept = D.load_leaderboard_v2().set_index(D.load_leaderboard_v2()["model_id"].str.lower())
    for key, grp in dup.groupby(dup["model_id"].str.lower()):
        if set(grp["precision"]) == {"bfloat16", "float16"}:
            assert kept.loc[key, "precision"] == "bfloat16"


def test_v2_with_final_table(v2):
    both = D.load_leaderboard_v2(include_final=True)
    extra = both[both["source"] == "final_html"]
    assert 600 < len(extra) < 700
    assert both["model_id"].str.lower().is_unique
    assert extra[list(D.V2_BENCHMARKS)].notna().all().all()
    assert extra["architecture"].isna().all()


def test_final_html_table():
    final = D.load_leaderboard_v2_final_html()
    assert len(final) == 4576
    assert final["rank"].tolist()[:3] == [1, 2, 3]
    assert final["model_id"].iloc[0] == "MaziyarPanahi/calme-3.2-instruct-78b"


def test_v1_loader(v1):
    assert 6700 < len(v1) < 7169
    assert v1["model_id"].str.lower().is_unique
    for b in D.V1_BENCHMARKS:
        assert v1[b].between(0, 100).all(), b
    assert v1["moe"].dtype == bool


def test_mmlu_loader(mmlu):
    assert len(mmlu) > 5000
    assert len(D.MMLU_SUBJECTS) == 57
    cols = [f"mmlu_{s}" for s in D.MMLU_SUBJECTS]
    vals = mmlu[cols].to_numpy()
    assert np.nanmin(vals) >= 0 and np.nanmax(vals) <= 1


def test_token_tables():
    life = D.load_lifearchitect()
    sloth = D.load_sloth_base_models()
    obs = D.load_obsscaling_base_models()
    assert {"model", "params_b", "tokens_b"} <= set(life.columns) and len(life) == 526
    assert {"model", "params_b", "tokens_t", "flops_1e21"} <= set(sloth.columns)
    assert {"model", "params_b", "tokens_t", "flops_1e21"} <= set(obs.columns)
    assert len(obs) == 148 and len(sloth) == 197


def test_provenance_table():
    table = D.provenance_table()
    assert len(table) == 7 and table["sha256"].str.len().eq(64).all()


def test_v2_with_a_parsed_final_table():
    final = D.load_leaderboard_v2_final_html()
    kept = final.copy()
    both = D.load_leaderboard_v2(include_final=True, final=final)
    pd.testing.assert_frame_equal(both, D.load_leaderboard_v2(include_final=True))
    pd.testing.assert_frame_equal(final, kept)  # the caller's table is not changed
    final.loc[0, "model_id"] = "changed"  # each call parses afresh: nothing is shared
    assert D.load_leaderboard_v2_final_html()["model_id"].iloc[0] != "changed"
    with pytest.raises(ValueError, match="final lacks column"):
        D.load_leaderboard_v2(include_final=True, final=final.drop(columns="rank"))


def test_cli_reports_a_failed_download_in_one_line(monkeypatch, capsys):
    """No network and no ``$HCA_DATA_DIR``: ``python -m hca data`` says so in one line (exit
    2), not as a bug in hca with a traceback."""
    import hca.data
    from hca.cli import main

    def offline(name, download=True):
        raise D.DataDownloadError(f"Could not download {name}: ConnectionError: no network. "
                                  "Without network access, set HCA_DATA_DIR")

    monkeypatch.setattr(hca.data, "fetch", offline)
    monkeypatch.delenv("HCA_DEBUG", raising=False)
    assert main(["data"]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1, err
    assert "HCA_DATA_DIR" in err and "bug" not in err and "Traceback" not in err
