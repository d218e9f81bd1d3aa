"""The fence's network relay, outside the sandbox wall (:class:`UnixToTcpRelay`, in a thread of the harness): a
Unix socket in a private folder; every connection to it is piped to ``127.0.0.1:PORT`` (the gateway).

Inside, :mod:`assay.agents._inside` (``--listen PORT=SOCKET``, in a network namespace with nothing but loopback)
listens on ``127.0.0.1:PORT`` and pipes every connection to the Unix socket bound in: the agent sees the gateway
at its usual URL and no other port answers.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
from collections.abc import Awaitable, Callable
from pathlib import Path

_CHUNK = 65536
Connect = Callable[[], Awaitable[tuple[asyncio.StreamReader, asyncio.StreamWriter]]]


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """Copy until EOF, then half-close the other side (so a request/response on one connection completes)."""
    try:
        while data := await reader.read(_CHUNK):
            writer.write(data)
            await writer.drain()
        if writer.can_write_eof():
            writer.write_eof()
    except (ConnectionError, OSError):
        pass


async def _splice(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, connect: Connect) -> None:
    try:
        up_reader, up_writer = await connect()
    except OSError:
        writer.close()
        return
    try:
        await asyncio.gather(_pipe(reader, up_writer), _pipe(up_reader, writer))
    finally:
        for w in (writer, up_writer):
            with contextlib.suppress(Exception):
                w.close()


class UnixToTcpRelay:
    """Outside the fence: pipe connections on a Unix socket to ``host:port``, in a background thread."""

    def __init__(self, port: int, socket_path: Path, host: str = "127.0.0.1") -> None:
        self.port, self.host, self.socket_path = port, host, Path(socket_path)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._server: asyncio.AbstractServer | None = None

    def start(self) -> UnixToTcpRelay:
        ready = threading.Event()
        failure: list[BaseException] = []

        async def serve() -> None:
            async def connect() -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
                return await asyncio.open_connection(self.host, self.port)

            try:
                self._server = await asyncio.start_unix_server(
                    lambda r, w: _splice(r, w, connect), path=str(self.socket_path)
                )
            except BaseException as exc:
                failure.append(exc)
                raise
            finally:
                ready.set()

        def run() -> None:
            loop = self._loop = asyncio.new_event_loop()
            try:
                loop.run_until_complete(serve())
                loop.run_forever()
            except BaseException:
                pass
            finally:
                if self._server is not None:
                    self._server.close()
                    loop.run_until_complete(self._server.wait_closed())
                loop.close()

        self._thread = threading.Thread(target=run, name=f"fence-relay-{self.port}", daemon=True)
        self._thread.start()
        ready.wait()
        if failure:
            raise failure[0]
        os.chmod(self.socket_path, 0o666)  # the sandbox's user may be mapped to another uid
        return self

    def stop(self) -> None:
        if self._loop is not None and self._thread is not None:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout=5)
        self._loop = self._thread = None
        with contextlib.suppress(FileNotFoundError):
            self.socket_path.unlink()
