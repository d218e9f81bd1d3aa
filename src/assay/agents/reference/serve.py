"""The reference agent behind assay's turn protocol (``POST /turn``, see :mod:`assay.agents._http`).

    app = turn_app(ReferenceHarness(model="local/smollm2"))   # or: assay agent serve --port 8766

One harness answers every turn, so a conversation goes on under the ``session_id`` each answer carries. Turns of
one session run one after another; other sessions run alongside. A turn that carries a model route (the
gateway's ``openai_base_url`` and ``model``) runs the agent on it; otherwise on the server's own ``--model``.
Bad requests are answered 4xx with ``{"error": "..."}``; the agent's own failures are in the record (200).
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from assay.agents._harness import Route, RunSpec
from assay.agents._http import TURN_PATH, TURN_PROTOCOL_VERSION, TurnRequest
from assay.agents.reference.harness import ReferenceHarness
from assay.errors import ConfigError, MissingDependencyError

if TYPE_CHECKING:
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse

__all__ = ["TurnServer", "listen", "preflight", "serve", "turn_app"]

_LOOPBACK = ("127.0.0.1", "::1", "localhost")


class BadTurn(Exception):
    """A turn the server cannot run: answered with ``status`` and the message."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


class TurnServer:
    """Runs turns on one :class:`ReferenceHarness`, one at a time per session."""

    def __init__(self, harness: ReferenceHarness, *, fence: bool = False) -> None:
        self.harness = harness
        self.fence = fence
        self._locks: dict[str, asyncio.Lock] = {}
        self.turns = 0

    def spec(self, turn: TurnRequest) -> RunSpec:
        if turn.protocol_version != TURN_PROTOCOL_VERSION:
            raise BadTurn(
                f"protocol_version {turn.protocol_version}: this server speaks {TURN_PROTOCOL_VERSION}"
            )
        if turn.history:
            raise BadTurn("history: this server keeps the conversation itself; send session_id instead")
        workdir = Path(turn.workdir)
        if not workdir.is_absolute() or not workdir.is_dir():
            raise BadTurn(f"workdir {turn.workdir!r}: not an absolute path to an existing folder")
        route = None
        if turn.openai_base_url or turn.model:
            if not (turn.openai_base_url and turn.model):
                raise BadTurn(
                    "model and openai_base_url: a route needs both (the reference agent speaks OpenAI)"
                )
            route = Route(
                model=turn.model,
                openai_base_url=turn.openai_base_url,
                anthropic_base_url=turn.anthropic_base_url,
            )
        return RunSpec(
            workdir=workdir,
            limits=turn.limits,
            route=route,
            fence=self.fence,
            session_id=turn.session_id,
            toolchain=[Path(t) for t in turn.toolchain],
        )

    async def turn(self, turn: TurnRequest) -> dict[str, Any]:
        spec = self.spec(turn)
        if turn.session_id is not None and not self.harness.has_session(turn.session_id):
            raise BadTurn(f"session_id {turn.session_id!r}: no such session on this server", status=404)
        lock = self._locks.setdefault(turn.session_id, asyncio.Lock()) if turn.session_id else None
        try:
            if lock is None:
                result = await self.harness.run(turn.prompt, spec)
            else:
                async with lock:
                    result = await self.harness.run(turn.prompt, spec)
        except ConfigError as exc:  # a setup the agent cannot run with (no model, a fence that cannot run)
            raise BadTurn(str(exc)) from exc
        self.turns += 1
        return result.model_dump(mode="json")


def turn_app(harness: ReferenceHarness, *, fence: bool = False) -> Starlette:
    """The ASGI app: ``POST /turn`` and ``GET /`` (what is served); closes the harness on shutdown."""
    try:
        from starlette.applications import Starlette
        from starlette.responses import JSONResponse
        from starlette.routing import Route as HttpRoute
    except ImportError as exc:
        raise MissingDependencyError("starlette", "gateway") from exc
    server = TurnServer(harness, fence=fence)

    async def post_turn(request: Request) -> JSONResponse:
        try:
            turn = TurnRequest.model_validate_json(await request.body())
            return JSONResponse(await server.turn(turn))
        except ValidationError as exc:
            errors = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'body'}: {e['msg']}" for e in exc.errors())
            return JSONResponse({"error": f"not a TurnRequest: {errors}"}, status_code=422)
        except BadTurn as exc:
            return JSONResponse({"error": str(exc)}, status_code=exc.status)

    async def root(request: Request) -> JSONResponse:
        return JSONResponse(
            {
                "agent": harness.name,
                "protocol_version": TURN_PROTOCOL_VERSION,
                "turn": TURN_PATH,
                "fence": fence,
                "turns": server.turns,
            }
        )

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        yield
        await harness.close()

    routes = [HttpRoute("/", root, methods=["GET"]), HttpRoute(TURN_PATH, post_turn, methods=["POST"])]
    return Starlette(routes=routes, lifespan=lifespan)


def preflight(harness: ReferenceHarness) -> str | None:
    """Build the harness's own model now, so a bad ``--model`` fails at start; its name (None: routes only)."""
    if harness.model is None:
        return None
    return harness._model_for(None).name


def listen(host: str, port: int) -> socket.socket:
    """A listening socket on a loopback ``host``; ConfigError naming ``--host``/``--port`` otherwise."""
    if host not in _LOOPBACK and not host.startswith("127."):
        raise ConfigError(f"--host {host!r}: the agent runs commands on this machine; serve loopback only")
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise ConfigError(f"--port {port}: cannot listen on {host}: {exc}") from exc
    sock.listen(128)
    return sock


def serve(app: Starlette, sock: socket.socket) -> None:
    """Serve ``app`` on ``sock`` in the foreground until Ctrl-C (or SIGTERM)."""
    try:
        import uvicorn
    except ImportError as exc:
        raise MissingDependencyError("uvicorn", "gateway") from exc
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on")
    try:
        asyncio.run(uvicorn.Server(config).serve(sockets=[sock]))
    except KeyboardInterrupt:  # uvicorn shut down cleanly, then re-raised the Ctrl-C it caught: a normal stop
        pass
    finally:
        sock.close()
