"""What the gateway adds to one model call, on each front, against a bare floor measured in the same run.

The upstream is a scripted model with a fixed delay (default 200 ms, as an API call's). Per front (OpenAI chat
completions as JSON, Anthropic messages as SSE), ``--calls`` calls are made through the real gateway
(``assay.agents.gateway``, started as runs start it); the overhead of a call is the client's time minus the
upstream's. Three clients, as runs have them:

- in this process (an agent that runs in the runner's process: the reference agent): the model client's own
  path (``assay.models`` HTTP backend), which calls the gateway's app on the caller's event loop; its floor is a
  bare ASGI app that sleeps the same delay and answers the same bytes, called the same way;
- in another process (an agent program: Claude Code, Codex, a command): a plain HTTP client over loopback; its
  floor a bare asyncio server on loopback that reads the request, sleeps the delay and writes the bytes the
  gateway answered that call with, in one write;
- in this process over the socket (``measure_overhead``'s httpx client in the gateway's process): no run makes
  its calls this way (a JSON call of a client in the gateway's process takes the app path), printed to show what
  that path saves: two threads of one process hand the GIL to each other on every call.

Printed: the median overhead in ms, its share of the upstream call (goal: at most 2%), the floor's, the ratio
and, for the clients in this process, the CPU time this process spent per call (client, gateway and the
scripted model together). ``--load N`` runs N busy loops (other processes) while measuring, to see the figures
on a busy machine; the load average is printed either way.

    python benchmarks/gateway_overhead.py [--calls 40] [--delay-ms 200] [--load 0]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import threading
import time
from typing import Any

import httpx
from _busy import busy_loops, load_average

from assay.agents.gateway import Gateway, measure_overhead
from assay.models._http import HttpBackend
from assay.models.scripted import ScriptedModel

GOAL = 0.02
FRONTS = (("openai, JSON", "openai", False), ("anthropic, SSE", "anthropic", True))


class Floor:
    """A bare HTTP/1.1 server on loopback: each request is answered, after ``delay_s``, with ``reply``."""

    def __init__(self, delay_s: float) -> None:
        self.delay_s = delay_s
        self.reply = b""
        #: how long each request's sleep really took (as the gateway times its upstream's call)
        self.slept: list[float] = []
        self.loop = asyncio.new_event_loop()
        self.ready = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.port = 0

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = next(
                    (
                        int(h.split(b":", 1)[1])
                        for h in head.split(b"\r\n")
                        if h.lower().startswith(b"content-length:")
                    ),
                    0,
                )
                await reader.readexactly(length)
                t0 = time.perf_counter()
                await asyncio.sleep(self.delay_s)
                self.slept.append(time.perf_counter() - t0)
                writer.write(self.reply)
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            writer.close()

    def _serve(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.server = self.loop.run_until_complete(asyncio.start_server(self._handle, "127.0.0.1", 0))
        self.port = self.server.sockets[0].getsockname()[1]
        self.ready.set()
        self.loop.run_forever()

    def __enter__(self) -> Floor:
        self.thread.start()
        self.ready.wait(10)
        return self

    async def _close(self) -> None:
        self.server.close()
        for task in asyncio.all_tasks():
            if task is not asyncio.current_task():
                task.cancel()

    def __exit__(self, *exc: object) -> None:
        asyncio.run_coroutine_threadsafe(self._close(), self.loop).result(5)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)


def raw_reply(gw: Gateway, front: str, stream: bool) -> bytes:
    """The bytes the gateway answers one call with (status line, headers, body), re-framed with a length."""
    path = "/v1/messages" if front == "anthropic" else "/v1/chat/completions"
    headers = {"anthropic-version": "2023-06-01", "x-api-key": "unused"} if front == "anthropic" else {}
    body = {"model": "assay", "messages": [{"role": "user", "content": "Say hello."}], "max_tokens": 16}
    response = httpx.post(f"{gw.url}{path}", json={**body, "stream": stream}, headers=headers, timeout=60)
    content = response.content
    kind = response.headers["content-type"]
    return (
        f"HTTP/1.1 200 OK\r\ncontent-type: {kind}\r\ncontent-length: {len(content)}\r\n\r\n".encode()
        + content
    )


def floor_ms(floor: Floor, front: str, stream: bool, calls: int) -> float:
    path = "/v1/messages" if front == "anthropic" else "/v1/chat/completions"
    body = {"model": "assay", "messages": [{"role": "user", "content": "Say hello."}], "max_tokens": 16}
    times = []
    with httpx.Client(base_url=f"http://127.0.0.1:{floor.port}", timeout=60) as client:
        for i in range(calls + 1):
            t0 = time.perf_counter()
            with client.stream("POST", path, json={**body, "stream": stream}) as response:
                response.read()
            if i:
                times.append(1000 * (time.perf_counter() - t0 - floor.slept[-1]))
    return statistics.median(times)


def _body(front: str, stream: bool) -> tuple[str, dict[str, Any], dict[str, str]]:
    body = {"model": "assay", "messages": [{"role": "user", "content": "Say hello."}], "max_tokens": 16}
    if front == "anthropic":
        headers = {"anthropic-version": "2023-06-01", "x-api-key": "unused"}
        return "/v1/messages", {**body, "stream": stream}, headers
    return "/v1/chat/completions", {**body, "stream": stream}, {}


class FloorApp:
    """A bare ASGI app: each request is answered, after ``delay_s``, with ``body`` (as the gateway answered)."""

    def __init__(self, delay_s: float) -> None:
        self.delay_s = delay_s
        self.body = b""
        self.kind = b"application/json"
        self.slept: list[float] = []

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        while (await receive()).get("more_body"):
            pass
        t0 = time.perf_counter()
        await asyncio.sleep(self.delay_s)
        self.slept.append(time.perf_counter() - t0)
        headers = [(b"content-type", self.kind), (b"content-length", str(len(self.body)).encode())]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": self.body})


def in_process_ms(
    gw: Gateway, floor: FloorApp, front: str, stream: bool, calls: int
) -> tuple[float, float, float, float]:
    """Through the model client's own path from this process (the gateway's app on this loop), and through the
    same path to the bare app: (median overhead, upstream ms, floor overhead, CPU ms a gateway call)."""
    from assay.models import serve_in_process

    path, body, headers = _body(front, stream)

    async def run() -> tuple[list[float], list[float], list[float], float]:
        backend = HttpBackend("bench", gw.url, headers)
        client = backend.json_client()
        if not isinstance(client._transport, httpx.ASGITransport):
            raise SystemExit("the gateway is not served in process: the in-process figure cannot be measured")
        through, upstream = [], []
        cpu0 = time.process_time()
        for i in range(calls + 1):
            mark = gw.mark()
            t0 = time.perf_counter()
            response = await client.post(backend.url(path), json=body)
            ms = (time.perf_counter() - t0) * 1000
            (record,) = gw.calls(since=mark)
            if i:
                through.append(ms)
                upstream.append(record.upstream_ms)
            else:
                floor.body, floor.kind = response.content, response.headers["content-type"].encode()
        cpu = 1000 * (time.process_time() - cpu0) / (calls + 1)
        await backend.aclose()
        origin = "http://floor.invalid"
        serve_in_process(origin, floor)
        bare_backend = HttpBackend("bench", origin, headers)
        bare = []
        try:
            for i in range(calls + 1):
                t0 = time.perf_counter()
                await bare_backend.json_client().post(bare_backend.url(path), json=body)
                if i:
                    bare.append((time.perf_counter() - t0 - floor.slept[-1]) * 1000)
        finally:
            serve_in_process(origin, None)
            await bare_backend.aclose()
        return through, upstream, bare, cpu

    through, upstream, bare, cpu = asyncio.run(run())
    return (
        statistics.median(t - u for t, u in zip(through, upstream, strict=True)),
        statistics.median(upstream),
        statistics.median(bare),
        cpu,
    )


_CLIENT = r"""
import http.client, json, sys, time
port, n, front = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
body = {"model": "assay", "messages": [{"role": "user", "content": "Say hello."}], "max_tokens": 16}
headers = {"content-type": "application/json"}
path = "/v1/chat/completions"
if front == "anthropic":
    path, body["stream"] = "/v1/messages", True
    headers |= {"anthropic-version": "2023-06-01", "x-api-key": "unused"}
conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
out = []
for _ in range(n + 1):
    t = time.perf_counter()
    conn.request("POST", path, body=json.dumps(body), headers=headers)
    conn.getresponse().read()
    out.append((time.perf_counter() - t) * 1000)
print(json.dumps(out[1:]))
"""


def other_process_ms(gw: Gateway, floor: Floor, front: str, calls: int) -> tuple[float, float]:
    """Median overhead of the gateway and of the floor seen by a client in another process (as an agent's)."""

    def client(port: int) -> list[float]:
        argv = [sys.executable, "-c", _CLIENT, str(port), str(calls), front]
        return json.loads(subprocess.run(argv, capture_output=True, text=True, check=True).stdout)

    mark = gw.mark()
    through = client(gw.port)
    upstream = [r.upstream_ms for r in gw.calls(since=mark)[1:]]
    bare = client(floor.port)
    slept = [1000 * s for s in floor.slept[-calls:]]
    return (
        statistics.median(t - u for t, u in zip(through, upstream, strict=True)),
        statistics.median(t - u for t, u in zip(bare, slept, strict=True)),
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=40)
    parser.add_argument("--delay-ms", type=float, default=200.0)
    parser.add_argument("--load", type=int, default=0, help="busy loops to run meanwhile (other processes)")
    args = parser.parse_args()
    delay_s = args.delay_ms / 1000
    rows: list[tuple[str, tuple[float, float, float, float], Any, float, float, tuple[float, float]]] = []
    with busy_loops(args.load):
        load0 = load_average()
        upstream = ScriptedModel(
            {"default": {"text": "The word is heron, as the notes say.", "delay_s": delay_s}}
        )
        with Gateway(upstream) as gw, Floor(delay_s) as floor:
            for label, front, stream in FRONTS:
                app = in_process_ms(gw, FloorApp(delay_s), front, stream, args.calls)
                cpu0 = time.process_time()
                summary = measure_overhead(gw, calls=args.calls, front=front, stream=stream)  # type: ignore[arg-type]
                cpu = 1000 * (time.process_time() - cpu0) / (args.calls + 1)
                floor.reply = raw_reply(gw, front, stream)
                here = floor_ms(floor, front, stream, args.calls)
                rows.append((label, app, summary, cpu, here, other_process_ms(gw, floor, front, args.calls)))
        load1 = load_average()
    print(
        f"gateway overhead per call · scripted upstream {args.delay_ms:.0f} ms · {args.calls} calls a front · "
        f"{args.load} busy loops · {os.cpu_count()} cpus · load average {load0:.2f} before, {load1:.2f} after"
    )
    head = f"  {'front':<16} {'overhead':>10} {'share':>7} {'floor':>9} {'ratio':>7}"
    print("  client in this process (the model client's own path: the gateway's app on its loop, as the")
    print("  reference agent's calls):")
    print(f"{head} {'cpu/call':>10}")
    worst_here = 0.0
    for label, (over, up, bare, cpu), *_ in rows:
        worst_here = max(worst_here, over / up)
        print(
            f"  {label:<16} {over:7.2f} ms {100 * over / up:6.2f}% {bare:6.2f} ms {over / bare:6.1f}x {cpu:7.2f} ms"
        )
    print("  client in another process (http.client over loopback, as an agent program):")
    print(head)
    worst_other = 0.0
    for label, _, s, _, _, (through, bare) in rows:
        share = through / s.upstream_ms
        worst_other = max(worst_other, share)
        print(f"  {label:<16} {through:7.2f} ms {100 * share:6.2f}% {bare:6.2f} ms {through / bare:6.1f}x")
    print("  client in this process over the socket (httpx, as measure_overhead; no run calls this way):")
    print(f"{head} {'cpu/call':>10}")
    for label, _, s, cpu, fl, _ in rows:
        share = s.overhead_ms / s.upstream_ms
        print(
            f"  {label:<16} {s.overhead_ms:7.2f} ms {100 * share:6.2f}% {fl:6.2f} ms {s.overhead_ms / fl:6.1f}x "
            f"{cpu:7.2f} ms"
        )
    print(
        f"  (overhead = client time - upstream time; share of the {args.delay_ms:.0f} ms call; floor = a bare "
        f"server answering the same bytes, reached the same way; goal <= {100 * GOAL:.0f}%: in this process "
        f"{'met' if worst_here <= GOAL else 'NOT met'}, from another process "
        f"{'met' if worst_other <= GOAL else 'NOT met'})"
    )


if __name__ == "__main__":
    main()
