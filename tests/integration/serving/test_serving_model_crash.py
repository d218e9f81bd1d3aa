"""The embedded model dies with SIGSEGV while `assay eval benchmark` drives it: the eval does not vanish with
it. The level in flight is INFRA_ERROR naming the signal, the next level NOT_RUN, exit 3, and the resume
command is printed."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import psutil
import pytest

pytestmark = [pytest.mark.local_model, pytest.mark.slow]


def _model_server(eval_pid: int, deadline: float) -> psutil.Process:
    while time.monotonic() < deadline:
        for child in psutil.Process(eval_pid).children(recursive=True):
            try:
                if "assay.models._llama_serve" in " ".join(child.cmdline()):
                    return child
            except psutil.NoSuchProcess:
                continue
        time.sleep(0.2)
    raise AssertionError("the eval started no model server")


def _serving(server: psutil.Process, deadline: float) -> None:
    """Wait until the server answers on the port the eval was given (it loads the model first: llama.cpp's own
    listener is up before that, assay's front after)."""
    argv = server.cmdline()
    url = f"http://127.0.0.1:{argv[argv.index('--port') + 1]}/health"
    while time.monotonic() < deadline:
        try:
            if httpx.get(url, timeout=1.0).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    raise AssertionError("the model server never answered")


def test_segfault_of_the_embedded_model_mid_eval(tmp_path: Path) -> None:
    out = tmp_path / "run"
    env = {**os.environ, "ASSAY_NO_LOCK": "1", "ASSAY_HOME": str(tmp_path / "home")}
    cmd = [sys.executable, "-m", "assay", "eval", "benchmark", "--model", "local/smollm2"]
    # enough requests that the first level is still under way when the signal comes (llama.cpp's own server
    # answers 40 of them in under 3 s on an idle machine); the kill ends the run early either way
    cmd += ["--concurrency", "1,2", "--num-requests", "400", "--max-tokens", "16", "--out", str(out)]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        server = _model_server(proc.pid, time.monotonic() + 60)
        # wait until the first level is under way: the server serves (a signal before that is a crash while
        # starting, with no run to resume), then its requests have begun
        _serving(server, time.monotonic() + 300)
        time.sleep(3.0)
        os.kill(server.pid, signal.SIGSEGV)
        output, _ = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 3, output
    assert "Traceback" not in output
    assert f"--resume {out}" in output
    records = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines() if line.strip()]
    by_case = {r["case_id"]: r for r in records}
    assert by_case["c1"]["status"] == "INFRA_ERROR", by_case
    assert "killed by SIGSEGV (signal 11)" in by_case["c1"]["error"]["message"]
    assert by_case.get("c2", {"status": "NOT_RUN"})["status"] == "NOT_RUN"
