"""The environment an agent under test runs with: no provider key, the task's toolchain first, the model route.

    env = agent_env(route=spec.route, toolchain=[venv / "bin", gh_dir], extra=spec.env)

Secret names follow the scrubber's one rule (``*_KEY``, ``*_TOKEN``, ``*_SECRET``, ``*PASSWORD*``, see
:mod:`assay._util._scrub`), widened by every provider's own prefix (``ANTHROPIC_*``, ``OPENAI_*``, ``AWS_*`` ...):
a provider variable that is not a key (a base URL, an org id) still points the agent somewhere other than the
gateway. The route then sets the base URLs to the gateway and a placeholder key clients insist on having.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path

from assay._util import looks_like_secret_name
from assay.agents._harness import Route, RunSpec
from assay.errors import ConfigError

#: variables of these prefixes configure a model provider or cloud account: none reaches an agent
PROVIDER_PREFIXES: tuple[str, ...] = (
    "ANTHROPIC_",
    "OPENAI_",
    "AZURE_",
    "AWS_",
    "GOOGLE_",
    "GCLOUD_",
    "GEMINI_",
    "VERTEX",
    "MISTRAL_",
    "COHERE_",
    "GROQ_",
    "TOGETHER_",
    "DEEPSEEK_",
    "OPENROUTER_",
    "FIREWORKS_",
    "PERPLEXITY_",
    "XAI_",
    "HF_",
    "HUGGING",
    "REPLICATE_",
    "CLAUDE_CODE_USE_",
)
_CREDENTIALISH = re.compile(r"CREDENTIAL|(^|_)AUTH($|_)|APIKEY|API_KEY", re.IGNORECASE)
#: the host's interpreter setup and proxies: the agent gets the toolchain it is given and loopback as is
_HOST_ONLY = {"PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "PYTHONUSERBASE", "VIRTUAL_ENV", "CONDA_PREFIX"}
_PROXY = re.compile(r"^(https?|all|ftp|no)_proxy$", re.IGNORECASE)

#: what the route puts in the key variables: clients refuse to start without one; the gateway ignores it
GATEWAY_PLACEHOLDER_KEY = "assay-gateway-holds-the-key"


def is_secret_env_name(name: str) -> bool:
    """True for a variable an agent must never see: a secret by the scrubber's rule, or a provider's setting."""
    upper = name.upper()
    return bool(
        looks_like_secret_name(name) or _CREDENTIALISH.search(name) or upper.startswith(PROVIDER_PREFIXES)
    )


def route_env(route: Route | None) -> dict[str, str]:
    """The variables that point OpenAI and Anthropic clients at the gateway."""
    if route is None:
        return {}
    env: dict[str, str] = {}
    if route.openai_base_url:
        env |= {
            "OPENAI_BASE_URL": route.openai_base_url,
            "OPENAI_API_BASE": route.openai_base_url,
            "OPENAI_API_KEY": GATEWAY_PLACEHOLDER_KEY,
        }
    if route.anthropic_base_url:
        env |= {"ANTHROPIC_BASE_URL": route.anthropic_base_url, "ANTHROPIC_API_KEY": GATEWAY_PLACEHOLDER_KEY}
    return env


def _host_venv_bins(base: Mapping[str, str]) -> set[str]:
    bins = set()
    if sys.prefix != sys.base_prefix:
        bins.add(str(Path(sys.prefix) / "bin"))
    if base.get("VIRTUAL_ENV"):
        bins.add(str(Path(base["VIRTUAL_ENV"]) / "bin"))
    return bins


#: folders never taken off an agent's PATH: the system's own (git, the shell; its python stays behind the venv)
SYSTEM_BIN_DIRS = ("/usr/bin", "/bin")
#: a PATH folder holding one of these gives the agent the host's Python (pyenv shims, conda, a venv)
_INTERPRETERS = ("python", "python3", "pip", "pip3")


def host_interpreter_dirs(base: Mapping[str, str], path: Iterable[str]) -> set[str]:
    """The PATH folders that would give an agent the host's Python rather than the venv it is handed: the
    venv running assay and ``VIRTUAL_ENV``'s ``bin``, the folders of this interpreter and its base, and any
    folder of ``path`` holding a ``python``/``pip`` program, except :data:`SYSTEM_BIN_DIRS`."""
    found = _host_venv_bins(base) | {str(Path(sys.prefix) / "bin"), str(Path(sys.base_prefix) / "bin")}
    for exe in (sys.executable, getattr(sys, "_base_executable", None) or sys.executable):
        found |= {str(Path(exe).parent), str(Path(os.path.realpath(exe)).parent)}
    for folder in path:
        if any(os.access(Path(folder) / name, os.X_OK) for name in _INTERPRETERS):
            found.add(folder)
    system = {os.path.realpath(d) for d in SYSTEM_BIN_DIRS}
    return {d for d in found if os.path.realpath(d) not in system}


def agent_env(
    base: Mapping[str, str] | None = None,
    *,
    extra: Mapping[str, str] | None = None,
    toolchain: Iterable[Path | str] = (),
    route: Route | None = None,
    home: Path | str | None = None,
) -> dict[str, str]:
    """``base`` (default: this process's environment) without secrets, provider settings, the host's venv
    and proxies; ``toolchain`` folders first on PATH (when one is a venv's ``bin``, every host interpreter
    folder of :func:`host_interpreter_dirs` leaves PATH too); the route's gateway variables; then ``extra``.

    ``extra`` is the harness's own (``RunSpec.env``): it may set any name, but a value that equals a secret
    dropped from ``base`` is refused (ConfigError naming the variable), so no key slips back in by copy.
    """
    base = os.environ if base is None else base
    dropped = {k: v for k, v in base.items() if is_secret_env_name(k)}
    env = {k: v for k, v in base.items() if k not in dropped and k not in _HOST_ONLY and not _PROXY.match(k)}
    tools = [str(Path(t).absolute()) for t in toolchain]
    path = [p for p in base.get("PATH", os.defpath).split(os.pathsep) if p]
    gives_python = any((Path(t).parent / "pyvenv.cfg").is_file() for t in tools)
    # handed a venv, the agent's only Python is that venv: the host's interpreter folders go too
    host_bins = host_interpreter_dirs(base, path) if gives_python else _host_venv_bins(base)
    path = [p for p in path if p not in host_bins]
    env["PATH"] = os.pathsep.join(dict.fromkeys([*tools, *path]))
    for tool in tools:
        venv = Path(tool).parent
        if (venv / "pyvenv.cfg").is_file():
            env["VIRTUAL_ENV"] = str(venv)
            break
    env |= route_env(route)
    env["NO_PROXY"] = env["no_proxy"] = "127.0.0.1,localhost,::1"
    if home is not None:
        env["HOME"] = str(home)
    secret_values = {v for v in dropped.values() if len(v) >= 8}
    for key, value in (extra or {}).items():
        if value in secret_values:
            source = next(k for k, v in dropped.items() if v == value)
            raise ConfigError(f"agent environment: {key} would carry the value of {source} (a secret)")
        env[key] = value
    return env


def run_env(
    spec: RunSpec,
    *,
    toolchain: Iterable[Path | str] = (),
    extra: Mapping[str, str] | None = None,
    home: Path | str | None = None,
) -> dict[str, str]:
    """The one rule every harness builds its agent's environment by: :func:`agent_env` with the run's
    toolchain (``spec.toolchain``, then the harness's own ``toolchain``) first on PATH, the run's route, and
    ``extra`` (the harness's defaults) overridden by ``spec.env``. With ``home``, that folder's login
    profile keeps the PATH too (see :func:`keep_path_in_login_shells`)."""
    env = agent_env(
        toolchain=[*spec.toolchain, *toolchain],
        route=spec.route,
        extra={**(extra or {}), **spec.env},
        home=home,
    )
    if home is not None:
        keep_path_in_login_shells(Path(home), env)
    return env


def keep_path_in_login_shells(home: Path, env: Mapping[str, str]) -> None:
    """A login shell (Codex CLI runs every command with ``bash -lc``) sources ``/etc/profile``, which sets PATH
    anew and drops the toolchain; the agent's own HOME profile, read after it, puts the run's PATH back."""
    lines = [f"export PATH={shlex.quote(env['PATH'])}"]
    if env.get("VIRTUAL_ENV"):
        lines.append(f"export VIRTUAL_ENV={shlex.quote(env['VIRTUAL_ENV'])}")
    text = "\n".join(lines) + "\n"
    for name in (".bash_profile", ".profile"):  # bash -l reads the first; sh -l the second
        (home / name).write_text(text, encoding="utf-8")


def bare_venv(path: Path | str, *, with_pip: bool = False) -> Path:
    """A venv with nothing installed, made from this machine's Python (not from the venv running assay):
    the toolchain a task that asks for one gets. Returns its ``bin`` folder (put it first with ``toolchain``)."""
    path = Path(path)
    python = os.path.realpath(getattr(sys, "_base_executable", None) or sys.executable)
    cmd = [python, "-I", "-m", "venv", *([] if with_pip else ["--without-pip"]), str(path)]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        why = (done.stderr.strip().splitlines() or [f"exit {done.returncode}"])[-1]
        raise ConfigError(f"toolchain venv {path}: could not be made ({why})")
    return path / "bin"
