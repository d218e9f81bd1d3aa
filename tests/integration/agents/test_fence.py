"""The fence with the real bubblewrap: what a fenced agent process can and cannot see, write and reach.

Each test also runs the same probe unfenced where that shows the probe itself works (so a pass means the fence
held, not that the probe was broken)."""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from assay.agents._env import agent_env, bare_venv
from assay.agents._gh import install_gh, read_gh_log
from assay.agents._harness import Route, RunSpec
from assay.agents.fence import (
    GatewayRelay,
    fence_argv,
    fence_available,
    fenced_command,
    require_fence,
    route_ports,
)
from assay.errors import ConfigError

GH_FIXTURES = Path(__file__).parents[2] / "fixtures" / "agents" / "gh"
ANSWER = "the-gold-answer-42"


def _run(argv: list[str], **kw) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, capture_output=True, text=True, timeout=30, **kw)


@pytest.fixture(scope="module", autouse=True)
def _bwrap_works() -> None:
    # not a skip: a machine where the fence cannot run fails these tests with the reason
    reason = fence_available()
    assert reason is None, reason


@pytest.fixture
def task(tmp_path: Path) -> dict[str, Path]:
    work = tmp_path / "work"
    work.mkdir()
    (work / "main.py").write_text("print('hello')\n")
    answers = tmp_path / "answers"
    answers.mkdir()
    (answers / "expected.txt").write_text(ANSWER)
    other = tmp_path / "other-task"
    other.mkdir()
    (other / "notes.txt").write_text("another task's work")
    return {"work": work, "answer": answers / "expected.txt", "other": other / "notes.txt", "root": tmp_path}


def _listener(tag: bytes) -> Iterator[int]:
    srv = socket.create_server(("127.0.0.1", 0))
    stop = threading.Event()

    def serve() -> None:
        srv.settimeout(0.2)
        while not stop.is_set():
            try:
                conn, _ = srv.accept()
            except TimeoutError:
                continue
            with conn:
                conn.sendall(tag + b":" + conn.recv(100))

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    yield srv.getsockname()[1]
    stop.set()
    t.join()
    srv.close()


@pytest.fixture
def gateway_port() -> Iterator[int]:
    yield from _listener(b"gateway")


@pytest.fixture
def other_port() -> Iterator[int]:
    yield from _listener(b"other")


def test_cannot_read_the_answer_key_or_another_tasks_workdir(task) -> None:
    probe = f"cat {task['answer']}; cat {task['other']}; ls {task['root']}"
    unfenced = _run(["sh", "-c", probe])
    assert ANSWER in unfenced.stdout  # the probe reads it when nothing stops it
    fenced = _run(fenced_command(["sh", "-c", probe], task["work"], env=agent_env()))
    assert ANSWER not in fenced.stdout and "another task" not in fenced.stdout
    assert "No such file or directory" in fenced.stderr
    # only the workdir is there, from its parent down
    assert fenced.stdout.split() == ["work"]
    code = f"print(open({str(task['answer'])!r}).read())"
    py = _run(fenced_command(["python3", "-c", code], task["work"], env=agent_env()))
    assert py.returncode == 1 and "FileNotFoundError" in py.stderr and ANSWER not in py.stdout


def test_hidden_paths_inside_the_workdir_are_absent(task) -> None:
    work = task["work"]
    (work / "solution").mkdir()
    (work / "solution" / "patch.diff").write_text(ANSWER)
    (work / "probe.txt").write_text(ANSWER)
    argv = ["sh", "-c", "ls solution; cat solution/patch.diff probe.txt main.py"]
    done = _run(fenced_command(argv, work, hide=[work / "solution", work / "probe.txt"], env=agent_env()))
    assert ANSWER not in done.stdout
    assert "print('hello')" in done.stdout  # the rest of the workdir is intact
    assert (work / "probe.txt").read_text() == ANSWER  # hiding changes nothing outside


def test_writes_land_in_the_workdir_only(task) -> None:
    work, root = task["work"], task["root"]
    probe = (
        "echo made > new.txt && echo ok-workdir; "
        f"echo x > {root}/escaped.txt; "
        "echo x > /usr/escaped.txt || echo no-usr; "
        "echo x > /etc/passwd || echo no-etc; "
        "echo x > /tmp/scratch.txt && echo ok-tmp"
    )
    done = _run(fenced_command(["sh", "-c", probe], work, env=agent_env()))
    assert done.stdout.split() == ["ok-workdir", "no-usr", "no-etc", "ok-tmp"], done.stderr
    assert (work / "new.txt").read_text() == "made\n"
    # the workdir's parents inside are the sandbox's own empty tmpfs: a write there never reaches the host
    assert not (root / "escaped.txt").exists()
    assert not Path("/tmp/scratch.txt").exists()  # the fenced /tmp is its own


def test_no_provider_key_even_when_the_harness_has_them(task, monkeypatch) -> None:
    planted = {
        "ANTHROPIC_API_KEY": "sk-ant-fence-planted-0123456789abcdef",
        "OPENAI_API_KEY": "sk-fence-planted-0123456789abcdefgh",
        "MY_SERVICE_TOKEN": "tok-fence-planted-0123456789",
    }
    for k, v in planted.items():
        monkeypatch.setenv(k, v)
    argv = fenced_command(["env"], task["work"], env=agent_env())
    # bwrap itself is started with the harness's full environment: --clearenv keeps it out of the sandbox
    done = _run(argv, env=os.environ.copy())
    assert done.returncode == 0
    for k, v in planted.items():
        assert k not in done.stdout and v not in done.stdout
    assert "HOME=/home/agent" in done.stdout.splitlines()


def test_only_the_gateway_port_answers(task, gateway_port, other_port) -> None:
    code = (
        "import socket, json\nout = {}\n"
        f"for p in ({gateway_port}, {other_port}):\n"
        "    try:\n"
        "        s = socket.create_connection(('127.0.0.1', p), timeout=5); s.sendall(b'ping')\n"
        "        out[p] = s.recv(100).decode()\n"
        "    except OSError as e:\n"
        "        out[p] = type(e).__name__\n"
        "print(json.dumps(out))"
    )
    unfenced = json.loads(_run([sys.executable, "-c", code]).stdout)
    assert unfenced == {str(gateway_port): "gateway:ping", str(other_port): "other:ping"}
    with GatewayRelay(gateway_port) as relay:
        argv = fenced_command(["python3", "-c", code], task["work"], allow_port=gateway_port, relay=relay)
        done = _run(argv)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {
        str(gateway_port): "gateway:ping",
        str(other_port): "ConnectionRefusedError",
    }
    # no allowed port: nothing answers at all
    closed = _run(fenced_command(["python3", "-c", code], task["work"]))
    assert set(json.loads(closed.stdout).values()) == {"ConnectionRefusedError"}


def test_fence_argv_for_a_harness_uses_the_routes_port_and_keeps_the_exit_code(task, gateway_port) -> None:
    route = Route(model="m", openai_base_url=f"http://127.0.0.1:{gateway_port}/v1")
    off = RunSpec(workdir=task["work"], route=route)
    assert fence_argv(off, ["agent", "--go"]) == ["agent", "--go"]
    spec = RunSpec(workdir=task["work"], route=route, fence=True, env={"AGENT_MODE": "eval"})
    code = (
        "import os, socket, urllib.parse as u\n"
        "url = u.urlsplit(os.environ['OPENAI_BASE_URL'])\n"
        "s = socket.create_connection((url.hostname, url.port), timeout=5); s.sendall(b'hi')\n"
        "print(s.recv(100).decode(), os.environ['AGENT_MODE']); raise SystemExit(3)"
    )
    argv = fence_argv(spec, ["python3", "-c", code])
    assert argv[0].endswith("bwrap")
    done = _run(argv)
    assert done.returncode == 3, done.stderr
    assert done.stdout.split() == ["gateway:hi", "eval"]


def test_gh_stand_in_works_inside_the_fence_and_logs_there(task) -> None:
    tools = task["root"] / "toolchain"
    gh = install_gh(tools, GH_FIXTURES, task["root"] / "gh-log" / "calls.jsonl")
    env = agent_env(toolchain=[gh.bin_dir])
    argv = fenced_command(
        ["sh", "-c", "gh issue view 12 --json title; gh issue close 12"],
        task["work"],
        binds_ro=gh.binds_ro,
        binds_rw=gh.binds_rw,
        env=env,
    )
    done = _run(argv)
    assert json.loads(done.stdout) == {"title": "parse_date accepts 2023-02-30"}
    assert "writes are refused" in done.stderr and done.returncode == 1
    assert [(c.argv[1:3], c.refused) for c in read_gh_log(gh.log)] == [
        (["issue", "view"], False),
        (["issue", "close"], True),
    ]


def test_host_venv_and_project_are_absent(task) -> None:
    code = (
        "import importlib.util, os, sys\n"
        "print(importlib.util.find_spec('assay') is None, importlib.util.find_spec('pydantic') is None)\n"
        f"print(os.path.exists({sys.prefix!r}), os.path.exists({str(Path(__file__).parents[3])!r}))"
    )
    done = _run(fenced_command(["python3", "-c", code], task["work"], env=agent_env()))
    assert done.stdout.split() == ["True", "True", "False", "False"], done.stderr


def test_fence_unavailable_without_bwrap_is_one_line(tmp_path: Path) -> None:
    reason = fence_available(path=str(tmp_path))
    assert reason is not None and "bubblewrap is not installed" in reason and "\n" not in reason
    with pytest.raises(ConfigError, match=r"^--fence: bubblewrap is not installed"):
        require_fence(path=str(tmp_path))


def test_route_must_be_a_loopback_gateway() -> None:
    assert route_ports(
        Route(model="m", openai_base_url="http://127.0.0.1:81/v1", anthropic_base_url="http://localhost:81")
    ) == [81]
    with pytest.raises(ConfigError, match="not a loopback gateway"):
        route_ports(Route(model="m", openai_base_url="https://api.example.invalid/v1"))


class _Echo(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive: several requests on one relayed connection

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        out = hashlib.sha256(body).hexdigest().encode() + b" " + str(len(body)).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)

    def log_message(self, *args: object) -> None:
        pass


def test_http_through_the_relay_keeps_bodies_whole_and_connections_alive(task) -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Echo)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    port = server.server_address[1]
    code = (
        "import hashlib, http.client, os\n"
        f"c = http.client.HTTPConnection('127.0.0.1', {port}, timeout=10)\n"
        "for size in (10, 3_000_000):\n"
        "    body = os.urandom(size)\n"
        "    c.request('POST', '/v1/chat/completions', body=body)\n"
        "    r = c.getresponse().read().decode()\n"
        "    print(r == f'{hashlib.sha256(body).hexdigest()} {size}')\n"
    )
    try:
        with GatewayRelay(port) as relay:
            done = _run(fenced_command(["python3", "-c", code], task["work"], allow_port=port, relay=relay))
    finally:
        server.shutdown()
    assert done.stdout.split() == ["True", "True"], done.stderr


def test_killing_the_fence_ends_everything_inside(task) -> None:
    # what a harness's time cap does: kill bwrap; a background child of the agent must not live on
    beat = task["work"] / "beat.txt"
    argv = fenced_command(
        ["sh", "-c", "(while :; do date +%s%N >> beat.txt; sleep 0.05; done) & wait"], task["work"]
    )
    proc = subprocess.Popen(argv)
    deadline = time.monotonic() + 10
    while (not beat.exists() or beat.read_text().count("\n") < 3) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert beat.read_text().count("\n") >= 3
    proc.kill()
    proc.wait(timeout=10)
    time.sleep(0.3)
    lines = beat.read_text().count("\n")
    time.sleep(0.5)
    assert beat.read_text().count("\n") == lines


@pytest.mark.parametrize("where", ["/tmp", "/", "venv-parent"])
def test_a_workdir_that_would_bind_shared_folders_is_refused(where: str) -> None:
    path = Path(sys.prefix).parent if where == "venv-parent" else Path(where)
    with pytest.raises(
        ConfigError, match=r"^--workdir .*(too wide to fence|contains the Python running assay)"
    ):
        fenced_command(["true"], path)


def test_a_bare_task_venv_and_gh_are_the_whole_toolchain(task) -> None:
    venv_bin = bare_venv(task["root"] / "task-venv")
    gh = install_gh(task["root"] / "gh-bin", GH_FIXTURES, task["root"] / "gh.jsonl")
    spec = RunSpec(workdir=task["work"], fence=True)
    code = (
        "import importlib.util, sys; "
        "print(sys.prefix, importlib.util.find_spec('pydantic') is None, importlib.util.find_spec('pip') is None)"
    )
    argv = fence_argv(
        spec,
        ["sh", "-c", f"command -v python; python -c {shlex.quote(code)}; gh pr list"],
        toolchain=[venv_bin, gh.bin_dir],
        binds_ro=[gh.fixtures],
        binds_rw=gh.binds_rw,
    )
    done = _run(argv)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == str(venv_bin / "python")  # the task's venv is first on PATH
    assert lines[1] == f"{venv_bin.parent} True True"  # and has nothing in it
    assert lines[2].startswith("15\tReject impossible dates")
    assert [c.argv for c in read_gh_log(gh.log)] == [["gh", "pr", "list"]]


def test_fence_unavailable_when_bwrap_cannot_make_namespaces(tmp_path: Path) -> None:
    # a bwrap that fails the way it does in a container without user namespaces
    fake = tmp_path / "bwrap"
    fake.write_text("#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n")
    fake.chmod(0o755)
    reason = fence_available(path=str(tmp_path))
    assert reason == "bubblewrap cannot create namespaces here: bwrap: No permissions to create new namespace"


def test_the_runs_own_toolchain_is_bound_too(task) -> None:
    venv_bin = bare_venv(task["root"] / "run-venv")
    spec = RunSpec(workdir=task["work"], fence=True)
    spec.toolchain = [venv_bin]  # type: ignore[attr-defined]  # RunSpec.toolchain, where the contract has it
    env = agent_env(toolchain=[venv_bin])  # a harness that builds the environment itself
    done = _run(fence_argv(spec, ["python", "-c", "import sys; print(sys.prefix)"], env=env))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(venv_bin.parent)
