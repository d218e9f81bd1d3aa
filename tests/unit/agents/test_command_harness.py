"""The ``command`` harness on real small programs: templates, environment, exit codes, the wall clock."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pytest

from assay.agents import Limits, Route, RunSpec, get_harness
from assay.agents._command import PRESETS, CommandHarness
from assay.agents._env import GATEWAY_PLACEHOLDER_KEY
from assay.errors import ConfigError

PY = sys.executable
DUMP = "import json, os, sys; print(json.dumps({'argv': sys.argv[1:], 'stdin': sys.stdin.read(), 'cwd': os.getcwd(), 'env': dict(os.environ)}))\n"
ROUTE = Route(model="m-7", openai_base_url="http://127.0.0.1:9/v1", anthropic_base_url="http://127.0.0.1:9")


@pytest.fixture
def dump(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A program that prints what it was given (kept outside the workdir)."""
    path = tmp_path_factory.mktemp("prog") / "dump.py"
    path.write_text(DUMP)
    return f"{PY} {path}"


async def _dump(tmp_path: Path, template: str, prompt: str = "fix it") -> tuple[dict, object]:
    r = await get_harness("command", template=template).run(prompt, RunSpec(workdir=tmp_path, route=ROUTE))
    return json.loads(r.answer), r


async def test_placeholders_fill_whole_words(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, dump: str
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-host-secret-value")
    prompt = 'it\'s {not} a "placeholder"; rm -rf /'
    data, r = await _dump(
        tmp_path, f"{dump} --message {{prompt}} --model={{model}} {{openai_base_url}}", prompt
    )
    assert data["argv"] == ["--message", prompt, "--model=m-7", "http://127.0.0.1:9/v1"]
    assert data["cwd"] == str(tmp_path) and data["stdin"] == ""
    env = data["env"]
    assert env["OPENAI_BASE_URL"] == env["OPENAI_API_BASE"] == "http://127.0.0.1:9/v1"
    assert env["OPENAI_API_KEY"] == GATEWAY_PLACEHOLDER_KEY
    assert "sk-host-secret-value" not in json.dumps(env)
    assert r.record_level == "answer_only" and r.exit_code == 0 and r.error is None
    assert r.usage.cost_usd is None and r.usage.total_tokens == 0


async def test_prompt_on_stdin_without_placeholder(tmp_path: Path, dump: str) -> None:
    data, _ = await _dump(tmp_path, f"{dump} {{workdir}}")
    assert data["stdin"] == "fix it" and data["argv"] == [str(tmp_path)]


async def test_exit_code_is_kept_and_is_an_error(tmp_path: Path) -> None:
    code = "import sys; print('partial'); sys.stderr.write('boom\\n'); sys.exit(4)"
    r = await get_harness(f'command:{PY} -c "{code}"').run("x", RunSpec(workdir=tmp_path))
    assert r.exit_code == 4 and r.answer == "partial"
    assert r.error == f"{Path(PY).name} exited 4: boom"


async def test_wall_clock_kills_the_whole_group(tmp_path: Path) -> None:
    # the grandchild is found by its arguments: the agent's own PIDs are its namespace's, not this one's
    naptime = f"60.{time.time_ns() % 10**9}"
    code = (
        f"import subprocess, sys, time; p = subprocess.Popen(['sleep', '{naptime}']); "
        "print('started', flush=True); time.sleep(60)"
    )
    started = time.monotonic()
    r = await get_harness("command", template=f'{PY} -c "{code}"').run(
        "x", RunSpec(workdir=tmp_path, limits=Limits(wall_clock_s=1.5))
    )
    assert r.cut_off == "wall_clock" and r.error is None and r.answer == "started"
    assert time.monotonic() - started < 8
    time.sleep(0.2)
    assert _running(["sleep", naptime]) == []  # the grandchild went with the group


def _running(argv: list[str]) -> list[int]:
    """Live (not zombie) processes of this PID namespace running exactly ``argv``."""
    found = []
    for proc in Path("/proc").iterdir():
        try:
            if proc.name.isdigit() and (proc / "cmdline").read_bytes().split(b"\0")[:-1] == [
                a.encode() for a in argv
            ]:
                state = (proc / "stat").read_text().rsplit(")", 1)[1].split()[0]
                if state not in ("Z", "X"):  # killed, waiting for init to reap it
                    found.append(int(proc.name))
        except OSError:
            continue
    return found


@pytest.mark.parametrize(
    ("template", "message"),
    [
        ("aider --msg {prompt} {temperature}", r"unknown placeholder \{temperature\}"),
        ("aider 'unclosed", "No closing quotation"),
        ("  ", "the template is empty"),
        ("echo {", "write a literal brace"),
    ],
)
def test_bad_templates(template: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        CommandHarness(template=template)


async def test_missing_program_and_route(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="'no-such-agent-xyz' is not on the agent's PATH"):
        await get_harness("command", template="no-such-agent-xyz {prompt}").run(
            "x", RunSpec(workdir=tmp_path)
        )
    with pytest.raises(ConfigError, match="the run's route gives no model"):
        await get_harness("command", template="echo {model}").run("x", RunSpec(workdir=tmp_path))


def test_bad_options() -> None:
    with pytest.raises(ConfigError, match="agent='nope': unknown"):
        CommandHarness(agent="nope")
    with pytest.raises(ConfigError, match="give a template"):
        CommandHarness()
    with pytest.raises(ConfigError, match="unknown option"):
        CommandHarness(template="echo", colour=1)
    with pytest.raises(ConfigError, match="parser='nope'"):
        CommandHarness(template="echo", parser="nope")


def test_preset_not_installed_names_the_install(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    h = CommandHarness(agent="mini-swe-agent")
    monkeypatch.setattr("assay.agents._command._REPO_ROOT", tmp_path)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError, match=r"pip install mini-swe-agent==2\.4\.6"):
        h.program({"PATH": str(tmp_path)})


async def test_fenced_run_sees_only_its_workdir(tmp_path_factory: pytest.TempPathFactory) -> None:
    workdir, answers = tmp_path_factory.mktemp("work"), tmp_path_factory.mktemp("answers")
    (answers / "key.txt").write_text("the answer key")
    script = f'echo made > made.txt; cat {answers / "key.txt"}; echo "key=$OPENAI_API_KEY"; exit 5'
    route = Route(model="m", openai_base_url="http://127.0.0.1:59999/v1")  # inside, no port under 1024 binds
    r = await get_harness("command", template="sh -c {prompt}").run(
        script, RunSpec(workdir=workdir, route=route, fence=True)
    )
    assert (workdir / "made.txt").read_text() == "made\n"
    assert "the answer key" not in r.answer and r.answer == f"key={GATEWAY_PLACEHOLDER_KEY}"
    assert r.exit_code == 5 and r.error is not None and "No such file" in r.error


def test_a_preset_is_named_through_the_harness_target() -> None:
    """`--harness command:mini-swe-agent` is the preset (its template and parser), not a command of that name."""
    by_target = get_harness("command:mini-swe-agent")
    by_option = get_harness("command", agent="mini-swe-agent")
    assert isinstance(by_target, CommandHarness) and isinstance(by_option, CommandHarness)
    assert by_target.preset is PRESETS["mini-swe-agent"]
    assert by_target.template == by_option.template and by_target.parser is by_option.parser


async def test_a_preset_linked_into_the_checkout_runs_fenced_at_its_real_path(
    monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """tests/install-agent-programs.sh links .cache/venvs/NAME to the machine's shared install: the fence binds
    the venv where it really is, so the program must be run from there (not through the checkout's link)."""
    checkout, shared, workdir = (tmp_path_factory.mktemp(n) for n in ("checkout", "shared", "work"))
    venv = shared / "mini-swe-agent-2.4.6"
    (venv / "bin").mkdir(parents=True)
    (venv / "pyvenv.cfg").write_text("home = /usr/bin\n")
    (venv / "bin" / "mini").write_text("#!/bin/sh\necho ran > ran.txt\n")
    (venv / "bin" / "mini").chmod(0o755)
    (checkout / ".cache" / "venvs").mkdir(parents=True)
    (checkout / ".cache" / "venvs" / "mini-swe-agent").symlink_to(venv)
    monkeypatch.setattr("assay.agents._command._REPO_ROOT", checkout)
    monkeypatch.chdir(checkout)
    h = CommandHarness(agent="mini-swe-agent")
    assert h.program({"PATH": ""}) == str(venv.resolve() / "bin" / "mini")
    route = Route(model="m", openai_base_url="http://127.0.0.1:59999/v1")  # inside, no port under 1024 binds
    r = await h.run("write a.py", RunSpec(workdir=workdir, route=route, fence=True))
    assert r.exit_code == 0, r.error  # 127 where the fence sees no such program
    assert (workdir / "ran.txt").read_text() == "ran\n"
