"""The agent's environment: no provider key or token, the toolchain first on PATH, the route to the gateway."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from assay.agents._env import GATEWAY_PLACEHOLDER_KEY, agent_env, is_secret_env_name
from assay.agents._harness import Route
from assay.errors import ConfigError

PLANTED = {
    "ANTHROPIC_API_KEY": "sk-ant-planted-0123456789abcdefghij",
    "OPENAI_API_KEY": "sk-planted-0123456789abcdefghijklmn",
    "MY_SERVICE_TOKEN": "tok-planted-0123456789",
    "DB_PASSWORD": "hunter2-planted",
    "AWS_SECRET_ACCESS_KEY": "aws-planted-0123456789",
    "AWS_ACCESS_KEY_ID": "AKIAPLANTED012345678",
    "ANTHROPIC_BASE_URL": "https://provider.example.invalid",
    "GOOGLE_APPLICATION_CREDENTIALS": "/root/planted.json",
    "HF_TOKEN": "hf_planted0123456789",
    "HTTPS_PROXY": "http://proxy.example.invalid:3128",
}
HOST = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "TERM": "dumb", **PLANTED}


def test_planted_keys_never_reach_the_agent_process() -> None:
    env = agent_env(HOST)
    # the real thing: a child process run with this environment sees none of the planted names or values
    seen = subprocess.run(
        [sys.executable, "-c", "import os, json; print(json.dumps(dict(os.environ)))"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    for name, value in PLANTED.items():
        assert name not in seen
        assert value not in seen
    assert env["LANG"] == "C.UTF-8" and env["TERM"] == "dumb"


def test_route_points_clients_at_the_gateway_with_a_placeholder_key() -> None:
    route = Route(
        model="m", openai_base_url="http://127.0.0.1:4010/v1", anthropic_base_url="http://127.0.0.1:4010"
    )
    env = agent_env(HOST, route=route)
    assert env["OPENAI_BASE_URL"] == "http://127.0.0.1:4010/v1"
    assert env["ANTHROPIC_BASE_URL"] == "http://127.0.0.1:4010"
    assert env["ANTHROPIC_API_KEY"] == env["OPENAI_API_KEY"] == GATEWAY_PLACEHOLDER_KEY
    assert PLANTED["ANTHROPIC_API_KEY"] not in env.values()
    assert "127.0.0.1" in env["NO_PROXY"]


def test_toolchain_first_on_path_and_its_venv_named(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "pyvenv.cfg").write_text("home = /usr/bin\n")
    gh_dir = tmp_path / "gh"
    base = {**HOST, "VIRTUAL_ENV": "/host/venv", "PATH": "/host/venv/bin:/usr/bin:/bin", "PYTHONPATH": "/src"}
    env = agent_env(base, toolchain=[venv / "bin", gh_dir])
    assert env["PATH"].split(":") == [str(venv / "bin"), str(gh_dir), "/usr/bin", "/bin"]
    assert env["VIRTUAL_ENV"] == str(venv)
    assert "PYTHONPATH" not in env


def test_extra_may_not_copy_a_dropped_secret_back_in() -> None:
    assert (
        agent_env(HOST, extra={"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"})[
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"
        ]
        == "1"
    )
    with pytest.raises(ConfigError, match="AGENT_KEY would carry the value of OPENAI_API_KEY"):
        agent_env(HOST, extra={"AGENT_KEY": PLANTED["OPENAI_API_KEY"]})


@pytest.mark.parametrize(
    ("name", "secret"),
    [
        ("ANTHROPIC_API_KEY", True),
        ("ANTHROPIC_AUTH_TOKEN", True),
        ("OPENAI_ORG_ID", True),
        ("GITHUB_TOKEN", True),
        ("MY_SERVICE_TOKEN", True),
        ("SMTP_PASSWORD", True),
        ("SSH_AUTH_SOCK", True),
        ("AZURE_OPENAI_ENDPOINT", True),
        ("GIT_AUTHOR_NAME", False),
        ("KEYBOARD_LAYOUT", False),
        ("PATH", False),
        ("LANG", False),
    ],
)
def test_secret_names(name: str, secret: bool) -> None:
    assert is_secret_env_name(name) is secret
