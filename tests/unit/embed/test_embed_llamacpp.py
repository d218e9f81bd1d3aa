"""openai-compat embedder against a real llama.cpp server (assay's, ``--embedding``) run from the embedded GGUF."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from assay.embed import CachedEmbedder, OpenAICompatEmbedder
from assay.errors import InfraError
from assay.models import LlamaServer

pytestmark = [pytest.mark.local_model, pytest.mark.slow]


@pytest.fixture(scope="module")
def llama_server() -> Iterator[LlamaServer]:
    with LlamaServer(ctx_size=512, n_threads=1, extra_args=["--embedding"]) as server:
        yield server


def test_embeddings_from_llama_cpp(llama_server: LlamaServer, tmp_path: Path) -> None:
    emb = OpenAICompatEmbedder("smollm2", llama_server.base_url, timeout_s=60)
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


def test_killed_llama_cpp_server_is_infra(llama_server: LlamaServer) -> None:
    emb = OpenAICompatEmbedder("smollm2", llama_server.base_url, timeout_s=60)
    emb.embed(["still up"])
    llama_server.kill()
    with pytest.raises(InfraError, match="unreachable"):
        emb.embed(["after the outage"])
