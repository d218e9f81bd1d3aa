"""openai-compat embedder against a real HTTP server on a free loopback port, started by the test."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np
import pytest

from assay.embed import HashEmbedder, OpenAICompatEmbedder, get_embedder
from assay.errors import InfraError

DIM = 48
_VECTORS = HashEmbedder(dim=DIM)


class EmbeddingServer:
    """A small /v1/embeddings server: real sockets, real HTTP, scripted failures."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.script: list[tuple[int, dict[str, str], Any]] = []  # answers to give before normal ones
        self.drop_after: int | None = None  # close the connection unanswered from this request on
        self.token_level = False  # answer with per-token vectors, like a model without a pooling layer
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                server.requests.append(body)
                server.headers.append({k.lower(): v for k, v in self.headers.items()})
                if server.drop_after is not None and len(server.requests) > server.drop_after:
                    self.close_connection = True
                    self.connection.shutdown(2)
                    return
                if self.path != "/v1/embeddings":
                    return self._send(404, {}, {"error": {"message": "not found"}})
                if server.script:
                    return self._send(*server.script.pop(0))
                texts = body["input"]
                vecs = _VECTORS.embed(texts) * 3.0  # not unit length: the client normalises
                rows = [[v.tolist(), v.tolist()] if server.token_level else v.tolist() for v in vecs]
                data = [{"object": "embedding", "index": i, "embedding": r} for i, r in enumerate(rows)]
                data.reverse()  # out of order: the client sorts by index
                usage = {"prompt_tokens": sum(len(t.split()) for t in texts), "total_tokens": 0}
                return self._send(
                    200, {}, {"object": "list", "data": data, "model": body["model"], "usage": usage}
                )

            def _send(self, status: int, headers: dict[str, str], payload: Any) -> None:
                raw = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                for k, v in headers.items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(raw)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.httpd.server_address[1]
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.02,), daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def server() -> Iterator[EmbeddingServer]:
    s = EmbeddingServer()
    yield s
    s.stop()


def _client(server: EmbeddingServer, **kw: Any) -> OpenAICompatEmbedder:
    kw.setdefault("backoff_s", 0.01)
    return OpenAICompatEmbedder("test-embed", server.base_url, **kw)


def test_embeds_in_order_normalised_and_batched(server: EmbeddingServer) -> None:
    emb = get_embedder(f"openai-compat/test-embed@{server.base_url}", batch_size=2, api_key="sk-test")
    texts = ["first text", "second", "third one here", "fourth", "fifth"]
    out = emb.embed(texts)
    np.testing.assert_allclose(out, _VECTORS.embed(texts), atol=1e-6)
    assert out.dtype == np.float32 and out.shape == (5, DIM)
    assert emb.dim == DIM
    # first contact sends one text alone (learns dim and pooling), then batches
    assert [r["input"] for r in server.requests] == [texts[0:1], texts[1:2], texts[2:4], texts[4:5]]
    emb.embed(texts[:3])
    assert [r["input"] for r in server.requests[4:]] == [texts[0:2], texts[2:3]]
    assert all(r["model"] == "test-embed" for r in server.requests)
    assert server.headers[0]["authorization"] == "Bearer sk-test"


def test_dim_is_learnt_with_one_call(server: EmbeddingServer) -> None:
    emb = _client(server)
    assert emb.dim == DIM
    assert len(server.requests) == 1
    assert emb.embed([]).shape == (0, DIM)


def test_key_from_env(server: EmbeddingServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ASSAY_EMBED_API_KEY", raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env")
    _client(server).embed(["x"])
    assert server.headers[0]["authorization"] == "Bearer sk-from-env"
    monkeypatch.delenv("OPENAI_API_KEY")
    _client(server).embed(["x"])
    assert "authorization" not in server.headers[1]


def test_retries_503_honouring_retry_after(server: EmbeddingServer) -> None:
    server.script = [
        (503, {"Retry-After": "0"}, {"error": "loading model"}),
        (429, {"Retry-After": "0"}, {"error": "slow down"}),
    ]
    out = _client(server).embed(["hello"])
    assert len(server.requests) == 3
    np.testing.assert_allclose(out, _VECTORS.embed(["hello"]), atol=1e-6)


def test_persistent_5xx_is_infra(server: EmbeddingServer) -> None:
    server.script = [(500, {}, {"error": "boom"})] * 3
    with pytest.raises(InfraError, match="HTTP 500"):
        _client(server, retries=2).embed(["hello"])
    assert len(server.requests) == 3


@pytest.mark.parametrize(
    ("status", "needle"),
    [(401, "ASSAY_EMBED_API_KEY"), (403, "credentials"), (404, "unknown model"), (400, "HTTP 400")],
)
def test_refusals_are_infra_and_not_retried(server: EmbeddingServer, status: int, needle: str) -> None:
    server.script = [(status, {}, {"error": {"message": "no"}})]
    with pytest.raises(InfraError, match=needle):
        _client(server).embed(["hello"])
    assert len(server.requests) == 1


@pytest.mark.parametrize(
    "payload",
    [
        b"not json",
        {"object": "list"},
        {"data": [{"index": 0, "embedding": [0.1] * DIM}, {"index": 1, "embedding": [0.1] * DIM}]},
        {"data": [{"index": 0, "embedding": []}]},
        {"data": [{"index": 0, "embedding": [0.1, "x"]}]},
        {"data": [{"index": 0, "embedding": [[[0.1]]]}]},
    ],
    ids=["not-json", "no-data", "wrong-count", "empty-vector", "not-numbers", "3-d"],
)
def test_malformed_answers_are_infra(server: EmbeddingServer, payload: Any) -> None:
    server.script = [(200, {}, payload)]
    with pytest.raises(InfraError, match="embedding server"):
        _client(server).embed(["hello"])


def test_unreachable_server_is_infra() -> None:
    s = EmbeddingServer()
    url = s.base_url
    s.stop()  # the port is free now: connection refused
    with pytest.raises(InfraError, match="unreachable"):
        OpenAICompatEmbedder("m", url).embed(["hello"])


def test_server_killed_mid_run_is_infra(server: EmbeddingServer) -> None:
    emb = _client(server, batch_size=1)
    server.drop_after = 2  # answers two batches, then drops connections unanswered
    with pytest.raises(InfraError, match="unreachable"):
        emb.embed(["a", "b", "c", "d"])
    assert len(server.requests) == 3


def test_server_stopped_between_calls_is_infra(server: EmbeddingServer) -> None:
    emb = _client(server)
    emb.embed(["warm"])
    server.stop()
    with pytest.raises(InfraError, match="unreachable"):
        emb.embed(["after the outage"])
    server.httpd = ThreadingHTTPServer(("127.0.0.1", 0), server.httpd.RequestHandlerClass)  # for teardown
    server.thread = threading.Thread(target=server.httpd.serve_forever, args=(0.02,), daemon=True)
    server.thread.start()


def test_ragged_batch_is_infra(server: EmbeddingServer) -> None:
    rows = [{"index": 0, "embedding": [0.1] * DIM}, {"index": 1, "embedding": [0.1] * (DIM - 1)}]
    server.script = [(200, {}, {"data": rows})]
    with pytest.raises(InfraError, match="different lengths"):
        _client(server, dim=DIM).embed(["a", "b"])


def test_token_level_vectors_are_mean_pooled(server: EmbeddingServer) -> None:
    tokens = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 1.0, 0.0]])
    server.script = [(200, {}, {"data": [{"index": 0, "embedding": tokens.tolist()}]})]
    (vec,) = _client(server).embed(["three tokens"])
    expected = tokens.mean(axis=0) / np.linalg.norm(tokens.mean(axis=0))
    np.testing.assert_allclose(vec, expected, atol=1e-6)


def test_token_level_server_gets_one_text_per_request(server: EmbeddingServer) -> None:
    server.token_level = True
    emb = _client(server)
    texts = ["one", "two", "three"]
    np.testing.assert_allclose(emb.embed(texts), _VECTORS.embed(texts), atol=1e-6)
    assert [r["input"] for r in server.requests] == [["one"], ["two"], ["three"]]
    emb.embed(["four", "five"])
    assert [r["input"] for r in server.requests[3:]] == [["four"], ["five"]]


def test_token_level_answer_to_a_batch_is_asked_again_one_by_one(server: EmbeddingServer) -> None:
    server.token_level = True
    emb = _client(server, dim=DIM)  # dim known: no first-contact probe, the batch goes out whole
    texts = ["one", "two", "three"]
    np.testing.assert_allclose(emb.embed(texts), _VECTORS.embed(texts), atol=1e-6)
    assert [r["input"] for r in server.requests] == [texts, ["one"], ["two"], ["three"]]


def test_cached_vectors_survive_an_outage(server: EmbeddingServer, tmp_path) -> None:
    from assay.embed import CachedEmbedder

    texts = ["kept on disk", "also kept"]
    first = CachedEmbedder(_client(server), cache_dir=tmp_path).embed(texts)
    server.stop()
    server.httpd = ThreadingHTTPServer(("127.0.0.1", 0), server.httpd.RequestHandlerClass)  # for teardown
    server.thread = threading.Thread(target=server.httpd.serve_forever, args=(0.02,), daemon=True)
    server.thread.start()
    # A new process against the dead URL: everything it asks for is cached, so no call is made.
    offline = CachedEmbedder(
        OpenAICompatEmbedder("test-embed", f"http://127.0.0.1:{server.port}/v1"), cache_dir=tmp_path
    )
    np.testing.assert_array_equal(offline.embed(texts[::-1]), first[::-1])
    with pytest.raises(InfraError, match="unreachable"):
        offline.embed(["not cached"])
