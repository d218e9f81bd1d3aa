"""SWE-bench instances for ``eval tasks --suite swebench``: read, chosen, and written back as predictions.

Rows come from the pinned SWE-bench Verified parquet (downloaded and sha256-checked by the code search
benchmark's loader, cached under the work root) or from ``--dataset FILE`` (parquet or JSONL with the
SWE-bench columns); both are read by :func:`assay.evals._swebench_dataset.dataset_rows`.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from assay.errors import ConfigError

__all__ = [
    "PILOT",
    "SwebenchInstance",
    "dataset_file",
    "load_instances",
    "prediction_line",
    "read_prediction_lines",
    "read_predictions",
    "select_instances",
]

#: The default pilot: SWE-bench Verified instances of small, pure-Python repositories that install with
#: pip (no compiler, no conda, no system packages in their specs) and whose FAIL_TO_PASS lists are a test
#: or two, so one run grades in minutes: requests (three fixes of different kinds), flask and pytest. The
#: local grader needs each spec's Python on PATH (requests and pytest: 3.9; flask 2.3: 3.11); where it is
#: missing the instance is NOT_RUN with that reason, never guessed with another interpreter.
PILOT = (
    "psf__requests-1724",
    "psf__requests-2317",
    "psf__requests-5414",
    "pallets__flask-5014",
    "pytest-dev__pytest-7571",
)
_TEXT = ("instance_id", "repo", "base_commit", "problem_statement", "patch", "test_patch", "version")
_LISTS = ("FAIL_TO_PASS", "PASS_TO_PASS")
_EXTRA = ("test_patch", "version", "environment_setup_commit", "hints_text", "FAIL_TO_PASS", "PASS_TO_PASS")


@dataclass(frozen=True)
class SwebenchInstance:
    """One SWE-bench row; ``patch`` (the gold fix) is read only by the graders and the judge step."""

    instance_id: str
    repo: str
    base_commit: str
    problem_statement: str
    patch: str
    test_patch: str
    version: str
    FAIL_TO_PASS: list[str]
    PASS_TO_PASS: list[str]
    environment_setup_commit: str = ""
    hints_text: str = ""
    created_at: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    def row(self) -> dict[str, Any]:
        """The row in SWE-bench's own schema (the two test lists as JSON strings), for the official harness."""
        out = asdict(self)
        out.pop("extra")
        for key in _LISTS:
            out[key] = json.dumps(out[key])
        return out


def _test_list(value: Any, key: str, where: str) -> list[str]:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            raise ConfigError(f"{where}: {key} is not a JSON list of test names") from None
    if not isinstance(value, list) or not all(isinstance(t, str) for t in value):
        raise ConfigError(f"{where}: {key} must be a list of test names")
    return list(value)


def load_instances(path: Path) -> list[SwebenchInstance]:
    """The instances of a SWE-bench-format file; a bad row is a ConfigError naming the file and line/row."""
    from assay.evals._swebench_dataset import dataset_rows

    if not path.is_file():
        raise ConfigError(f"--dataset {path}: no such file")
    unit, rows = dataset_rows(path, _EXTRA)
    out: list[SwebenchInstance] = []
    seen: set[str] = set()
    for n, row in rows:
        where = f"{path} {unit} {n}"
        if not isinstance(row, dict):
            raise ConfigError(f"{where}: each {unit} must be an object")
        missing = [k for k in _TEXT if not isinstance(row.get(k), str) or not row.get(k)]
        missing += [k for k in _LISTS if row.get(k) is None]
        if missing:
            raise ConfigError(f"{where}: missing or empty SWE-bench field(s) {', '.join(missing)}")
        if row["instance_id"] in seen:
            raise ConfigError(f"{where}: duplicate instance_id {row['instance_id']!r}")
        seen.add(row["instance_id"])
        known = {*_TEXT, *_LISTS, "environment_setup_commit", "hints_text", "created_at"}
        out.append(
            SwebenchInstance(
                **{k: row[k] for k in _TEXT},
                FAIL_TO_PASS=_test_list(row["FAIL_TO_PASS"], "FAIL_TO_PASS", where),
                PASS_TO_PASS=_test_list(row["PASS_TO_PASS"], "PASS_TO_PASS", where),
                environment_setup_commit=str(row.get("environment_setup_commit") or ""),
                hints_text=str(row.get("hints_text") or ""),
                created_at=str(row.get("created_at") or ""),
                extra={k: v for k, v in row.items() if k not in known},
            )
        )
    if not out:
        raise ConfigError(f"--dataset {path}: no instances")
    return out


def dataset_file(dataset: str | Path | None, cache: Path, *, offline: bool) -> Path:
    """``--dataset FILE``, else the pinned SWE-bench Verified parquet in ``cache`` (downloaded and checked
    unless ``offline``; a missing cache under ``--offline`` is a one-line error naming the path and pin)."""
    from assay.evals._swebench_dataset import ensure_swebench_verified

    if dataset:
        return Path(dataset)
    return ensure_swebench_verified(cache, offline=offline)


def select_instances(
    instances: Sequence[SwebenchInstance],
    ids: Iterable[str] = (),
    *,
    sample: int | None = None,
    seed: int = 0,
) -> list[SwebenchInstance]:
    """``--instances`` by id (in the order given), or ``--sample N --seed S`` (the same N and seed always
    pick the same instances of the same file), else the :data:`PILOT`."""
    by_id = {i.instance_id: i for i in instances}
    wanted = [i for i in ids if i]
    if wanted and sample is not None:
        raise ConfigError("--instances and --sample choose instances two ways: give one of them")
    if sample is not None:
        if not 1 <= sample <= len(by_id):
            raise ConfigError(f"--sample {sample}: the dataset has {len(by_id)} instances")
        picked = random.Random(seed).sample(sorted(by_id), sample)
        return [by_id[i] for i in sorted(picked)]
    if not wanted:
        missing = [i for i in PILOT if i not in by_id]
        if missing:
            raise ConfigError(
                f"the default pilot's {', '.join(missing)} not in the dataset: give --instances or --sample"
            )
        wanted = list(PILOT)
    unknown = [i for i in wanted if i not in by_id]
    if unknown:
        raise ConfigError(f"--instances {','.join(unknown)}: not in the dataset ({len(by_id)} instances)")
    return [by_id[i] for i in dict.fromkeys(wanted)]


def prediction_line(instance_id: str, model: str, patch: str) -> str:
    """One line of ``predictions.jsonl`` in the official harness's schema."""
    row = {"instance_id": instance_id, "model_name_or_path": model, "model_patch": patch}
    return json.dumps(row, ensure_ascii=False) + "\n"


def read_prediction_lines(path: Path) -> list[dict[str, str]]:
    """Every line of ``predictions.jsonl`` in order (an instance run more than once has a line per attempt);
    a bad line is a ConfigError naming the file and line."""
    if not path.is_file():
        raise ConfigError(f"{path}: no predictions file (a swebench run writes predictions.jsonl)")
    out: list[dict[str, str]] = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ConfigError(f"not valid JSON ({exc.msg})", path=str(path), line=n) from None
        keys = ("instance_id", "model_name_or_path", "model_patch")
        if not isinstance(row, dict) or not all(isinstance(row.get(k), str) for k in keys):
            raise ConfigError(f"a prediction needs {', '.join(keys)} as strings", path=str(path), line=n)
        out.append({k: row[k] for k in keys})
    return out


def read_predictions(path: Path) -> dict[str, dict[str, str]]:
    """``predictions.jsonl`` by instance id (an instance's last line)."""
    return {row["instance_id"]: row for row in read_prediction_lines(path)}
