"""The local SWE-bench grader: the instance's environment in a venv, built from the ``swebench`` package's
own specs, and its FAIL_TO_PASS / PASS_TO_PASS tests run and parsed with swebench's own parser for the repo.

It follows swebench's eval script: the model patch applied (the same three ways the harness tries), the
repository installed, the test files reset to the base commit, the test patch applied, ``test_cmd`` run on
the files the test patch touches, and the result folded by swebench's ``get_eval_tests_report`` and
``get_resolution_status`` into a ``report.json`` of the official shape. A repository or version swebench has
no spec for may be given one in a repo spec file (``--repo-specs``); one it has may not be replaced there.
What it cannot build here (conda, system packages, a Python this machine lacks) is NOT_RUN with the reason.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assay.errors import ConfigError, MissingDependencyError

if TYPE_CHECKING:
    from assay.evals.tasks._swebench_data import SwebenchInstance

__all__ = ["LocalSpec", "NotBuildable", "grade_local", "load_repo_specs", "local_spec"]

#: the keys a repo spec file's entry may hold (those of swebench's own specs this grader reads)
SPEC_KEYS = {
    "python",
    "install",
    "test_cmd",
    "packages",
    "pip_packages",
    "pre_install",
    "eval_commands",
    "log_parser",
}
INSTALL_TIMEOUT_S = 1800
TEST_TIMEOUT_S = 1800
_SYSTEM = ("apt", "conda", "yum", "dnf", "apk ", "sudo")


class NotBuildable(Exception):
    """This machine cannot build the instance's environment; the message says why (NOT_RUN)."""


@dataclass(frozen=True)
class LocalSpec:
    repo: str
    version: str
    spec: dict[str, Any]
    parser: Any
    source: str  # "swebench" or the repo spec file


def _swebench() -> Any:
    try:
        from swebench.harness import constants
    except ImportError:
        raise MissingDependencyError("swebench", "swebench") from None
    if not hasattr(constants, "MAP_REPO_VERSION_TO_SPECS"):
        raise ConfigError(
            "the installed swebench has no MAP_REPO_VERSION_TO_SPECS: install 'swebench>=4.1,<5'"
        )
    return constants


def load_repo_specs(path: Path | None) -> dict[str, dict[str, dict[str, Any]]]:
    """A repo spec file: ``{"owner/name": {"version": {spec}}}`` for repositories swebench has no spec for."""
    if path is None:
        return {}
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"--repo-specs {path}: cannot be read ({exc.strerror})") from None
    except json.JSONDecodeError as exc:
        raise ConfigError(f"not valid JSON ({exc.msg})", path=str(path), line=exc.lineno) from None
    known = _swebench().MAP_REPO_VERSION_TO_SPECS
    if not isinstance(data, dict):
        raise ConfigError("a repo spec file maps owner/name to {version: spec}", path=str(path))
    for repo, versions in data.items():
        if not isinstance(versions, dict):
            raise ConfigError(f"{repo}: expected {{version: spec}}", path=str(path))
        for version, spec in versions.items():
            where = f"{repo} {version}"
            if version in known.get(repo, {}):
                raise ConfigError(
                    f"{where}: swebench has its own spec for it; a repo spec file only adds", path=str(path)
                )
            if not isinstance(spec, dict) or not {"install", "test_cmd", "log_parser"} <= set(spec):
                raise ConfigError(f"{where}: a spec needs install, test_cmd and log_parser", path=str(path))
            unknown = set(spec) - SPEC_KEYS
            if unknown:
                raise ConfigError(f"{where}: unknown key(s) {', '.join(sorted(unknown))}", path=str(path))
    return data


def _parser_named(name: str, where: str) -> Any:
    from swebench.harness.log_parsers import python as parsers

    fn = getattr(parsers, name, None) if name.startswith("parse_log_") else None
    if not callable(fn):
        raise ConfigError(f"{where}: log_parser {name!r} is not one of swebench's Python log parsers")
    return fn


def local_spec(repo: str, version: str, extra: dict[str, dict[str, dict[str, Any]]]) -> LocalSpec:
    """swebench's spec and log parser for ``repo`` at ``version``, else the repo spec file's; NotBuildable
    when neither has one."""
    constants = _swebench()
    from swebench.harness.log_parsers import MAP_REPO_TO_PARSER

    own = constants.MAP_REPO_VERSION_TO_SPECS.get(repo, {}).get(version)
    if own is not None:
        if repo not in MAP_REPO_TO_PARSER:
            raise NotBuildable(f"swebench has no log parser for {repo}")
        return LocalSpec(repo, version, dict(own), MAP_REPO_TO_PARSER[repo], "swebench")
    given = extra.get(repo, {}).get(version)
    if given is None:
        raise NotBuildable(f"no spec for {repo} {version} in swebench or in --repo-specs")
    return LocalSpec(
        repo, version, dict(given), _parser_named(given["log_parser"], f"{repo} {version}"), "repo-specs"
    )


def _run(cmd: str, cwd: Path, env: dict[str, str], timeout: float) -> tuple[int, str]:
    try:
        done = subprocess.run(
            ["bash", "-c", cmd],
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            errors="replace",
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        return 124, f"timed out after {timeout:.0f} s: {cmd}"
    return done.returncode, done.stdout + done.stderr


def _requirements(repo_dir: Path, repo: str, commit: str) -> str:
    """requirements.txt at ``commit`` as swebench reads it (its paths, ``-r`` includes, its clean-up), from the
    local repository instead of the network."""
    from swebench.harness.constants import MAP_REPO_TO_REQS_PATHS
    from swebench.harness.test_spec.python import clean_requirements

    def show(path: str) -> str | None:
        done = subprocess.run(
            ["git", "show", f"{commit}:{path}"], cwd=repo_dir, capture_output=True, text=True
        )
        return done.stdout if done.returncode == 0 else None

    for req_path in MAP_REPO_TO_REQS_PATHS.get(repo, ["requirements.txt"]):
        text = show(req_path)
        if text is not None:
            break
    else:
        raise NotBuildable(f"{repo}: no requirements file at {commit[:12]}")
    skip = ("-e .", "#", ".[test")
    base = str(Path(req_path).parent).replace(".", "") if "/" in req_path else ""
    lines: list[str] = []
    for line in text.splitlines():
        if line.strip().startswith("-r"):
            included = show(str(Path(base) / line.strip()[2:].strip()))
            lines += [x for x in (included or "").splitlines() if not x.strip().startswith(skip)]
        elif not line.strip().startswith(skip):
            lines.append(line)
    return clean_requirements("\n".join(lines))


def _env_for(venv: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    env["VIRTUAL_ENV"] = str(venv)
    return env


def build_env(spec: LocalSpec, repo_dir: Path, env_commit: str, env_root: Path) -> Path:
    """The venv of ``spec`` (cached under ``env_root`` by what goes into it); NotBuildable with the reason."""
    s = spec.spec
    if str(s.get("packages", "")).strip() == "environment.yml":
        raise NotBuildable(f"{spec.repo} {spec.version}: its spec builds a conda environment.yml")
    for step in s.get("pre_install", []) or []:
        if any(word in step for word in _SYSTEM):
            raise NotBuildable(
                f"{spec.repo} {spec.version}: a pre_install step needs the system: {step[:120]}"
            )
    version = str(s.get("python", "")).strip()
    python = shutil.which(f"python{version}") if version else None
    if python is None:
        raise NotBuildable(f"{spec.repo} {spec.version}: its spec needs Python {version or '?'}, not on PATH")
    reqs = _requirements(repo_dir, spec.repo, env_commit) if s.get("packages") == "requirements.txt" else ""
    key = hashlib.sha256(
        json.dumps([spec.repo, spec.version, s, reqs, python], sort_keys=True).encode()
    ).hexdigest()
    venv = env_root / f"{spec.repo.replace('/', '__')}-{spec.version}-{key[:12]}"
    if (venv / "ready").is_file():
        return venv
    shutil.rmtree(venv, ignore_errors=True)
    venv.parent.mkdir(parents=True, exist_ok=True)
    steps = [f"{python} -m venv {venv}"]
    pip = f"{venv / 'bin' / 'python'} -m pip install --disable-pip-version-check -q"
    if reqs.strip():
        (venv.parent / f"{venv.name}.requirements.txt").write_text(reqs, encoding="utf-8")
        steps.append(f"{pip} -r {venv.parent / f'{venv.name}.requirements.txt'}")
    elif str(s.get("packages", "")).strip():
        steps.append(f"{pip} {s['packages']}")
    if s.get("pip_packages"):
        steps.append(f"{pip} " + " ".join(f"'{p}'" for p in s["pip_packages"]))
    for step in steps:
        code, out = _run(step, env_root, _env_for(venv), INSTALL_TIMEOUT_S)
        if code != 0:
            shutil.rmtree(venv, ignore_errors=True)
            raise NotBuildable(
                f"{spec.repo} {spec.version}: environment step failed: {step}: {out.strip()[-600:]}"
            )
    (venv / "ready").write_text("ok\n", encoding="utf-8")
    return venv


def _apply(repo_dir: Path, patch: str, name: str, env: dict[str, str]) -> tuple[bool, str]:
    """Apply ``patch`` the ways the official harness tries, in order; (applied, log)."""
    from swebench.harness.run_evaluation import GIT_APPLY_CMDS

    path = repo_dir.parent / name
    path.write_text(patch if patch.endswith("\n") else patch + "\n", encoding="utf-8")
    log = ""
    for cmd in GIT_APPLY_CMDS:
        code, out = _run(f"{cmd} {path}", repo_dir, env, 120)
        log += f"$ {cmd} {name}\n{out}"
        if code == 0:
            return True, log
        _run("git checkout -q -- . && git clean -fdq", repo_dir, env, 120)
    return False, log


def grade_local(
    instance: SwebenchInstance, patch: str, repo_dir: Path, spec: LocalSpec, env_root: Path, out_dir: Path
) -> dict[str, Any]:
    """Grade ``patch`` on ``instance`` in ``repo_dir`` (a checkout at the base commit, changed here); writes
    ``test_output.txt`` and returns the official-shape report entry. NotBuildable when the env cannot be made."""
    from swebench.harness.constants import (
        END_TEST_OUTPUT,
        FAIL_ONLY_REPOS,
        FAIL_TO_PASS,
        PASS_TO_PASS,
        START_TEST_OUTPUT,
        EvalType,
        ResolvedStatus,
    )
    from swebench.harness.grading import get_eval_tests_report, get_resolution_status
    from swebench.harness.test_spec.python import get_test_directives
    from swebench.harness.utils import get_modified_files

    venv = build_env(spec, repo_dir, instance.environment_setup_commit or instance.base_commit, env_root)
    env = _env_for(venv)
    report: dict[str, Any] = {
        "patch_is_None": False,
        "patch_exists": bool(patch.strip()),
        "patch_successfully_applied": False,
        "resolved": False,
    }
    log = ""
    if patch.strip():
        applied, log = _apply(repo_dir, patch, "model.patch", env)
        if not applied:
            _write(out_dir, log + "\n>>>>> Patch Apply Failed\n")
            return report
    report["patch_successfully_applied"] = True
    s = spec.spec
    for step in [*(s.get("pre_install") or []), s["install"]]:
        code, out = _run(step, repo_dir, env, INSTALL_TIMEOUT_S)
        log += f"$ {step}\n{out}"
        if code != 0:
            _write(out_dir, log)
            raise NotBuildable(f"{spec.repo} {spec.version}: install failed ({step}): {out.strip()[-600:]}")
    tests = get_modified_files(instance.test_patch)
    reset = f"git checkout {instance.base_commit} -- {' '.join(tests)}" if tests else "true"
    _run(reset, repo_dir, env, 120)
    ok, apply_log = _apply(repo_dir, instance.test_patch, "test.patch", env)
    log += apply_log
    if not ok:
        _write(out_dir, log)
        raise NotBuildable(f"{instance.instance_id}: the test patch does not apply at the base commit")
    directives = get_test_directives(instance.row())
    test_cmd = " ".join([s["test_cmd"], *directives])
    script = "\n".join([*(s.get("eval_commands") or []), test_cmd])
    code, out = _run(script, repo_dir, env, TEST_TIMEOUT_S)
    log += f"{START_TEST_OUTPUT}\n{out}\n{END_TEST_OUTPUT}\n"
    _write(out_dir, log)
    status_map = spec.parser(out, None)
    eval_type = EvalType.FAIL_ONLY if instance.repo in FAIL_ONLY_REPOS else EvalType.PASS_AND_FAIL
    gold = {FAIL_TO_PASS: instance.FAIL_TO_PASS, PASS_TO_PASS: instance.PASS_TO_PASS}
    tests_status = get_eval_tests_report(status_map, gold, eval_type=eval_type)
    report["resolved"] = get_resolution_status(tests_status) == ResolvedStatus.FULL.value
    report["tests_status"] = tests_status
    report["test_exit_code"] = code
    return report


def _write(out_dir: Path, log: str) -> None:
    from assay._util import Scrubber, write_scrubbed

    out_dir.mkdir(parents=True, exist_ok=True)
    write_scrubbed(out_dir / "test_output.txt", log, Scrubber())
