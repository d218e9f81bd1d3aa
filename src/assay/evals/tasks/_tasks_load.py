"""Loading ``eval/tasks/tasks.json``: the tasks, their suites, and the files they name.

JSON is read with the YAML line loader (JSON is YAML), so every problem is a ConfigError naming the file and
line: bad JSON, an unknown or mistyped field, a question with an ``expect`` block, a coding task without
one, a duplicate id, a suite naming an unknown task, a missing required suite, or a planted test or probe
that is not in the tasks folder. The folder layout::

    eval/tasks/tasks.json      the tasks and suites
    eval/tasks/toybox/         the project every task starts from
    eval/tasks/planted/        files setups plant (red tests), never in the agent's copy until planted
    eval/tasks/probes/         the probes (read only after the agent exits)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import ValidationError

from assay.errors import ConfigError
from assay.evals._yaml_lines import line_at, load_with_lines, validation_error
from assay.evals.tasks._task import TasksFile

__all__ = [
    "PLANTED_DIR",
    "PROBES_DIR",
    "REQUIRED_SUITES",
    "TOYBOX_DIR",
    "default_tasks_dir",
    "load_tasks",
]

TOYBOX_DIR = "toybox"
PLANTED_DIR = "planted"
PROBES_DIR = "probes"
REQUIRED_SUITES = ("core", "adversarial", "full", "everyday")


def default_tasks_dir() -> Path:
    """``eval/tasks`` of the working directory, else of the source checkout this package lives in."""
    here = Path.cwd() / "eval" / "tasks"
    if (here / "tasks.json").is_file():
        return here
    return Path(__file__).resolve().parents[4] / "eval" / "tasks"


def load_tasks(path: Path | str | None = None) -> TasksFile:
    """The tasks file at ``path`` (default ``<default_tasks_dir()>/tasks.json``), validated against the folder
    it sits in. Raises ConfigError naming the file and line of the first problem."""
    file = Path(path) if path is not None else default_tasks_dir() / "tasks.json"
    shown = str(file)
    try:
        text = file.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read the tasks file: {exc.strerror or exc}", path=shown) from exc
    try:
        data, key_lines = load_with_lines(text, shown)  # JSON is YAML: the same loader gives the lines
    except ConfigError as exc:
        problem = str(exc).split("invalid YAML: ", 1)[-1]
        raise ConfigError(f"invalid JSON: {problem}", path=shown, line=exc.line) from exc
    if not isinstance(data, dict):
        raise ConfigError("the tasks file must be a JSON object", path=shown, line=1)
    suites = data.get("suites")
    if isinstance(suites, dict):
        suites.pop("__line__", None)  # its keys are suite names, not fields
    try:
        tasks = TasksFile.model_validate(data)
    except ValidationError as exc:
        raise validation_error(exc, shown, data, key_lines) from exc

    def at(*loc: Any) -> int | None:
        return line_at(data, loc, key_lines)

    seen: dict[str, int] = {}
    for i, task in enumerate(tasks.tasks):
        if task.id in seen:
            raise ConfigError(
                f"task id {task.id!r} is also used by task {seen[task.id] + 1}",
                path=shown,
                line=at("tasks", i, "id"),
            )
        seen[task.id] = i
    for name in REQUIRED_SUITES:
        if name not in tasks.suites:
            raise ConfigError(f"suite {name!r} is missing", path=shown, line=at("suites"))
    for name, ids in tasks.suites.items():
        for j, task_id in enumerate(ids):
            if task_id not in seen:
                raise ConfigError(
                    f"suite {name!r} names unknown task {task_id!r}",
                    path=shown,
                    line=at("suites", name, j),
                )
    root = file.parent
    if not (root / TOYBOX_DIR).is_dir():
        raise ConfigError(f"the project folder {TOYBOX_DIR}/ is not next to the tasks file", path=shown)
    for i, task in enumerate(tasks.tasks):
        for k, setup in enumerate(task.setup):
            if setup.file is not None and not (root / PLANTED_DIR / setup.file).is_file():
                raise ConfigError(
                    f"task {task.id!r}: planted file {PLANTED_DIR}/{setup.file} does not exist",
                    path=shown,
                    line=at("tasks", i, "setup", k, "file"),
                )
        probe = task.expect.probe if task.expect is not None else None
        if probe is not None and not (root / PROBES_DIR / probe).is_file():
            raise ConfigError(
                f"task {task.id!r}: probe {PROBES_DIR}/{task.expect.probe} does not exist",
                path=shown,
                line=at("tasks", i, "expect", "probe"),
            )
    return tasks
