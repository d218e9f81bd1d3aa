"""Long library loops (code and document embedding, child processes) report progress and stop on Ctrl-C."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

from assay._util import Cancelled, _cancel, phase, reporting, run_process
from assay._util._progress import _mode
from assay.codeindex import build_index
from assay.embed import HashEmbedder
from assay.errors import ConfigError
from assay.rag._index import DocumentIndex


class SlowEmbedder(HashEmbedder):
    """The hashing embedder, 50 ms per batch; raises the cancel flag after ``cancel_after`` batches."""

    def __init__(self, cancel_after: int | None = None) -> None:
        super().__init__()
        self.batches = 0
        self.cancel_after = cancel_after

    def embed(self, texts: list[str]) -> list[list[float]]:
        time.sleep(0.05)
        self.batches += 1
        if self.cancel_after is not None and self.batches >= self.cancel_after:
            _cancel.request_cancel()
        return super().embed(texts)


@pytest.fixture(autouse=True)
def _plain(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASSAY_PROGRESS", "plain")
    monkeypatch.setenv("ASSAY_PROGRESS_INTERVAL", "0.05")
    _cancel._CANCEL.clear()
    yield
    _cancel._CANCEL.clear()


def _tree(root: Path, files: int = 40) -> Path:
    root.mkdir()
    for i in range(files):
        body = "\n\n".join(f"def f{i}_{j}(x):\n    return x + {j}\n" for j in range(4))
        (root / f"m{i}.py").write_text(body)
    return root


def test_code_index_build_prints_progress_lines_without_a_terminal(tmp_path, capsys):
    with reporting():
        _, stats = build_index(_tree(tmp_path / "proj"), embedder=SlowEmbedder(), index_dir=tmp_path / "idx")
    err = capsys.readouterr().err
    lines = [ln for ln in err.splitlines() if ln.startswith("progress: embedding code chunks of proj: ")]
    assert len(lines) >= 2, err
    assert lines[-1].startswith(
        f"progress: embedding code chunks of proj: {stats.chunks_embedded}/"
    ) and lines[-1].endswith(", done")


def test_code_index_build_stops_between_batches_on_ctrl_c(tmp_path):
    emb = SlowEmbedder(cancel_after=2)
    with pytest.raises(Cancelled):
        build_index(_tree(tmp_path / "proj"), embedder=emb, index_dir=tmp_path / "idx")
    assert emb.batches == 2  # stopped at the next batch, not after all of them
    assert not (tmp_path / "idx" / "metadata.json").exists()  # nothing half-saved


def test_document_index_stops_between_batches_on_ctrl_c(tmp_path, capsys):
    idx = DocumentIndex(SlowEmbedder(cancel_after=1), cache_dir=None)
    texts = [(f"d{i}", " ".join(f"word{i}x{j}" for j in range(300))) for i in range(40)]
    with reporting(), pytest.raises(Cancelled):
        idx.index_texts(texts)
    assert len(idx) == 0


def test_a_child_process_is_terminated_on_ctrl_c(tmp_path):
    marker = tmp_path / "pid"
    code = f"import os, pathlib, time; pathlib.Path({str(marker)!r}).write_text(str(os.getpid())); time.sleep(60)"

    def cancel_soon() -> None:
        while not marker.exists():
            time.sleep(0.02)
        _cancel.request_cancel()

    import threading

    threading.Thread(target=cancel_soon, daemon=True).start()
    t0 = time.monotonic()
    with pytest.raises(Cancelled, match="stopped"):
        run_process([sys.executable, "-c", code])
    assert time.monotonic() - t0 < 5
    pid = int(marker.read_text())
    assert not Path(f"/proc/{pid}").exists() or Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z"


def test_run_process_returns_output_like_subprocess_run():
    res = run_process(
        [sys.executable, "-c", "import sys; print('out'); print('err', file=sys.stderr); sys.exit(3)"]
    )
    assert (res.returncode, res.stdout, res.stderr) == (3, "out\n", "err\n")


def test_phases_cost_nothing_without_reporting(capsys):
    with phase("quiet", total=3) as ph:
        for _ in range(3):
            ph.advance()
    assert capsys.readouterr().err == ""


def test_mode_follows_the_terminal_and_the_env(monkeypatch):
    class Stream:
        def __init__(self, tty: bool) -> None:
            self.tty = tty

        def isatty(self) -> bool:
            return self.tty

    monkeypatch.setenv("ASSAY_PROGRESS", "auto")
    assert _mode(True, Stream(True)) == "bar" and _mode(True, Stream(False)) == "plain"
    assert _mode(False, Stream(True)) == "off"
    monkeypatch.setenv("ASSAY_PROGRESS", "off")
    assert _mode(True, Stream(True)) == "off"
    monkeypatch.setenv("ASSAY_PROGRESS", "fancy")
    with pytest.raises(ConfigError, match="ASSAY_PROGRESS must be one of auto, bar, plain, off"):
        _mode(True, Stream(True))


def test_the_worker_pool_runs_more_jobs_than_threads_and_reuses_idle_ones():
    import asyncio
    import threading

    async def main() -> tuple[list[int], int]:
        loop = asyncio.get_running_loop()
        pool = loop._default_executor  # type: ignore[attr-defined]
        first = await asyncio.gather(
            *(asyncio.to_thread(lambda i=i: (time.sleep(0.01), i)[1]) for i in range(100))
        )
        after_burst = len(pool._threads)
        for _ in range(20):  # one at a time: an idle worker takes each, no new thread
            await asyncio.to_thread(threading.get_ident)
        assert len(pool._threads) == after_burst
        return first, after_burst

    results, threads = _cancel.run_interruptible(main())
    assert results == list(range(100)) and threads <= _cancel._DaemonPool()._max


def test_an_interrupted_run_does_not_leave_later_work_cancelled():
    import asyncio

    async def interrupted() -> None:
        _cancel.request_cancel()
        raise asyncio.CancelledError

    with pytest.raises(asyncio.CancelledError):
        _cancel.run_interruptible(interrupted())
    with phase("later", total=1) as ph:  # would raise Cancelled if the flag were left up
        ph.advance()
