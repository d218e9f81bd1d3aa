"""What the agent layer adds to each model call: the gateway, the harness, and the fence.

Everything runs on loopback through the real gateway (``assay.agents.gateway``) in front of one upstream
(default: the embedded SmolLM2, so a "model call" is a real one; ``--scripted-ms N`` puts a scripted model with
a fixed N ms reply behind it instead, which is quick and gives the same overheads on a known call):

- gateway: a plain HTTP client calls the gateway; per call, the time inside the gateway beyond the upstream
  (translation, SSE framing, token counting) plus the loopback hop (client wall time minus the gateway's own),
  on the OpenAI front (the reference agent's) and the streamed Anthropic front (Claude Code's).
- harness: a real agent run; per model call, the run's wall time minus what its model calls took at the
  gateway (arrival to last byte; so the loopback hop is counted as the harness's) minus its tool calls, divided
  by the number of model calls. The part of a run before its first model call (Claude Code: node start-up) is
  shown on its own too. The reference agent runs in this process, as in an eval, so its model client calls
  the gateway's app on its own event loop (``assay.models.serve_in_process``); Claude Code is a program of its
  own and calls it over loopback.
- fence: starting a command under bubblewrap, and one gateway call from inside the fence (through the relay)
  against the same call from outside (on a gateway with an instant scripted upstream).
- limits + default fence: one agent call (a small Python agent making one model call through the gateway) run
  as an unfenced agent without limits, held to the limits, and held to them under the fence (the default where
  bubblewrap works); what the limits and the fence add to the call, as a share of the model call.

Shares are of the median upstream model call. The load average is printed before and after; ``--load N`` runs
N busy loops (other processes) meanwhile, to see the figures on a busy machine.

    .venv/bin/python benchmarks/agent_overhead.py [--runs 2] [--calls 5] [--scripted-ms 200] [--no-claude] [--load N]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path
from typing import Any

from _busy import busy_loops, load_average

from assay.agents import Limits, RunSpec, get_harness
from assay.agents._cliproc import held, run_streaming
from assay.agents._env import run_env
from assay.agents._pidns import own_pids
from assay.agents.fence import GatewayRelay, fence_argv, fence_available, fenced_command
from assay.agents.gateway import Gateway, measure_overhead
from assay.errors import ConfigError
from assay.models.scripted import ScriptedModel

NA = "not available yet"


def _ms(x: float | None) -> str:
    return "n/a" if x is None else f"{x:8.1f} ms"


def _share(x: float | None, of: float | None) -> str:
    return "n/a" if x is None or not of else f"{100 * x / of:6.2f} %"


def upstream_spec(args: argparse.Namespace, tmp: Path) -> tuple[str, dict[str, Any]]:
    if args.scripted_ms is None:
        return "local/smollm2", {"ctx_size": 4096, "defaults": {"temperature": 0, "seed": 7}}
    script = tmp / "script.yaml"
    script.write_text(f"default: {{text: 'The word is heron.', delay_s: {args.scripted_ms / 1000}}}\n")
    return f"scripted/{script}", {}


def gateway_rows(gw: Gateway, calls: int) -> list[tuple[str, Any]]:
    rows = []
    for label, front, stream in (("openai, JSON", "openai", False), ("anthropic, SSE", "anthropic", True)):
        rows.append((label, measure_overhead(gw, calls=calls, front=front, stream=stream)))  # type: ignore[arg-type]
    return rows


def _arrival_s(record_time: str) -> float:
    return datetime.fromisoformat(record_time.replace("Z", "+00:00")).timestamp()


async def harness_runs(
    gw: Gateway, name: str, options: dict[str, Any], runs: int, tmp: Path
) -> dict[str, Any] | str:
    """Per model call: (run wall time - model calls at the gateway - tool calls) / model calls."""
    try:
        harness = get_harness(name, **options)
    except ConfigError as exc:
        return f"{NA} ({exc})"
    per_call: list[float] = []
    startup: list[float] = []
    upstream: list[float] = []
    n_calls: list[int] = []
    try:
        for i in range(runs):
            work = tmp / f"{name}-{i}"
            work.mkdir()
            (work / "notes.txt").write_text("The word is heron.\n")
            run_id = Gateway.new_run_id()
            spec = RunSpec(
                workdir=work, route=gw.route(run=run_id), limits=Limits(wall_clock_s=300, max_steps=3)
            )
            started = time.time()
            try:
                result = await harness.run("Read notes.txt and tell me the word in it.", spec)
            except ConfigError as exc:
                return f"{NA} ({exc})"
            calls = [c for c in gw.calls(run=run_id) if c.status == "ok"]
            if result.error or result.infra_error or not calls:
                return (
                    f"run failed: {result.error or result.infra_error or 'no model call reached the gateway'}"
                )
            model_ms = sum(c.latency_ms for c in calls)
            tool_ms = sum(
                1000 * (t.ended_s - t.started_s)
                for t in result.tool_record
                if t.started_s is not None and t.ended_s is not None
            )
            per_call.append((1000 * result.elapsed_s - model_ms - tool_ms) / len(calls))
            startup.append(1000 * (min(_arrival_s(c.time) for c in calls) - started))
            upstream += [c.upstream_ms for c in calls]
            n_calls.append(len(calls))
    finally:
        await harness.close()
    return {
        "per_call_ms": statistics.median(per_call),
        "startup_ms": statistics.median(startup),
        "upstream_ms": statistics.median(upstream),
        "calls": n_calls,
    }


_CLIENT = """
import http.client, json, sys, time
port, n = int(sys.argv[1]), int(sys.argv[2])
body = json.dumps({"model": "assay", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 8})
c = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
out = []
for _ in range(n + 1):
    t = time.perf_counter()
    c.request("POST", "/v1/chat/completions", body=body, headers={"content-type": "application/json"})
    c.getresponse().read()
    out.append((time.perf_counter() - t) * 1000)
print(json.dumps(out[1:]))
"""


def fence_rows(calls: int, tmp: Path) -> list[tuple[str, float, float]] | str:
    """On a gateway with an instant scripted upstream, so the relay's cost is not lost in a model's noise."""
    reason = fence_available()
    if reason is not None:
        return f"{NA} ({reason})"
    work = tmp / "fenced"
    work.mkdir()

    def start_ms(argv: list[str]) -> float:
        times = []
        for _ in range(10):
            t = time.perf_counter()
            subprocess.run(argv, check=True, capture_output=True)
            times.append((time.perf_counter() - t) * 1000)
        return statistics.median(times)

    with Gateway(ScriptedModel({"default": {"text": "ok"}})) as gw, GatewayRelay(gw.port) as relay:
        client = ["python3", "-c", _CLIENT, str(gw.port), str(max(calls, 20))]
        outside = json.loads(subprocess.run(client, check=True, capture_output=True, text=True).stdout)
        inside_argv = fenced_command(client, work, allow_port=gw.port, relay=relay)
        done = subprocess.run(inside_argv, check=True, capture_output=True, text=True)
        inside = json.loads(done.stdout)
        start_relay = start_ms(fenced_command(["true"], work, allow_port=gw.port, relay=relay))
    return [
        ("start a command", start_ms(["true"]), start_ms(fenced_command(["true"], work))),
        ("start, with the gateway relay", start_ms(["true"]), start_relay),
        ("one gateway call", statistics.median(outside), statistics.median(inside)),
    ]


_AGENT = """
import json, sys, urllib.request
body = json.dumps({"model": sys.argv[2], "messages": [{"role": "user", "content": "Say one word."}],
                   "max_tokens": 8}).encode()
req = urllib.request.Request(sys.argv[1] + "/chat/completions", body, {"content-type": "application/json"})
print(json.loads(urllib.request.urlopen(req, timeout=300).read())["choices"][0]["message"]["content"])
"""


async def held_rows(gw: Gateway, runs: int, tmp: Path) -> dict[str, Any] | str:
    """One agent call, three ways: (wall time per run, median) and the model call's median upstream time."""
    work = tmp / "held"
    work.mkdir()
    (work / "agent.py").write_text(_AGENT)
    python = os.path.realpath(sys.executable)  # the real program: no version manager's shim to resolve
    fenced = fence_available() is None
    ways: dict[str, list[float]] = {"unfenced, no limits": [], "limits": []}
    if fenced:
        ways["limits + fence (default)"] = []
    upstream: list[float] = []
    for i in range(runs + 1):  # the first round warms the model and the page cache
        for way, times in ways.items():
            run_id = Gateway.new_run_id()
            route = gw.route(run=run_id)
            spec = RunSpec(workdir=work, route=route, limits=Limits(wall_clock_s=300), fence="fence" in way)
            env = run_env(spec)
            argv = [python, "agent.py", str(route.openai_base_url), route.model]
            if way == "unfenced, no limits":
                argv, limits = own_pids(argv), None
            elif way == "limits":
                argv, limits = own_pids(held(argv, spec.limits, work)), spec.limits
            else:
                argv, limits = fence_argv(spec, argv, env=env), spec.limits
            started = time.perf_counter()
            proc = await run_streaming(argv, cwd=work, env=env, wall_clock_s=300, limits=limits)
            wall = (time.perf_counter() - started) * 1000
            calls = [c for c in gw.calls(run=run_id) if c.status == "ok"]
            if proc.exit_code != 0 or len(calls) != 1:
                return f"run failed ({way}): exit {proc.exit_code}: {proc.stderr.strip()[-300:]}"
            if i:
                times.append(wall)
                upstream.append(calls[0].upstream_ms)
    return {
        "ways": {w: statistics.median(t) for w, t in ways.items()},
        "upstream_ms": statistics.median(upstream),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=2, help="agent runs per harness (default 2)")
    parser.add_argument("--calls", type=int, default=5, help="plain gateway calls per front (default 5)")
    parser.add_argument("--scripted-ms", type=float, default=None, help="a scripted upstream of N ms a call")
    parser.add_argument("--no-claude", action="store_true", help="leave Claude Code out")
    parser.add_argument("--load", type=int, default=0, help="busy loops to run meanwhile (other processes)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="agent-overhead-") as d, busy_loops(args.load):
        tmp = Path(d)
        spec, options = upstream_spec(args, tmp)
        print(
            f"{os.cpu_count()} cpus · {args.load} busy loops · load average {load_average():.2f} at the start"
        )
        with Gateway(spec, model_options=options) as gw:
            print(f"upstream: {gw.upstream.name}  (gateway {gw.url})")
            print("\ngateway, per model call (plain HTTP client):")
            print(
                f"  {'front':<16} {'model call':>11} {'in gateway':>11} {'hop':>11} {'overhead':>11}  share"
            )
            for label, s in gateway_rows(gw, args.calls):
                print(
                    f"  {label:<16} {_ms(s.upstream_ms)} {_ms(s.gateway_ms)} {_ms(s.hop_ms)} "
                    f"{_ms(s.overhead_ms)}  {_share(s.overhead_ms, s.upstream_ms)}"
                )
            print("\nharness, per model call (real agent runs through the gateway):")
            claude_opts = {
                "extra_args": [
                    "--tools",
                    "Read",
                    "--system-prompt",
                    "You are a helpful coding agent. Be brief.",
                ]
            }
            agents = [("reference", {}), ("claude-code", claude_opts)]
            for name, opts in agents:
                if name == "claude-code" and args.no_claude:
                    print(f"  {name:<12} left out (--no-claude)")
                    continue
                r = asyncio.run(harness_runs(gw, name, opts, args.runs, tmp))
                if isinstance(r, str):
                    print(f"  {name:<12} {r}")
                    continue
                print(
                    f"  {name:<12} harness {_ms(r['per_call_ms'])} = {_share(r['per_call_ms'], r['upstream_ms'])}"
                    f" of a {_ms(r['upstream_ms']).strip()} model call; before the first call "
                    f"{_ms(r['startup_ms']).strip()} a run; model calls per run {r['calls']}"
                )
            print("\nfence (bubblewrap), unfenced vs fenced:")
            rows = fence_rows(args.calls, tmp)
            if isinstance(rows, str):
                print(f"  {rows}")
            else:
                for label, plain, fenced in rows:
                    print(f"  {label:<30} {_ms(plain)} {_ms(fenced)}  (+{fenced - plain:.1f} ms)")
            print("\nlimits + default fence, one agent call (wall time of a run making one model call):")
            held = asyncio.run(held_rows(gw, max(args.runs, 1), tmp))
            if isinstance(held, str):
                print(f"  {held}")
            else:
                base = held["ways"]["unfenced, no limits"]
                for way, wall in held["ways"].items():
                    extra = wall - base
                    print(
                        f"  {way:<28} {_ms(wall)}  (+{extra:.1f} ms = {_share(extra, held['upstream_ms']).strip()}"
                        f" of a {_ms(held['upstream_ms']).strip()} model call)"
                    )
        print(f"\nload average {load_average():.2f} at the end")
    return 0


if __name__ == "__main__":
    sys.exit(main())
