"""Files a Ray worker sends back land in the run directory, and nowhere else."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.errors import InfraError
from assay.exec._remote import _write_files


def test_worker_files_are_written_under_the_run_directory(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    _write_files(run_dir, {"memory/c1-i0.db": b"db", "levels/x.json": b"{}"}, ["work/index.bin"])
    assert (run_dir / "memory" / "c1-i0.db").read_bytes() == b"db"
    assert (run_dir / "levels" / "x.json").read_bytes() == b"{}"
    assert "1 file(s) over 64 MiB stayed on the Ray worker: work/index.bin" in capsys.readouterr().err


@pytest.mark.parametrize("rel", ["../outside.txt", "a/../../outside.txt", "/etc/outside.txt"])
def test_a_path_out_of_the_run_directory_is_refused(tmp_path: Path, rel: str) -> None:
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    with pytest.raises(InfraError, match="outside the run directory"):
        _write_files(run_dir, {rel: b"x"}, [])
    assert not (tmp_path / "outside.txt").exists()
