"""SWE-bench instances for eval tasks --suite swebench: read from the SWE-bench schema (JSONL or parquet),
chosen by id, by a seeded sample (the same N and seed pick the same ones) or as the pilot; predictions in
the official harness's schema; the agent's patch with new files; an offline missing cache is one line."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from assay.errors import ConfigError
from assay.evals._workspace import agent_patch
from assay.evals.tasks._swebench_data import (
    PILOT,
    dataset_file,
    load_instances,
    prediction_line,
    read_predictions,
    select_instances,
)


def _row(i: int, **over: object) -> dict[str, object]:
    row = {
        "repo": f"org/r{i % 3}",
        "instance_id": f"org__r{i % 3}-{i}",
        "base_commit": "0" * 40,
        "patch": "diff --git a/a.py b/a.py\n",
        "test_patch": "diff --git a/t.py b/t.py\n",
        "problem_statement": f"issue {i}",
        "hints_text": "",
        "created_at": "2024-01-01",
        "version": "1.0",
        "FAIL_TO_PASS": json.dumps([f"t.py::test_{i}"]),
        "PASS_TO_PASS": json.dumps([]),
        "environment_setup_commit": "1" * 40,
    }
    return {**row, **over}


def _jsonl(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_sample_is_the_same_for_the_same_n_and_seed(tmp_path: Path) -> None:
    inst = load_instances(_jsonl(tmp_path / "d.jsonl", [_row(i) for i in range(40)]))
    one = [i.instance_id for i in select_instances(inst, sample=5, seed=3)]
    again = [i.instance_id for i in select_instances(list(reversed(inst)), sample=5, seed=3)]
    assert one == again and len(set(one)) == 5  # the file's order does not matter either
    assert one != [i.instance_id for i in select_instances(inst, sample=5, seed=4)]
    with pytest.raises(ConfigError, match="--sample 41: the dataset has 40 instances"):
        select_instances(inst, sample=41)
    with pytest.raises(ConfigError, match="choose instances two ways"):
        select_instances(inst, ["org__r0-0"], sample=2)


def test_instances_by_id_and_the_pilot(tmp_path: Path) -> None:
    inst = load_instances(_jsonl(tmp_path / "d.jsonl", [_row(i) for i in range(6)]))
    assert [i.instance_id for i in select_instances(inst, ["org__r2-5", "org__r0-0"])] == [
        "org__r2-5",
        "org__r0-0",
    ]
    with pytest.raises(ConfigError, match="--instances nope-1: not in the dataset"):
        select_instances(inst, ["org__r0-0", "nope-1"])
    with pytest.raises(
        ConfigError, match=r"the default pilot's .* not in the dataset: give --instances or --sample"
    ):
        select_instances(inst)
    pilot = load_instances(
        _jsonl(tmp_path / "p.jsonl", [_row(i, instance_id=p) for i, p in enumerate(PILOT)])
    )
    assert [i.instance_id for i in select_instances(pilot)] == list(PILOT)


def test_swebench_schema_rows_and_errors_naming_the_line(tmp_path: Path) -> None:
    (inst,) = load_instances(_jsonl(tmp_path / "d.jsonl", [_row(7, extra_col="x")]))
    assert inst.FAIL_TO_PASS == ["t.py::test_7"] and inst.PASS_TO_PASS == []
    assert inst.row()["FAIL_TO_PASS"] == '["t.py::test_7"]' and inst.extra == {"extra_col": "x"}
    bad = _jsonl(tmp_path / "bad.jsonl", [_row(1), _row(2, FAIL_TO_PASS="[not json")])
    with pytest.raises(ConfigError, match=r"bad.jsonl line 2: FAIL_TO_PASS is not a JSON list"):
        load_instances(bad)
    bad = _jsonl(tmp_path / "bad2.jsonl", [_row(1, test_patch="")])
    with pytest.raises(
        ConfigError, match=r"bad2.jsonl line 1: missing or empty SWE-bench field\(s\) test_patch"
    ):
        load_instances(bad)


def test_parquet_rows_carry_the_extra_columns(tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = [_row(i) for i in range(3)]
    pq.write_table(pa.Table.from_pylist(rows), tmp_path / "d.parquet")
    got = load_instances(tmp_path / "d.parquet")
    assert [i.row() for i in got] == [
        load_instances(_jsonl(tmp_path / "d.jsonl", rows))[n].row() for n in range(3)
    ]


def test_offline_without_the_cached_pin_is_one_line(tmp_path: Path) -> None:
    from assay.evals._swebench_dataset import SWE_BENCH_VERIFIED, swebench_cache_path

    with pytest.raises(ConfigError) as err:
        dataset_file(None, tmp_path / "cache", offline=True)
    message = str(err.value)
    assert "\n" not in message and str(swebench_cache_path(tmp_path / "cache")) in message
    assert SWE_BENCH_VERIFIED["sha256"] in message
    assert not (tmp_path / "cache").exists()


def test_predictions_in_the_official_schema(tmp_path: Path) -> None:
    path = tmp_path / "predictions.jsonl"
    path.write_text(prediction_line("a__b-1", "reference/local/smollm2", "diff --git a/x b/x\n") + "\n")
    assert json.loads(path.read_text().splitlines()[0]) == {
        "instance_id": "a__b-1",
        "model_name_or_path": "reference/local/smollm2",
        "model_patch": "diff --git a/x b/x\n",
    }
    assert read_predictions(path)["a__b-1"]["model_patch"] == "diff --git a/x b/x\n"
    path.write_text(path.read_text() + '{"instance_id": "c"}\n')
    with pytest.raises(ConfigError, match="model_name_or_path, model_patch as strings"):
        read_predictions(path)


def test_agent_patch_holds_new_files_and_applies(tmp_path: Path) -> None:
    def git(*args: str, cwd: Path = tmp_path / "r") -> str:
        env = {
            "GIT_AUTHOR_NAME": "t",
            "GIT_AUTHOR_EMAIL": "t@x",
            "GIT_COMMITTER_NAME": "t",
            "GIT_COMMITTER_EMAIL": "t@x",
        }
        return subprocess.run(
            ["git", *args],
            cwd=cwd,
            env={**env, "PATH": "/usr/bin:/bin"},
            capture_output=True,
            text=True,
            check=True,
        ).stdout

    repo = tmp_path / "r"
    repo.mkdir()
    git("init", "-q")
    (repo / "a.py").write_text("x = 1\n")
    git("add", "-A")
    git("commit", "-q", "-m", "base")
    base = git("rev-parse", "HEAD").strip()
    assert agent_patch(repo, base) == ""  # nothing changed: the empty diff that fails at once
    (repo / "a.py").write_text("x = 2\n")
    (repo / "pkg").mkdir()
    (repo / "pkg" / "new.py").write_text("y = 3\n")
    (repo / "pkg" / "__pycache__").mkdir()
    (repo / "pkg" / "__pycache__" / "new.cpython-311.pyc").write_bytes(b"\0")
    patch = agent_patch(repo, base)
    assert "+++ b/pkg/new.py" in patch and "+x = 2" in patch and "__pycache__" not in patch
    clone = tmp_path / "c"
    subprocess.run(["git", "clone", "-q", str(repo), str(clone)], check=True)
    (clone / "p.diff").write_text(patch)
    git("apply", "p.diff", cwd=clone)
    assert (clone / "pkg" / "new.py").read_text() == "y = 3\n" and (clone / "a.py").read_text() == "x = 2\n"


def test_offline_an_uncached_base_commit_is_not_run_and_never_fetched(tmp_path: Path) -> None:
    from assay.evals._isolate import isolated_checkout
    from assay.evals.tasks._swebench_validate import grade_instances

    (inst,) = load_instances(_jsonl(tmp_path / "d.jsonl", [_row(1)]))
    specs = {
        "org/r1": {
            inst.version: {
                "python": "3",
                "install": "true",
                "test_cmd": "true",
                "log_parser": "parse_log_pytest",
            }
        }
    }
    (tmp_path / "specs.json").write_text(json.dumps(specs))
    # GitHub, not cached: this instance is not run (the others would be), and nothing is asked of the network
    (v,) = grade_instances(
        [inst], {inst.instance_id: "x"}, "local", tmp_path / "grade", repo_specs=tmp_path / "specs.json",
        repo_cache=tmp_path / "cache", offline=True,
    )  # fmt: skip
    assert v.status == "not_run"
    assert (
        f"the checkout cannot be built: --offline: https://github.com/org/r1.git {'0' * 12} is not in the repository cache {tmp_path}"
        in v.reason
    )
    assert "could not fetch" not in v.reason
    # a local mirror needs no network: --offline fetches from it
    mirror = tmp_path / "mirrors" / "org__r1"
    mirror.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(mirror)], check=True)
    subprocess.run(
        [
            "git",
            "-C",
            str(mirror),
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "commit",
            "-q",
            "--allow-empty",
            "-m",
            "x",
        ],
        check=True,
    )
    head = subprocess.run(
        ["git", "-C", str(mirror), "rev-parse", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    assert isolated_checkout(mirror, head, tmp_path / "co", tmp_path / "cache", offline=True).is_dir()


def test_an_official_report_json_reads_back_into_a_verdict() -> None:
    from assay.evals.tasks._swebench_grade import verdict_from

    entry = {  # the shape swebench.harness.run_evaluation writes per instance
        "patch_is_None": False,
        "patch_exists": True,
        "patch_successfully_applied": True,
        "resolved": False,
        "tests_status": {
            "FAIL_TO_PASS": {"success": ["t::a"], "failure": ["t::b"]},
            "PASS_TO_PASS": {"success": ["t::c", "t::d", "t::e"], "failure": []},
            "FAIL_TO_FAIL": {"success": [], "failure": []},
            "PASS_TO_FAIL": {"success": [], "failure": []},
        },
    }
    v = verdict_from("a__b-1", entry, "official", "model")
    assert (v.grader, v.status, v.patch_applied) == ("official", "unresolved", True)
    assert (v.fail_to_pass, v.pass_to_pass) == ([1, 2], [3, 3])
    v = verdict_from(
        "a__b-1", {**entry, "patch_successfully_applied": False, "tests_status": {}}, "official", "gold"
    )
    assert (v.status, v.reason, v.fail_to_pass) == ("unresolved", "the patch did not apply", [0, 0])
    assert verdict_from("a__b-1", {**entry, "resolved": True}, "official", "gold").resolved


def test_grading_a_sample_takes_its_seed_and_seed_0_is_a_seed(tmp_path: Path) -> None:
    from assay.evals.tasks._swebench import choose, grading_selection

    data = _jsonl(tmp_path / "d.jsonl", [_row(i) for i in range(40)])
    inst = load_instances(data)
    base = {"dataset": str(data), "work_root": str(tmp_path), "validate": True, "sample": 3}

    def picked(**over: object) -> list[str]:
        return [i.instance_id for i in grading_selection(None, {**base, **over})[2]]

    want = [i.instance_id for i in select_instances(inst, sample=3, seed=0)]
    assert picked(seed=0) == picked(seed=None) == want  # --seed 0, and no --seed (its default 0)
    assert picked(seed=5) == [i.instance_id for i in select_instances(inst, sample=3, seed=5)] != want
    # the bare `assay eval tasks` has no --sample seed of its own (its --seed is the run's): refused, named
    with pytest.raises(
        ConfigError, match=r"^--sample: use `assay eval tasks run --suite swebench --sample N"
    ):
        choose({"dataset": str(data), "work_root": str(tmp_path), "sample": 3})
