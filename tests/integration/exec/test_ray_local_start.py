"""`--executor ray` with no address and no Ray instance running starts one on loopback, says so, stops it."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from assay.cli._main import cli
from assay.errors import InfraError
from assay.exec._ray import connect


@pytest.fixture
def no_ray_running(monkeypatch: pytest.MonkeyPatch):
    """No RAY_ADDRESS, no `ray start` recorded (a private Ray temp dir), and, on a machine other test runs
    share, none of their instances found by Ray's search for running GCS processes."""
    import ray

    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    temp = tempfile.mkdtemp(prefix="ar")  # short: Ray's socket paths live under it
    monkeypatch.setenv("RAY_TMPDIR", temp)

    def none_found() -> list[str]:
        return []

    none_found.cache_clear = lambda: None  # type: ignore[attr-defined]  # Ray clears its cached search
    monkeypatch.setattr(ray._private.services, "find_gcs_addresses", none_found)
    assert not ray.is_initialized()
    yield ray
    shutil.rmtree(temp, ignore_errors=True)


@pytest.mark.slow
def test_eval_memory_on_ray_without_an_address_starts_a_local_instance(
    no_ray_running, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ray = no_ray_running
    seen: dict[str, object] = {}
    shutdown = ray.shutdown

    def observed_shutdown(*args, **kwargs):  # what the instance was, just before the run stops it
        seen["nodes"] = [n["NodeManagerAddress"] for n in ray.nodes()]
        seen["gcs"] = ray.get_runtime_context().gcs_address
        return shutdown(*args, **kwargs)

    monkeypatch.setattr(ray, "shutdown", observed_shutdown)
    monkeypatch.setenv("ASSAY_NO_LOCK", "1")
    res = CliRunner().invoke(
        cli, ["eval", "memory", "--executor", "ray", "--out", str(tmp_path / "run")], catch_exceptions=False
    )
    assert res.exit_code == 0, res.output
    assert "no Ray instance is running, so this run started a local one on 127.0.0.1" in res.stderr
    assert "stopped the local Ray instance this run started" in res.stderr
    assert seen["nodes"] == ["127.0.0.1"] and str(seen["gcs"]).startswith("127.0.0.1:")
    assert not ray.is_initialized()
    assert (tmp_path / "run" / "scorecard.json").is_file()


def test_a_named_cluster_that_is_not_there_is_an_outage_not_a_local_start(
    no_ray_running, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(
        "RAY_ADDRESS", "127.0.0.1:9"
    )  # the user named a cluster: never replaced by a local one
    with pytest.raises(InfraError, match="cannot reach the Ray head at auto"):
        connect("auto")
    assert not no_ray_running.is_initialized()
