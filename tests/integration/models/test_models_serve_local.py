"""`assay serve-local` in a real subprocess: it serves the embedded model until interrupted."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import psutil
import pytest

pytestmark = pytest.mark.local_model


def test_serve_local_serves_until_interrupted() -> None:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "assay", "serve-local", "--port", "0", "--ctx-size", "512"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
    )
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        assert first.startswith("serving openai-compat/smollm2@http://127.0.0.1:"), first
        base_url = first.split("@", 1)[1].strip()
        children = psutil.Process(proc.pid).children(recursive=True)
        assert children, "the llama.cpp server child is missing"
        answer = httpx.post(
            f"{base_url}/chat/completions",
            json={"messages": [{"role": "user", "content": "Say hi."}], "max_tokens": 8},
            timeout=60,
        ).json()
        assert answer["choices"][0]["message"]["content"].strip()
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=20) == 0
        deadline = time.monotonic() + 10
        while any(c.is_running() and c.status() != psutil.STATUS_ZOMBIE for c in children):
            assert time.monotonic() < deadline, "server child outlived serve-local"
            time.sleep(0.1)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_serve_local_refuses_a_busy_port() -> None:
    import socket

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        result = subprocess.run(
            [sys.executable, "-m", "assay", "serve-local", "--port", str(port)],
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert result.returncode == 1
    assert f"port {port}" in result.stderr and "--port" in result.stderr


def test_a_server_that_cannot_load_its_model_is_reported(tmp_path: Path) -> None:
    """The user's file, not an outage: a ConfigError naming it (exit 1), not an InfraError."""
    from assay.errors import ConfigError
    from assay.models import LlamaServer

    broken = tmp_path / "broken.gguf"
    broken.write_bytes(b"GGUF" + b"\x03\x00\x00\x00" + b"\xff" * 64)
    server = LlamaServer(broken, startup_timeout_s=60)
    with pytest.raises(ConfigError, match=f"llama.cpp could not load {broken}: not a usable GGUF model"):
        server.start()
    assert not server.running
