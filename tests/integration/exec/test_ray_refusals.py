"""`--executor ray` refused with one line before anything runs (no Ray head is needed to refuse)."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.cli._main import main


def _refused(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    return err[0]


@pytest.mark.parametrize(
    ("benchmark", "why"),
    [("benchmark", "it times one model server from this machine"), ("sessions", "own session transcripts")],
)
def test_benchmark_that_cannot_run_remotely_is_refused(
    benchmark: str, why: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    results = tmp_path / "results"
    line = _refused(["eval", benchmark, "--executor", "ray", "--results-dir", str(results)], capsys)
    assert line.startswith(f"error: --executor ray: the {benchmark} benchmark cannot run on Ray workers: ")
    assert why in line and line.endswith("run it with --executor local")
    assert not results.exists()  # nothing ran, no run directory


def test_env_var_chooses_ray_and_resume_is_refused_too(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ASSAY_PLUGINS", "ray_subjects:LiveStateBenchmark")
    monkeypatch.setenv("ASSAY_NO_LOCK", "1")
    run_dir = tmp_path / "run"
    with pytest.raises(SystemExit) as info:  # the local executor runs it
        main(["eval", "raylive", "--cases", "2", "--out", str(run_dir)])
    assert info.value.code == 0
    journal = (run_dir / "results.jsonl").read_text()
    capsys.readouterr()
    monkeypatch.setenv("ASSAY_EXECUTOR", "ray")
    line = _refused(["eval", "raylive", "--resume", str(run_dir)], capsys)
    assert (
        "the raylive benchmark cannot run on Ray workers: its subject is an object living in this process"
        in line
    )
    assert (run_dir / "results.jsonl").read_text() == journal


def test_ray_address_without_ray_or_malformed_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = ["--results-dir", str(tmp_path / "r")]
    line = _refused(["eval", "memory", "--ray-address", "auto", *out], capsys)
    assert line == "error: --ray-address names the cluster of --executor ray; add --executor ray or drop it"
    line = _refused(["eval", "memory", "--executor", "ray", "--ray-address", "head node:x", *out], capsys)
    assert "--ray-address 'head node:x' (or ASSAY_RAY_ADDRESS): expected auto, local" in line
    assert not (tmp_path / "r").exists()
