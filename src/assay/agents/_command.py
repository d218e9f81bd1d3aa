"""The ``command`` harness: any CLI agent from a template, ``"aider --yes --message {prompt}"``.

The template is split like a shell line, then each word filled in (so a prompt is always one argument, never
shell syntax): ``{prompt}``, ``{workdir}``, ``{model}``, ``{openai_base_url}``, ``{anthropic_base_url}``,
``{output_dir}`` (a fresh folder for the agent's logs, read by the parser), ``{max_steps}`` (0 when unlimited),
``{mcp_config}`` (the scenario's world as an MCP config file, Claude Code's format; see :mod:`assay.agents.world`).
A template without ``{prompt}`` gets the prompt on stdin. The agent runs in the workdir with the shared agent
environment (no provider key; ``OPENAI_BASE_URL``/``OPENAI_API_BASE`` and a placeholder key on the route), as a
process group stopped at the wall clock. Its exit code is kept. A ``parser`` (see
:mod:`assay.agents.transcripts`) reads its log into the tool record; without one the record is "answer only"
and the answer is its stdout.

Where the route leads to the model gateway, the gateway's count of the run's calls fills the usage and the model
that ran when the agent's log has none, an upstream outage behind a failed run is its ``infra_error``, and
``Limits.max_tokens`` is enforced by stopping the agent once the gateway has counted more (give each run its
own route, ``gateway.route(run=...)``, when runs share a gateway). ``Limits.max_steps`` reaches the agent
through ``{max_steps}``, and a benchmark holds every harness to it at the gateway
(:func:`assay.agents.run_step_capped`).

With ``RunSpec.fence`` it runs under bubblewrap (:mod:`assay.agents.fence`): the workdir and the output folder
read-write, the program's own install read-only, the gateway's port its only network.

Presets (``agent="mini-swe-agent"``) carry a template, a parser and the project-local install.
"""

from __future__ import annotations

import dataclasses
import json
import shlex
import shutil
import string
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assay.agents._cliproc import OwnGateway, contain, gateway_usage, held, run_streaming, summarize
from assay.agents._env import run_env
from assay.agents._harness import Harness, RunSpec
from assay.agents._pidns import own_pids
from assay.agents.record import AgentResult
from assay.agents.transcripts import TranscriptInput, get_parser
from assay.agents.world import WORLD_LOG
from assay.agents.world.kinds import WORLD_SERVER
from assay.errors import ConfigError

PLACEHOLDERS = (
    "prompt",
    "workdir",
    "model",
    "openai_base_url",
    "anthropic_base_url",
    "output_dir",
    "max_steps",
    "mcp_config",
)
_ANSWER_CAP = 20_000
_REPO_ROOT = Path(__file__).resolve().parents[3]


@dataclass(frozen=True)
class Preset:
    template: str
    parser: str
    #: the project-local folder the program is installed in (relative to the checkout or the cwd)
    bin_dir: str
    install: str
    env: dict[str, str] = field(default_factory=dict)
    #: the program speaks MCP: a run with a world gets it through ``World.codex_args`` before the last word
    codex_mcp: bool = False


PRESETS: dict[str, Preset] = {
    "mini-swe-agent": Preset(
        template=(
            "mini --model openai/{model} --task {prompt} --yolo --exit-immediately -o {output_dir}/trajectory.json"
            " -c mini.yaml -c agent.step_limit={max_steps} -c agent.cost_limit=0"
        ),
        parser="mini-swe-agent",
        bin_dir=".cache/venvs/mini-swe-agent/bin",
        install="python3 -m venv .cache/venvs/mini-swe-agent && .cache/venvs/mini-swe-agent/bin/pip install mini-swe-agent==2.4.6",
        # offline: litellm's bundled price list, no setup wizard, no cost lookups for a local model
        env={
            "LITELLM_LOCAL_MODEL_COST_MAP": "True",
            "MSWEA_CONFIGURED": "true",
            "MSWEA_COST_TRACKING": "ignore_errors",
        },
    ),
    "aider": Preset(
        template=(
            "aider --model openai/{model} --yes-always --no-git --no-auto-commits --no-check-update"
            " --analytics-disable --no-show-model-warnings --no-pretty --no-stream"
            " --chat-history-file {output_dir}/history.md --input-history-file {output_dir}/input.txt"
            " --message {prompt}"
        ),
        parser="aider-history",
        bin_dir=".cache/venvs/aider/bin",
        install="python3 -m venv .cache/venvs/aider && .cache/venvs/aider/bin/pip install aider-chat==0.86.2",
    ),
    # Codex speaks OpenAI's Responses API (POST {openai_base_url}/responses) to a provider named on the line
    "codex": Preset(
        template=(
            "codex exec --json --skip-git-repo-check --dangerously-bypass-approvals-and-sandbox -m {model}"
            " -c model_provider=assay -c model_providers.assay.name=assay"
            " -c model_providers.assay.base_url={openai_base_url} -c model_providers.assay.env_key=OPENAI_API_KEY"
            " -c model_providers.assay.wire_api=responses {prompt}"
        ),
        parser="codex-json",
        bin_dir=".cache/npm/node_modules/.bin",
        install="npm install --prefix .cache/npm @openai/codex@0.171.0",
        codex_mcp=True,
    ),
}


def check_template(template: str) -> list[str]:
    """The template's words; ConfigError naming an unknown placeholder or an unparseable line."""
    try:
        words = shlex.split(template)
    except ValueError as exc:
        raise ConfigError(f"command harness template {template!r}: {exc}") from exc
    if not words:
        raise ConfigError("command harness: the template is empty")
    for word in words:
        try:
            fields = [f for _, f, _, _ in string.Formatter().parse(word) if f is not None]
        except ValueError as exc:
            raise ConfigError(
                f"command harness template {template!r}: {exc} (write a literal brace as {{{{)"
            ) from exc
        for name in fields:
            if name not in PLACEHOLDERS:
                raise ConfigError(
                    f"command harness template {template!r}: unknown placeholder {{{name}}} "
                    f"(known: {', '.join('{' + p + '}' for p in PLACEHOLDERS)})"
                )
    return words


def _from_gateway(result: AgentResult, counted: Any, *, failed: bool) -> None:
    """Fill what the agent's own log could not from the gateway's count of this run's calls."""
    if result.usage.calls == 0 and counted.calls:
        result.usage = counted.usage
    result.model_ran = result.model_ran or counted.model_ran
    if failed and counted.infra_errors:
        result.infra_error = counted.last_infra_error or "the model gateway's upstream failed"
        result.error = None


class CommandHarness(Harness):
    """Options: ``template`` (or ``target``, as in ``command:TEMPLATE``), ``agent`` (a preset), ``parser``,
    ``model`` (an ``assay.models`` spec: a run without a route gets a gateway of the harness's own)."""

    name = "command"

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        known = {"template", "target", "agent", "parser", "model"}
        unknown = set(options) - known
        if unknown:
            raise ConfigError(
                f"command harness: unknown option(s) {sorted(unknown)} (known: {sorted(known)})"
            )
        self.preset: Preset | None = None
        if options.get("agent"):
            if options["agent"] not in PRESETS:
                raise ConfigError(
                    f"command harness agent={options['agent']!r}: unknown (known: {', '.join(PRESETS)})"
                )
            self.preset = PRESETS[options["agent"]]
        target = options.get("target")
        if self.preset is None and target in PRESETS:  # `--harness command:mini-swe-agent` names a preset
            self.preset, target = PRESETS[str(target)], None
        template = options.get("template") or target or (self.preset.template if self.preset else None)
        if template is None:
            raise ConfigError(
                'command harness: give a template, e.g. command:"aider --yes --message {prompt}"'
            )
        self.template = str(template)
        self.words = check_template(self.template)
        parser = options.get("parser") or (self.preset.parser if self.preset else None)
        self.parser = get_parser(parser) if parser else None
        self._own_gateway = OwnGateway(str(options["model"])) if options.get("model") else None
        self.takes_world = "{mcp_config}" in self.template or bool(self.preset and self.preset.codex_mcp)

    def program(self, env: dict[str, str]) -> str:
        """The program to run, absolute; ConfigError naming how to install it."""
        name = self.words[0]
        if self.preset is not None:
            for root in (Path.cwd(), _REPO_ROOT):
                candidate = root / self.preset.bin_dir / name
                if candidate.is_file():  # its folder as it really is (.cache/ links to the machine's shared
                    return str(candidate.parent.resolve() / name)  # installs): the fence binds real paths
            found = shutil.which(name, path=env.get("PATH"))
            if found:
                return found
            raise ConfigError(
                f"command harness: {name!r} is not installed (install it: {self.preset.install})"
            )
        if "/" in name:
            if not Path(name).is_file():
                raise ConfigError(f"command harness template {self.template!r}: no such program {name!r}")
            return name
        found = shutil.which(name, path=env.get("PATH"))
        if not found:
            raise ConfigError(
                f"command harness template {self.template!r}: {name!r} is not on the agent's PATH"
            )
        return found

    def argv(
        self, prompt: str, spec: RunSpec, output_dir: Path, program: str, mcp_config: Path | None = None
    ) -> list[str]:
        route = spec.route
        values = {
            "prompt": prompt,
            "workdir": str(spec.workdir),
            "model": route.model if route else "",
            "openai_base_url": (route.openai_base_url if route else None) or "",
            "anthropic_base_url": (route.anthropic_base_url if route else None) or "",
            "output_dir": str(output_dir),
            "max_steps": str(spec.limits.max_steps or 0),
            "mcp_config": str(mcp_config or ""),
        }
        for needed in ("model", "openai_base_url", "anthropic_base_url"):
            if f"{{{needed}}}" in self.template and not values[needed]:
                raise ConfigError(
                    f"command harness template {self.template!r}: the run's route gives no {needed}"
                )
        if "{mcp_config}" in self.template and mcp_config is None:
            raise ConfigError(
                f"command harness template {self.template!r}: {{mcp_config}}, and the run gives no world to serve"
            )
        words = [w.format_map(values) for w in self.words[1:]]
        if mcp_config is not None and spec.world is not None and self.preset and self.preset.codex_mcp:
            words[-1:-1] = spec.world.codex_args(mcp_config)
        return [program, *words]

    async def run(self, prompt: str, spec: RunSpec) -> AgentResult:
        if not spec.workdir.is_dir():
            raise ConfigError(f"--workdir {spec.workdir}: not a directory")
        if spec.route is None and self._own_gateway is not None:
            spec = dataclasses.replace(spec, route=self._own_gateway.route())
        with tempfile.TemporaryDirectory(prefix="assay-command-") as tmp:
            output_dir, home = Path(tmp) / "out", Path(tmp) / "home"
            output_dir.mkdir()
            home.mkdir()
            env = run_env(spec, home=home, extra=self.preset.env if self.preset else None)
            program = self.program(env)
            config = None
            mcp_urls: list[str] = []
            if spec.world is not None and self.takes_world:
                stdio = bool(self.preset and self.preset.codex_mcp)  # Codex is given a command to start
                if spec.fence and stdio:
                    raise ConfigError(
                        "--fence: the scenario's tools are served inside the fence only over HTTP, not to Codex's"
                        " stdio server (--no-fence)"
                    )
                config = spec.world.mcp_config(
                    output_dir / "mcp.json", prompt=prompt, log=output_dir / WORLD_LOG, stdio=stdio
                )
                server = json.loads(config.read_text(encoding="utf-8"))["mcpServers"][WORLD_SERVER]
                mcp_urls = [server["url"]] if server.get("type") == "http" else []
            argv = self.argv(prompt, spec, output_dir, program, config)
            if spec.fence:
                from assay.agents._shims import resolve_program
                from assay.agents.fence import fence_argv

                # a version manager's shim is run as the real program it stands for (see _shims)
                argv[0], installs = resolve_program(program, path=env.get("PATH"), cwd=spec.workdir)
                # the script the template runs (``python3 /opt/agent.py {prompt}``), bound read-only, alone;
                # no other path it names is bound (an argument may be an answer key or a journal)
                script = script_word(self.words)
                if script is not None:
                    installs.append(Path(script))
                argv = fence_argv(
                    spec, argv, env=env, binds_ro=installs, binds_rw=[output_dir], home=home, urls=mcp_urls
                )
            else:  # unfenced, the eval's processes (and their environ) stay out of sight
                argv = own_pids(held(argv, spec.limits, spec.workdir))
            via_stdin = "{prompt}" not in self.template
            before = await gateway_usage(spec.route)
            since = before.calls if before is not None else 0
            cap = spec.limits.max_tokens
            if cap is not None and before is None:
                raise ConfigError(
                    "--max-tokens: the command harness caps tokens through the model gateway; this run's route leads to none"
                )

            async def over_cap() -> bool:
                counted = await gateway_usage(spec.route, since)
                return counted is not None and cap is not None and counted.usage.total_tokens > cap

            started_at = time.time()
            proc = await run_streaming(
                argv,
                cwd=spec.workdir,
                env=env,
                wall_clock_s=spec.limits.wall_clock_s,
                stdin=prompt.encode() if via_stdin else None,
                watch=over_cap if cap is not None else None,
                limits=spec.limits,
            )
            counted = await gateway_usage(spec.route, since) if before is not None else None
            result = AgentResult(harness=self.name, exit_code=proc.exit_code, elapsed_s=proc.elapsed_s)
            if self.parser is None:
                result.record_level = "answer_only"
                result.answer = "\n".join(proc.stdout_lines)[-_ANSWER_CAP:].strip()
            else:
                inp = TranscriptInput(
                    stdout=proc.stdout_lines,
                    stderr=proc.stderr,
                    workdir=spec.workdir,
                    output_dir=output_dir,
                    exit_code=proc.exit_code,
                    started_at=started_at,
                )
                parsed = self.parser(inp)
                result.answer = parsed.answer
                result.tool_record = parsed.tool_record
                result.transcript = parsed.transcript
                result.usage = parsed.usage
                result.model_ran = parsed.model_ran
                result.steps = parsed.steps
                result.cut_off = parsed.cut_off
                result.error = parsed.error
                result.session_id = parsed.session_id
        if counted is not None:
            _from_gateway(result, counted, failed=proc.exit_code not in (0, None) or result.error is not None)
        if proc.timed_out or proc.stopped:
            result.cut_off = "wall_clock" if proc.timed_out else "tokens"
            result.error = None
        elif (
            proc.exit_code not in (0, None)
            and result.error is None
            and result.cut_off is None
            and result.infra_error is None
        ):
            tail = proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else ""
            result.error = f"{Path(program).name} exited {proc.exit_code}" + (
                f": {summarize(tail, 300)}" if tail else ""
            )
        return contain(result, proc, spec.limits, fenced=spec.fence)

    async def close(self) -> None:
        if self._own_gateway is not None:
            self._own_gateway.close()


_NO_SCRIPT = frozenset({"-c", "-m", "-e", "--eval", "-p", "--print"})


def script_word(words: list[str]) -> str | None:
    """The file a command template's program runs: its first word after options, unless code is inline.

    Only an absolute path to an existing file with no placeholder counts; ``python3 -c CODE /x`` runs no script.
    """
    for word in words[1:]:
        if word in _NO_SCRIPT:
            return None
        if word.startswith("-"):
            continue
        path = Path(word)
        return word if "{" not in word and path.is_absolute() and path.is_file() else None
    return None
