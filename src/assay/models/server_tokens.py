"""Counting tokens with a server's own tokenizer: the one reader every count of that kind goes through.

    counter = server_tokenizer("http://127.0.0.1:8091")      # probed once per server in this process
    await counter.count("some text")                           # the text's own tokens, or None: no tokenizer

Three servers expose their tokenizer, each its own way: llama.cpp (``POST /tokenize`` with ``content``, the
tokens listed), llama-cpp-python (``POST /extras/tokenize/count``, a count that includes the BOS token) and vLLM
(``POST /tokenize`` with ``prompt``, a count). The first that answers is the server's kind. A count is the text's
own tokens: no BOS, no special tokens added. A server that answered none of the three has no tokenizer (None,
never an estimate); one that could not be reached is asked again next time.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import httpx

from assay.models._http import ssl_context

__all__ = ["KINDS", "Post", "ServerTokenizer", "server_tokenizer"]

#: a POST of a JSON body to a path under the server's root: (HTTP status, parsed body), status None when no
#: answer came (unreachable, timed out)
Post = Callable[[str, dict[str, Any]], Awaitable[tuple[int | None, Any]]]

KINDS = ("llama.cpp", "llama-cpp-python", "vllm")


class ServerTokenizer:
    """Counts tokens with the tokenizer endpoint of the server behind ``post``, found on the first count."""

    def __init__(self, post: Post, model: str = "") -> None:
        self._post = post
        self.model = model
        self.kind: str | None = None
        self._probed = False
        self._bos: int | None = None

    @property
    def source(self) -> str | None:
        """How counts are made, for a report: ``tokenizer (llama.cpp)``; None when the server has no tokenizer."""
        return None if self.kind is None else f"tokenizer ({self.kind})"

    async def count(self, text: str) -> int | None:
        """The number of tokens ``text`` is to the server's model; None when it exposes no tokenizer."""
        if not self._probed:
            await self._probe()
        if self.kind is None:
            return None
        return (await self._ask(self.kind, text))[0]

    async def _probe(self) -> None:
        reached = False
        for kind in KINDS:
            counted, answered = await self._ask(kind, "hello world")
            reached = reached or answered
            if counted is not None:
                self.kind, self._probed = kind, True
                return
        self._probed = reached  # a server that was down is probed again on the next count

    async def _ask(self, kind: str, text: str) -> tuple[int | None, bool]:
        """(the count or None, whether the server answered at all)."""
        if kind == "llama.cpp":
            status, body = await self._post("/tokenize", {"content": text, "add_special": False})
            tokens = body.get("tokens") if status == 200 and isinstance(body, dict) else None
            return (len(tokens) if isinstance(tokens, list) else None), status is not None
        if kind == "llama-cpp-python":
            status, body = await self._post("/extras/tokenize/count", {"input": text, "model": self.model})
            count = body.get("count") if status == 200 and isinstance(body, dict) else None
            if not isinstance(count, int):
                return None, status is not None
            # its count includes the BOS token it adds when the model has one: the empty text's count
            if self._bos is None:
                if text:
                    status, empty = await self._post(
                        "/extras/tokenize/count", {"input": "", "model": self.model}
                    )
                    bos = empty.get("count") if status == 200 and isinstance(empty, dict) else None
                    self._bos = bos if isinstance(bos, int) else 0
                else:
                    self._bos = count
            return max(0, count - self._bos), True
        status, body = await self._post(
            "/tokenize", {"model": self.model, "prompt": text, "add_special_tokens": False}
        )
        count = body.get("count") if status == 200 and isinstance(body, dict) else None
        return (count if isinstance(count, int) else None), status is not None


def _httpx_post(root: str) -> Post:
    async def post(path: str, body: dict[str, Any]) -> tuple[int | None, Any]:
        try:
            # a client per call: the counter outlives any one event loop
            async with httpx.AsyncClient(timeout=10.0, verify=ssl_context()) as client:
                resp = await client.post(f"{root}{path}", json=body)
        except httpx.HTTPError:
            return None, None
        try:
            return resp.status_code, resp.json()
        except ValueError:
            return resp.status_code, None

    return post


_BY_SERVER: dict[tuple[str, str], ServerTokenizer] = {}


def server_tokenizer(base_url: str, model: str = "") -> ServerTokenizer:
    """The process's one counter for the server at ``base_url`` (its root or its ``/v1``), probed once."""
    root = base_url.removesuffix("/").removesuffix("/v1")
    key = (root, model)
    if key not in _BY_SERVER:
        _BY_SERVER[key] = ServerTokenizer(_httpx_post(root), model)
    return _BY_SERVER[key]
