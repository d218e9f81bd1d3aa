"""The gateway as a server: in-process on a free loopback port (a background thread), or ``assay gateway``.

    with Gateway("local/smollm2") as gw:              # or Gateway(model_instance, log_path=...)
        route = gw.route("claude-sonnet-4-5", run="case-1")
        ...  # ANTHROPIC_BASE_URL=route.anthropic_base_url, OPENAI_BASE_URL=route.openai_base_url
        gw.usage(run="case-1")                       # tokens, model_ran, infra errors of that run

A harness that holds only the :class:`~assay.agents.Route` reads the same totals with :func:`fetch_usage`.
"""

from __future__ import annotations

import asyncio
import signal
import socket
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import Any

import httpx

from assay.agents._harness import Route
from assay.agents.gateway._app import build_app
from assay.agents.gateway._log import CallLog, CallRecord, GatewayUsage
from assay.errors import ConfigError, InfraError, MissingDependencyError
from assay.models import ChatModel, get_model, serve_in_process, ssl_context
from assay.models import preflight as run_preflight
from assay.models.cost import is_loopback_url

__all__ = [
    "Gateway",
    "default_rewrite_system",
    "fetch_calls",
    "fetch_usage",
    "limit_steps",
    "serve_gateway",
]

_LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")


def default_rewrite_system(upstream: ChatModel) -> bool:
    """Whether system entries inside ``messages`` are rewritten by default: on for the embedded llama.cpp."""
    provider = getattr(upstream, "provider", "") or upstream.name.partition("/")[0]
    return provider == "local"


class Gateway:
    """The model gateway on loopback: holds the upstream (and its key), speaks OpenAI and Anthropic in front.

    ``upstream`` is an ``assay.models`` spec (built with ``get_model(spec, **model_options)``) or a chat model.
    ``rewrite_system`` (None: on for ``local/``) turns system entries after the first turn into user entries.
    ``log_path`` appends every call record to a JSONL file as it ends.
    """

    def __init__(
        self,
        upstream: str | ChatModel,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        log_path: Path | None = None,
        rewrite_system: bool | None = None,
        model_options: dict[str, Any] | None = None,
    ) -> None:
        if host not in _LOOPBACK_HOSTS and not host.startswith("127."):
            raise ConfigError(f"--host {host!r}: the gateway holds the upstream key and serves loopback only")
        if not 0 <= port <= 65535:
            raise ConfigError(f"--port {port}: not a TCP port (0 picks a free one)")
        self.upstream: ChatModel = (
            get_model(upstream, **(model_options or {})) if isinstance(upstream, str) else upstream
        )
        self.host = host
        self.rewrite_system = (
            default_rewrite_system(self.upstream) if rewrite_system is None else rewrite_system
        )
        self.log = CallLog(log_path)
        self._requested_port = port
        self._port: int | None = None
        self._server: Any = None
        self._thread: threading.Thread | None = None
        self._error: BaseException | None = None
        self._stopping = False

    # -- lifecycle ------------------------------------------------------------------------------------
    def start(self, timeout_s: float = 15.0) -> Gateway:
        """Listen on the port (a free one for 0) and serve from a background thread; returns self."""
        if self._thread is not None:
            return self
        try:
            import uvicorn
        except ImportError as exc:
            raise MissingDependencyError("uvicorn", "gateway") from exc

        family = socket.AF_INET6 if ":" in self.host else socket.AF_INET
        # IPPROTO_TCP named, so asyncio sets TCP_NODELAY on accepted sockets (else Nagle adds 40 ms a call)
        sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((self.host, self._requested_port))
        except OSError as exc:
            sock.close()
            raise ConfigError(f"--port {self._requested_port}: cannot listen on {self.host}: {exc}") from exc
        sock.listen(128)
        self._port = int(sock.getsockname()[1])
        inner = build_app(self.upstream, self.log, rewrite_system=self.rewrite_system)
        app = _ended_quietly(inner, lambda: self._stopping)
        self._stopping = False
        config = uvicorn.Config(
            app, log_level="warning", access_log=False, lifespan="off", timeout_keep_alive=30
        )
        self._server = uvicorn.Server(config)

        def serve() -> None:
            try:
                asyncio.run(self._server.serve(sockets=[sock]))
            except BaseException as exc:
                self._error = exc
            finally:
                sock.close()

        self._thread = threading.Thread(target=serve, name=f"assay-gateway-{self._port}", daemon=True)
        self._thread.start()
        deadline = time.monotonic() + timeout_s
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                self.stop()
                raise InfraError(
                    f"the model gateway did not start on {self.url}: {self._error or 'timed out'}"
                )
            time.sleep(0.005)
        # a model client in this process (the reference agent) calls the app on its own event loop: the same
        # request and answer, without the GIL hand-overs between its thread and this server's on every call.
        # The app itself, not the server's wrapper: a cancelled call there is its caller's, and stays cancelled
        serve_in_process(self.url, inner)
        return self

    def stop(self, timeout_s: float = 10.0) -> None:
        """Stop serving (requests in flight get ``timeout_s`` to finish; none when the run is being stopped,
        Ctrl-C or SIGTERM: the agents that asked are stopped already)."""
        from assay._util import cancel_requested

        self._stopping = True
        if self._port is not None:
            serve_in_process(self.url, None)
        if self._server is not None:
            self._server.should_exit = True
            if cancel_requested():
                self._server.force_exit = True
        if self._thread is not None:
            self._thread.join(timeout_s)
            if self._thread.is_alive() and self._server is not None:
                self._server.force_exit = True
                self._thread.join(timeout_s)
        self._thread = None
        self._server = None

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def __enter__(self) -> Gateway:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    async def __aenter__(self) -> Gateway:
        return await asyncio.to_thread(self.start)

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await asyncio.to_thread(self.stop)

    # -- where it is ----------------------------------------------------------------------------------
    @property
    def port(self) -> int:
        if self._port is None:
            raise RuntimeError("the gateway is not started (call start() or use it as a context manager)")
        return self._port

    @property
    def url(self) -> str:
        """The root URL, e.g. ``http://127.0.0.1:PORT``."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    @property
    def openai_base_url(self) -> str:
        return f"{self.url}/v1"

    @property
    def anthropic_base_url(self) -> str:
        return self.url

    def route(self, model: str | None = None, *, run: str | None = None) -> Route:
        """The route a harness gives its agent: the gateway's URLs (under ``/run/RUN`` when ``run`` is
        given, which tags that run's calls) and the model name to ask for (default: the upstream's)."""
        root = self.url if run is None else f"{self.url}/run/{_check_run(run)}"
        return Route(
            model=model or self.upstream.name,
            openai_base_url=f"{root}/v1",
            anthropic_base_url=root,
            upstream=self.upstream.name,
        )

    @staticmethod
    def new_run_id() -> str:
        return uuid.uuid4().hex[:12]

    # -- what went through it -------------------------------------------------------------------------
    def mark(self) -> int:
        """The number of calls so far: pass it as ``since`` to count only the calls after this point."""
        return len(self.log)

    def calls(self, run: str | None = None, since: int = 0) -> list[CallRecord]:
        return self.log.records(run=run, since=since)

    def usage(self, run: str | None = None, since: int = 0) -> GatewayUsage:
        return GatewayUsage.of(self.log.records(run=run, since=since), self.upstream.name, run)

    def __repr__(self) -> str:
        where = self.url if self.running else "stopped"
        return f"Gateway({self.upstream.name!r}, {where})"


def _check_run(run: str) -> str:
    if not run or not all(c.isalnum() or c in "-_." for c in run):
        raise ConfigError(f"run id {run!r}: letters, digits, '-', '_' and '.' only (it is part of a URL)")
    return run


def _route_root(route: Route) -> str:
    root = route.anthropic_base_url or (route.openai_base_url or "").removesuffix("/").removesuffix("/v1")
    if not root or not is_loopback_url(root):
        raise ConfigError(f"route {route.model!r} does not point at a gateway on loopback (got {root!r})")
    return root.rstrip("/")


async def _get(route: Route, what: str, since: int) -> Any:
    url = f"{_route_root(route)}/assay/{what}?since={since}"
    try:
        async with httpx.AsyncClient(timeout=10.0, verify=ssl_context()) as client:
            response = await client.get(url)
    except httpx.HTTPError as exc:
        raise InfraError(f"the model gateway at {url} did not answer: {exc}") from exc
    if response.status_code != 200:
        raise InfraError(
            f"the model gateway at {url} answered HTTP {response.status_code}: {response.text[:200]}"
        )
    return response.json()


async def fetch_usage(route: Route, since: int = 0) -> GatewayUsage:
    """The totals of a route's calls, read from its gateway (the run's own when the route has a run id)."""
    return GatewayUsage.model_validate(await _get(route, "usage", since))


async def fetch_calls(route: Route, since: int = 0) -> list[CallRecord]:
    """The call records of a route, read from its gateway."""
    data = await _get(route, "calls", since)
    return [CallRecord.model_validate(r) for r in data["calls"]]


async def limit_steps(route: Route, max_calls: int | None) -> int | None:
    """Hold the route's run to ``max_calls`` model calls from now on (None lifts it): the gateway refuses the
    calls past it (``cut_off``). Returns the call index to read the run's usage from, or None when the route
    has no run id (its calls are not counted apart, so no limit can be set)."""
    root = _route_root(route)
    if "/run/" not in root:
        return None
    url = f"{root}/assay/limit"
    try:
        async with httpx.AsyncClient(timeout=10.0, verify=ssl_context()) as client:
            response = await client.post(url, json={"max_calls": max_calls})
    except httpx.HTTPError as exc:
        raise InfraError(f"the model gateway at {url} did not answer: {exc}") from exc
    if response.status_code != 200:
        raise InfraError(
            f"the model gateway at {url} answered HTTP {response.status_code}: {response.text[:200]}"
        )
    return int(response.json()["since"])


def serve_gateway(
    upstream: str,
    *,
    port: int = 0,
    host: str = "127.0.0.1",
    log_path: Path | None = None,
    rewrite_system: bool | None = None,
    model_options: dict[str, Any] | None = None,
    preflight: bool = True,
    on_ready: Callable[[Gateway], None] | None = None,
) -> None:
    """``assay gateway``: serve ``upstream`` in the foreground until Ctrl-C or SIGTERM.

    With ``preflight`` the upstream is checked (and a local model started) first, so a wrong URL or a rejected
    key stops here with one line (InfraError, exit 3) rather than on the agent's first call.
    """
    gateway = Gateway(
        upstream,
        host=host,
        port=port,
        log_path=log_path,
        rewrite_system=rewrite_system,
        model_options=model_options,
    )
    if preflight:
        asyncio.run(run_preflight(gateway.upstream))
    stop = threading.Event()
    previous = {sig: signal.getsignal(sig) for sig in (signal.SIGTERM, signal.SIGINT)}
    for sig in previous:
        signal.signal(sig, lambda *_: stop.set())
    try:
        gateway.start()
        if on_ready is not None:
            on_ready(gateway)
        while not stop.wait(0.5):
            if not gateway.running:
                raise InfraError(f"the model gateway on {gateway.url} stopped: {gateway._error}")
    finally:
        gateway.stop()
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _ended_quietly(app: Any, stopping: Callable[[], bool]) -> Any:
    """``app``, whose requests still in flight when the gateway stops end with a 503 instead of a
    cancellation traceback in the server's log (their callers were stopped with the run)."""

    async def wrapped(scope: dict[str, Any], receive: Any, send: Any) -> None:
        started = False

        async def tracked(message: dict[str, Any]) -> None:
            nonlocal started
            started = started or message.get("type") == "http.response.start"
            await send(message)

        try:
            await app(scope, receive, tracked)
        except asyncio.CancelledError:
            if not stopping() or scope.get("type") != "http":
                raise
            if not started:
                body = b'{"error": {"type": "gateway_stopped", "message": "the run stopped"}}'
                headers = [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                ]
                await send({"type": "http.response.start", "status": 503, "headers": headers})
                await send({"type": "http.response.body", "body": body})
            else:  # a stream already under way: end it where it is
                await send({"type": "http.response.body", "body": b""})

    return wrapped
