"""HTTP backends: a JSON call to a server this process serves (``serve_in_process``) runs its ASGI app on the
caller's loop; every other call, and every streamed one, goes over the socket; the certificate store is loaded
once per process."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from models_fakes import FakeServer, Reply

from assay.models import Message, ModelInfraError, get_model, serve_in_process, ssl_context
from assay.models._server import free_port


class _App:
    """A minimal ASGI chat-completions server that remembers what it was asked."""

    def __init__(self, text: str = "from the app") -> None:
        self.text = text
        self.seen: list[tuple[str, str, dict[str, Any]]] = []

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        self.seen.append((scope["method"], scope["path"], json.loads(body) if body else {}))
        if scope["path"].endswith("/boom"):
            raise RuntimeError("the app broke")
        answer = {
            "model": "m",
            "choices": [{"message": {"role": "assistant", "content": self.text}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 3, "completion_tokens": 2},
        }
        raw = json.dumps(answer).encode()
        headers = [(b"content-type", b"application/json"), (b"content-length", str(len(raw)).encode())]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": raw})


@pytest.fixture
def served() -> Iterator[tuple[str, _App]]:
    """An app served in process at an origin where nothing listens (a socket call there is refused)."""
    origin, app = f"http://127.0.0.1:{free_port()}", _App()
    serve_in_process(origin, app)
    try:
        yield origin, app
    finally:
        serve_in_process(origin, None)


async def test_a_json_call_to_an_origin_served_in_process_reaches_the_app(served: tuple[str, _App]) -> None:
    origin, app = served
    model = get_model(f"openai-compat/m@{origin}/run/r1/v1", max_retries=0)
    out = await model.generate([Message("user", "hi")])
    assert out.text == "from the app"
    assert (out.usage.input_tokens, out.usage.output_tokens) == (3, 2)
    # the same request a socket would have carried: path under the base URL, the JSON payload
    assert [(m, p, b["messages"]) for m, p, b in app.seen] == [
        ("POST", "/run/r1/v1/chat/completions", [{"role": "user", "content": "hi"}])
    ]
    await model.http.aclose()  # type: ignore[attr-defined]


async def test_once_withdrawn_the_call_goes_over_the_socket(served: tuple[str, _App]) -> None:
    origin, app = served
    model = get_model(f"openai-compat/m@{origin}/v1", max_retries=0)
    assert (await model.generate([Message("user", "hi")])).text == "from the app"
    serve_in_process(origin, None)
    with pytest.raises(ModelInfraError) as info:  # nothing listens there
        await model.generate([Message("user", "hi again")])
    assert info.value.kind == "connect"
    assert len(app.seen) == 1


async def test_an_app_error_is_its_500_answer_not_a_raise(served: tuple[str, _App]) -> None:
    origin, _ = served
    model = get_model(f"openai-compat/m@{origin}/boom", max_retries=0)
    with pytest.raises(ModelInfraError) as info:
        await model.http.post_json("boom", {})  # type: ignore[attr-defined]
    assert "500" in str(info.value)


async def test_other_origins_and_streamed_calls_go_over_the_socket(
    served: tuple[str, _App], fake_server: FakeServer
) -> None:
    _, app = served
    fake_server.add(Reply(body={"choices": [{"message": {"content": "from the socket"}}]}))
    other = get_model(f"openai-compat/m@{fake_server.url}/v1", max_retries=0)
    assert (await other.generate([Message("user", "hi")])).text == "from the socket"
    # a stream keeps arriving piece by piece: it is never served from the in-process app
    piece = json.dumps({"choices": [{"delta": {"content": "streamed"}}]})
    usage = json.dumps({"choices": [], "usage": {"prompt_tokens": 1, "completion_tokens": 1}})
    fake_server.add(Reply(sse=[f"data: {piece}", f"data: {usage}", "data: [DONE]"]))
    streamed = get_model(f"openai-compat/m@{fake_server.url}/v1", max_retries=0)
    serve_in_process(fake_server.url, _App("must not answer"))
    try:
        out = await streamed.generate([Message("user", "hi")], stream=True)
    finally:
        serve_in_process(fake_server.url, None)
    assert out.text == "streamed"
    assert [r.path for r in fake_server.requests] == ["/v1/chat/completions"] * 2
    assert app.seen == []


def test_the_certificate_store_is_loaded_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    first = ssl_context()
    assert ssl_context() is first
    # a different store named in the environment is loaded (once) in its place
    import certifi

    monkeypatch.setenv("SSL_CERT_FILE", certifi.where())
    other = ssl_context()
    assert other is not first and ssl_context() is other
