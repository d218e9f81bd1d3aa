"""`assay gateway` in a real subprocess: it serves a scripted upstream until Ctrl-C, logs each call to the
JSONL file it was given, and refuses a non-loopback host or an unreachable upstream with one line."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import httpx
from gateway_fakes import closed_port

from assay.agents.gateway import read_call_log

SCRIPT = "replies:\n  - text: Hello from the script\n    usage: {input_tokens: 6, output_tokens: 4}\n"


def assay(*args: str) -> list[str]:
    return [sys.executable, "-m", "assay", *args]


def test_gateway_serves_until_interrupted(tmp_path: Path) -> None:
    script = tmp_path / "script.yaml"
    script.write_text(SCRIPT)
    log = tmp_path / "calls.jsonl"
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    cmd = assay("gateway", "--port", "0", "--model", f"scripted/{script}", "--log", str(log))
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        assert first.startswith(f"gateway for scripted/{script} on http://127.0.0.1:"), first
        url = first.split(" on ", 1)[1].split()[0]
        lines = [proc.stdout.readline().strip() for _ in range(3)]
        assert lines == [
            f"OpenAI base URL:    {url}/v1",
            f"Anthropic base URL: {url}",
            f"system rewrite: off   log: {log}",
        ]
        answer = httpx.post(
            f"{url}/v1/chat/completions", json={"model": "m", "messages": [{"role": "user", "content": "hi"}]}
        ).json()
        assert answer["choices"][0]["message"]["content"] == "Hello from the script"
        usage = httpx.get(f"{url}/assay/usage").json()
        tokens = usage["usage"]
        assert (tokens["input_tokens"], tokens["output_tokens"], usage["ok_calls"]) == (6, 4, 1)
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=15) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    (record,) = read_call_log(log)
    assert (record.status, record.output_tokens, record.front) == ("ok", 4, "openai")


def test_gateway_refuses_bad_setups_with_one_line(tmp_path: Path) -> None:
    script = tmp_path / "script.yaml"
    script.write_text(SCRIPT)
    public = subprocess.run(
        assay("gateway", "--host", "0.0.0.0", "--model", f"scripted/{script}"), capture_output=True, text=True
    )
    assert public.returncode == 1
    assert public.stderr.strip().splitlines() == [
        "error: --host '0.0.0.0': the gateway holds the upstream key and serves loopback only"
    ]
    down = subprocess.run(
        assay("gateway", "--port", "0", "--model", f"openai-compat/m@http://127.0.0.1:{closed_port()}/v1"),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert down.returncode == 3, down.stderr
    (line,) = down.stderr.strip().splitlines()
    assert line.startswith("error: openai-compat: cannot connect to") and "check the URL" in line


def test_gateway_is_public_and_loaded_only_when_used() -> None:
    code = (
        "import sys, assay.agents as a\n"
        "before = 'starlette' in sys.modules\n"
        "from assay.agents import Gateway\n"
        "from assay.agents.gateway import Gateway as G\n"
        "print(before, Gateway is G, 'starlette' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["False", "True", "True"]
