"""Loading agent scenarios: ``<dir>/<category>/<id>.yaml``, documents in ``<dir>/_documents/``.

Every problem is a ConfigError naming the file and line: bad YAML, an unknown or mistyped field, a category
that is not the scenario's folder, a document that is not there, a ground truth naming a document the setup
does not index, a ``script`` that does not give one list of agent replies per turn. Duplicate ids are refused
naming both files. Drafts (``draft: true`` or under ``<dir>/drafts/<category>/``) load only when asked.
"""

from __future__ import annotations

import hashlib
import warnings
from pathlib import Path, PurePosixPath
from typing import Any, get_args

from pydantic import ValidationError

from assay.agents.record import ToolKind
from assay.errors import ConfigError
from assay.evals._yaml_lines import (
    KeyLines,
    LineError,
    line_at,
    load_with_lines,
    refuse_duplicate_ids,
    validation_error,
)
from assay.evals.agent._scenario import CATEGORIES, Scenario

__all__ = [
    "DOCUMENTS_DIR",
    "DRAFTS_DIR",
    "ScenarioWarning",
    "default_scenarios_dir",
    "load_scenario",
    "load_scenarios",
]

DOCUMENTS_DIR = "_documents"
DRAFTS_DIR = "drafts"
#: mappings whose keys are data, not fields (the loader's ``__line__`` is taken out of them)
_PLAIN = (
    ("user_knowledge",),
    ("setup", "files"),
    ("script", "agent"),
    ("script", "simulator"),
    ("script", "judge"),
)


class ScenarioWarning(UserWarning):
    """A scenario that loads but lacks something a shipped one should have (source, rationale, category)."""


def default_scenarios_dir() -> Path:
    """``eval/scenarios`` of the working directory, else of the source checkout this package lives in."""
    here = Path.cwd() / "eval" / "scenarios"
    if here.is_dir():
        return here
    return Path(__file__).resolve().parents[4] / "eval" / "scenarios"


def _root_of(path: Path) -> Path:
    """The scenarios folder a scenario file belongs to (``<root>/<category>/x.yaml`` or under ``drafts/``)."""
    root = path.parent.parent
    return root.parent if root.name == DRAFTS_DIR else root


def _unline(value: Any) -> None:
    """Take ``__line__`` out of ``value`` in place (the key lines stay, keyed by the same objects)."""
    if isinstance(value, dict):
        value.pop("__line__", None)
        for v in value.values():
            _unline(v)
    elif isinstance(value, list):
        for v in value:
            _unline(v)


def _at(data: dict[str, Any], key_lines: KeyLines, *loc: Any) -> int | None:
    return line_at(data, tuple(loc), key_lines)


def _document_problem(name: str) -> str | None:
    parts = PurePosixPath(name).parts
    if not name or name.startswith("/") or "\\" in name or ".." in parts:
        return f"document name {name!r} must be a file name under {DOCUMENTS_DIR}/ (no '..', not absolute)"
    return None


def _check_script(scenario: Scenario, data: dict[str, Any], key_lines: KeyLines) -> None:
    from assay.agents.reference.harness import ALL_TOOLS
    from assay.models.scripted import ScriptedReply

    script = scenario.script
    if script is None:
        return
    n = len(scenario.turns)
    if len(script.agent) != n:
        raise LineError(
            _at(data, key_lines, "script", "agent") or script.line,
            f"script.agent has {len(script.agent)} list(s) of replies; the scenario has {n} turn(s) (one list each)",
        )
    if script.simulator is not None and len(script.simulator) != n:
        raise LineError(
            _at(data, key_lines, "script", "simulator") or script.line,
            f"script.simulator has {len(script.simulator)} list(s); the scenario has {n} turn(s) (one list each)",
        )
    for t, replies in enumerate(script.agent):
        where = f"script.agent[{t}]"
        if not replies:
            raise LineError(
                _at(data, key_lines, "script", "agent", t), f"{where}: no replies for turn {t + 1}"
            )
        for r, raw in enumerate(replies):
            line = _at(data, key_lines, "script", "agent", t, r)
            try:
                reply = ScriptedReply.model_validate(raw)
            except ValidationError as exc:
                first = exc.errors()[0]
                loc = ".".join(str(x) for x in first["loc"])
                raise LineError(line, f"{where}[{r}].{loc}: {first['msg']}") from exc
            for call in reply.tool_calls:
                if call.name not in ALL_TOOLS:
                    raise LineError(
                        line,
                        f"{where}[{r}]: tool {call.name!r} is not a reference agent tool "
                        f"({', '.join(sorted(ALL_TOOLS))})",
                    )
            last = r == len(replies) - 1
            if last and reply.tool_calls and reply.error is None:
                raise LineError(
                    line,
                    f"{where}: the last reply of turn {t + 1} calls tools; end the turn with a text answer",
                )


def _check(scenario: Scenario, path: Path, data: dict[str, Any], key_lines: KeyLines, root: Path) -> None:
    folder = path.parent.name
    if scenario.category != folder:
        raise LineError(
            _at(data, key_lines, "category") or 1,
            f"category {scenario.category!r} is not the folder the scenario is in ({folder!r})",
        )
    if scenario.id != path.stem:
        raise LineError(
            _at(data, key_lines, "id") or 1, f"id {scenario.id!r} differs from the file name {path.name!r}"
        )
    names: set[str] = set()
    for i, doc in enumerate(scenario.setup.documents):
        line = _at(data, key_lines, "setup", "documents", i) or doc.line
        problem = _document_problem(doc.name)
        if problem:
            raise LineError(line, problem)
        if doc.name in names:
            raise LineError(line, f"document {doc.name!r} is listed twice in setup.documents")
        names.add(doc.name)
        if doc.text is None and not (root / DOCUMENTS_DIR / doc.name).is_file():
            raise LineError(line, f"document {doc.name!r} not found in {root / DOCUMENTS_DIR}")
    for i, turn in enumerate(scenario.turns):
        gt = turn.ground_truth
        if gt is not None and gt.document is not None and gt.document not in names:
            listed = ", ".join(sorted(names)) or "none"
            raise LineError(
                _at(data, key_lines, "turns", i, "ground_truth", "document") or gt.line,
                f"turns[{i}].ground_truth.document {gt.document!r} is not in setup.documents ({listed})",
            )
    kinds = set(get_args(ToolKind))
    for field in ("expected_tools", "forbidden_tools"):
        for j, name in enumerate(getattr(scenario, field)):
            if name.startswith("kind:") and name[5:] not in kinds:
                raise LineError(
                    _at(data, key_lines, field, j) or 1,
                    f"{field}: {name!r} names no tool kind ({', '.join(sorted(kinds))})",
                )
    overlap = sorted(set(scenario.expected_tools) & set(scenario.forbidden_tools))
    if overlap:
        raise LineError(
            _at(data, key_lines, "forbidden_tools") or 1, f"{', '.join(overlap)} both expected and forbidden"
        )
    _check_end_state(scenario, data, key_lines)
    _check_script(scenario, data, key_lines)


def _check_end_state(scenario: Scenario, data: dict[str, Any], key_lines: KeyLines) -> None:
    from assay.evals.agent._end_state import workdir_path_problem

    end = scenario.end_state
    for i, fc in enumerate(end.file_contains):
        problem = workdir_path_problem(fc.path) or (None if fc.text.strip() else "text is empty")
        if problem:
            line = _at(data, key_lines, "end_state", "file_contains", i) or fc.line or 1
            raise LineError(line, f"end_state.file_contains[{i}]: {problem}")
    for i, rel in enumerate(end.file_unchanged):
        if rel not in scenario.setup.files:
            listed = ", ".join(sorted(scenario.setup.files)) or "none"
            raise LineError(
                _at(data, key_lines, "end_state", "file_unchanged", i) or end.line or 1,
                f"end_state.file_unchanged: {rel!r} is not one of setup.files ({listed})",
            )


def load_scenario(path: Path, root: Path | None = None) -> Scenario:
    """Parse and validate one scenario file; ``root`` is its scenarios folder (default: inferred from ``path``)."""
    path = Path(path)
    root = _root_of(path) if root is None else root
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read the scenario: {exc.strerror or exc}", path=str(path)) from exc
    data, key_lines = load_with_lines(text, str(path))
    if not isinstance(data, dict):
        raise ConfigError(
            "a scenario is a mapping with id, category, persona and turns", path=str(path), line=1
        )
    for loc in _PLAIN:
        node: Any = data
        for part in loc:
            node = node.get(part) if isinstance(node, dict) else None
        _unline(node)
    try:
        scenario = Scenario.model_validate(data)
        _check(scenario, path, data, key_lines, root)
    except ValidationError as exc:
        raise validation_error(exc, path, data, key_lines) from exc
    except LineError as exc:
        raise ConfigError(str(exc), path=str(path), line=exc.line) from exc
    if path.parent.parent.name == DRAFTS_DIR:
        scenario.draft = True
    if scenario.category not in CATEGORIES:
        warnings.warn(
            f"{path}: category {scenario.category!r} is not one the suite covers ({', '.join(CATEGORIES)})",
            ScenarioWarning,
            stacklevel=2,
        )
    if not scenario.draft:
        missing = [f for f in ("source", "difficulty_rationale") if getattr(scenario, f) is None]
        if missing:
            warnings.warn(
                f"{path}: a non-draft scenario without {' or '.join(missing)}", ScenarioWarning, stacklevel=2
            )
    digest = hashlib.sha256(text.encode())
    for doc in scenario.setup.documents:
        body = doc.text.encode() if doc.text is not None else (root / DOCUMENTS_DIR / doc.name).read_bytes()
        digest.update(b"\0" + doc.name.encode() + b"\0" + body)
    scenario.path = str(path)
    scenario.digest = digest.hexdigest()[:12]
    return scenario


def _category_dirs(directory: Path, include_drafts: bool) -> list[Path]:
    found: list[Path] = []
    for child in sorted(directory.iterdir()):
        if child.name.startswith((".", "__")) or not child.is_dir():
            if child.suffix in (".yaml", ".yml") and child.is_file():
                raise ConfigError(
                    "a scenario belongs in a category folder (<dir>/<category>/<id>.yaml)", path=str(child)
                )
            continue
        if child.name == DOCUMENTS_DIR:
            continue
        if child.name == DRAFTS_DIR:
            if include_drafts:
                found += [d for d in sorted(child.iterdir()) if d.is_dir() and not d.name.startswith(".")]
            continue
        found.append(child)
    return found


def load_scenarios(directory: Path, include_drafts: bool = False) -> list[Scenario]:
    """Every ``<directory>/<category>/*.yaml`` scenario, sorted by category then file; ids must be unique."""
    directory = Path(directory)
    if not directory.is_dir():
        raise ConfigError("agent scenario directory not found (--scenarios DIR)", path=str(directory))
    scenarios: list[Scenario] = []
    for folder in _category_dirs(directory, include_drafts):
        for file in sorted(folder.iterdir()):
            if file.suffix == ".yml":
                raise ConfigError("scenario files end in .yaml (rename it)", path=str(file))
            if file.suffix != ".yaml" or not file.is_file():
                continue
            scenario = load_scenario(file, root=directory)
            if scenario.draft and not include_drafts:
                continue
            scenarios.append(scenario)
    if not scenarios:
        raise ConfigError("no <category>/*.yaml agent scenarios here", path=str(directory))
    refuse_duplicate_ids(scenarios)
    return scenarios
