"""Bad input at the CLI edge: one `error: ...` line naming the file, flag or variable, the right exit code,
never a traceback.

Every case runs `assay.cli.main` in-process from an empty working directory with a private ASSAY_HOME; an
exception that is not an AssayError or click error escapes `main` and fails the test.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from assay.cli import main
from assay.evals._registry import available

REPO = Path(__file__).resolve().parents[3]
SCENARIO = REPO / "eval" / "memory" / "01_move_and_job.yaml"
UNREACHABLE = "openai-compat/x@http://127.0.0.1:9/v1"


@pytest.fixture(autouse=True)
def _workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ASSAY_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("ASSAY_NO_LOCK", raising=False)
    for var in ("ASSAY_RESULTS_DIR", "ASSAY_MODEL", "ASSAY_EMBEDDER", "ASSAY_MEMORY_DB", "ASSAY_RAG_INDEX"):
        monkeypatch.delenv(var, raising=False)


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    """Exit code and stderr of `assay ARGV` (stdin is empty: a prompt would abort)."""
    with pytest.raises(SystemExit) as exc:
        main(argv)
    code = exc.value.code
    return (code if isinstance(code, int) else 1), capsys.readouterr().err


def error_line(err: str) -> str:
    lines = [ln for ln in err.splitlines() if ln.startswith("error: ")]
    assert lines, f"no `error:` line in stderr:\n{err}"
    return lines[0]


# --------------------------------------------------------------------------- fixed in this sweep


@pytest.mark.parametrize(
    "argv",
    [
        ["memory", "show"],
        ["eval", "memory"],
        ["rag", "search", "anything"],
        ["code-index", "build", ".", "--embedder", "hash"],
    ],
)
def test_assay_home_that_is_a_file(
    argv: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    home = tmp_path / "home-file"
    home.write_text("not a folder\n")
    monkeypatch.setenv("ASSAY_HOME", str(home))
    code, err = run(argv, capsys)
    assert code == 1
    line = error_line(err)
    assert "ASSAY_HOME" in line and str(home) in line and "it is a file" in line


def test_out_that_is_a_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "taken").write_text("x\n")
    code, err = run(["eval", "memory", "--out", "taken"], capsys)
    assert code == 1
    assert error_line(err) == "error: --out taken: is a file, not a folder; pass an empty or new folder"


def test_results_dir_that_is_a_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "taken").write_text("x\n")
    code, err = run(["eval", "memory", "--results-dir", "taken"], capsys)
    assert code == 1
    line = error_line(err)
    assert line.startswith("error: --results-dir taken: cannot create the run directory taken/memory-pr-")
    assert line.endswith("(Not a directory)")


@pytest.mark.parametrize("flag", ["--compare", "--noise", "--expect"])
def test_missing_gate_file_is_refused_before_the_run(
    flag: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, err = run(["eval", "memory", flag, "nope.json"], capsys)
    assert code == 1
    assert error_line(err) == f"error: {flag} nope.json: no such file or folder"
    assert not (tmp_path / "results").exists(), "nothing should have been run"


def test_unreadable_gate_inputs_are_refused_before_the_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A broken baseline, noise file or expectations file used to be found only after the whole run."""
    (tmp_path / "base").mkdir()
    (tmp_path / "base" / "scorecard.json").write_text('{"run_id": ')
    (tmp_path / "noise.json").write_text("[]")
    (tmp_path / "expect.yaml").write_text("- 1\n")
    baseline = str(REPO / "tests/fixtures/baselines/memory-pr")
    cases = [
        (["--compare", "base"], "error: base/scorecard.json: scorecard.json is not valid JSON"),
        (["--compare", baseline, "--noise", "noise.json"], "error: noise.json: not a noise.json written"),
        (["--expect", "expect.yaml"], "error: expect.yaml: expectations must be a mapping"),
        (["--noise", "noise.json"], "error: --noise sets the noise floor of --compare; pass --compare"),
        (["--allow-subject-change"], "error: --allow-subject-change applies to --compare; pass --compare"),
    ]
    for flags, expected in cases:
        code, err = run(["eval", "memory", *flags], capsys)
        assert code == 1, flags
        assert error_line(err).startswith(expected), (flags, err)
    assert not (tmp_path / "results").exists(), "nothing should have been run"


def test_runs_show_missing_folder(capsys: pytest.CaptureFixture[str]) -> None:
    code, err = run(["runs", "show", "no-such-run"], capsys)
    assert code == 1
    assert error_line(err) == "error: no-such-run: no such run directory or scorecard file"


def test_memory_scenario_unknown_field_names_its_own_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scenarios = tmp_path / "scenarios"
    scenarios.mkdir()
    lines = SCENARIO.read_text(encoding="utf-8").splitlines()
    at = next(i for i, ln in enumerate(lines) if ln.strip().startswith("assistant:"))
    lines[at] = lines[at].replace("assistant:", "assistnt:")
    (scenarios / "bad.yaml").write_text("\n".join([*lines, "bogus_field: 3"]) + "\n", encoding="utf-8")
    code, err = run(["eval", "memory", "--scenarios", str(scenarios)], capsys)
    assert code == 1
    assert error_line(err) == (
        f"error: {scenarios / 'bad.yaml'}:{at + 1}: chats.0.turns.0.assistnt: unknown field 'assistnt'"
    )
    # a top-level key is named at its own line, not at the top of the file
    (scenarios / "bad.yaml").write_text("\n".join([*SCENARIO.read_text().splitlines(), "bogus_field: 3"]))
    code, err = run(["eval", "memory", "--scenarios", str(scenarios)], capsys)
    n = len(SCENARIO.read_text().splitlines()) + 1
    assert error_line(err) == f"error: {scenarios / 'bad.yaml'}:{n}: bogus_field: unknown field 'bogus_field'"


def _rag_index(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "kettle.md").write_text("# Kettle\n\nDescale the kettle every four weeks in hard water.\n")
    code, _ = run(["rag", "index", str(docs), "--index", "idx", "--embedder", "hash"], capsys)
    assert code == 0
    return docs


def test_rag_tampered_index_says_how_to_recover(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    docs = _rag_index(tmp_path, capsys)
    chunks = tmp_path / "idx" / "chunks.jsonl"
    chunks.write_bytes(chunks.read_bytes()[:20])
    for argv in (
        ["rag", "search", "descale", "--index", "idx"],
        ["rag", "index", str(docs), "--index", "idx"],
    ):
        code, err = run(argv, capsys)
        assert code == 1
        assert error_line(err) == (
            "error: idx: index failed its signature check (tampered); delete the folder and index the "
            "documents again, or pass another --index folder"
        )
    shutil.rmtree(tmp_path / "idx")
    assert run(["rag", "index", str(docs), "--index", "idx", "--embedder", "hash"], capsys)[0] == 0


def test_rag_index_refuses_a_folder_that_is_not_an_index(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--index .` (or any folder holding other files) used to crash, and saving swaps the whole folder."""
    (tmp_path / "kettle.md").write_text("# Kettle\n\nDescale the kettle every four weeks.\n")
    for index in (".", str(tmp_path)):
        code, err = run(["rag", "index", "kettle.md", "--index", index, "--embedder", "hash"], capsys)
        assert code == 1
        assert error_line(err) == (
            f"error: --index {index}: exists and is not an index folder (saving would replace what it "
            "holds); pass an empty or new folder"
        )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kettle.md"]
    (tmp_path / "empty").mkdir()
    assert run(["rag", "index", "kettle.md", "--index", "empty", "--embedder", "hash"], capsys)[0] == 0


@pytest.mark.parametrize(
    ("flags", "expected"),
    [
        (["--chunk-tokens", "0"], "Invalid value for '--chunk-tokens': 0 is not in the range x>=8"),
        (["--max-documents", "0"], "Invalid value for '--max-documents': 0 is not in the range x>=1"),
        (["--overlap", "500"], "error: chunk overlap (--overlap) must be between 0 and half the chunk size"),
    ],
)
def test_rag_index_flags_named(
    flags: list[str], expected: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "a.md").write_text("# A\n\ntext\n")
    code, err = run(["rag", "index", "a.md", "--index", "idx", "--embedder", "hash", *flags], capsys)
    assert code == 1
    assert expected in err
    assert not (tmp_path / "idx").exists()


def test_memory_forget_checks_the_database_before_asking(capsys: pytest.CaptureFixture[str]) -> None:
    code, err = run(["memory", "forget", "my manager", "--db", "none.db"], capsys)
    assert code == 1, "a missing database must be reported, not a confirmation prompt aborted"
    assert error_line(err) == "error: none.db: no memory database here (--db PATH or $ASSAY_HOME/memory.db)"


def test_code_index_embedder_mismatch_names_the_flag(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "proj").mkdir()
    (tmp_path / "proj" / "a.py").write_text("def count_tokens(x):\n    return len(x.split())\n")
    assert run(["code-index", "build", "proj", "--embedder", "hash"], capsys)[0] == 0
    code, err = run(["code-index", "search", "proj", "tokens", "--embedder", "hash:64"], capsys)
    assert code == 1
    line = error_line(err)
    assert "built with embedder 'hash-v1:dim=384" in line and "pass the --embedder it was built with" in line


@pytest.mark.parametrize(
    ("flag", "value", "hint"),
    [("--warmup", "-1", "x>=0"), ("--request-timeout", "0", "x>0")],
)
def test_benchmark_load_flags_out_of_range(
    flag: str, value: str, hint: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, err = run(["eval", "benchmark", "--model", UNREACHABLE, flag, value], capsys)
    assert code == 1
    assert f"Invalid value for '{flag}'" in err and hint in err
    assert not (tmp_path / "results").exists()


@pytest.mark.local_model
def test_corrupt_gguf_for_the_embedded_server(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A GGUF llama.cpp cannot load used to be an outage (exit 3) quoting the server's traceback."""
    (tmp_path / "broken.gguf").write_bytes(b"GGUF" + b"\x03\x00\x00\x00" + b"\x00" * 200)
    code, err = run(["serve-local", "--model-path", "broken.gguf", "--port", "0"], capsys)
    assert code == 1
    assert err.strip() == (
        "error: llama.cpp could not load broken.gguf: not a usable GGUF model (truncated or corrupt?)"
    )


# --------------------------------------------------------------------------- kept as they are


def test_benchmark_unreachable_server_is_infra(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A preflight failure used to leave a run directory and print a `resume with:` line that could not help."""
    code, err = run(["eval", "benchmark", "--model", UNREACHABLE, "--num-requests", "2"], capsys)
    assert code == 3
    line = error_line(err)
    assert line.startswith("error: preflight failed: --model " + UNREACHABLE)
    assert "unreachable" in line
    assert line.endswith(
        "nothing was run and no run directory was kept: "
        "check that the backend is running and reachable, then run the command again"
    )
    assert "resume with" not in err
    assert not (tmp_path / "results").exists() or not any((tmp_path / "results").iterdir())


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (
            ["eval", "memory", "--dataset", "longmemeval:/nope.json"],
            "error: /nope.json: LongMemEval file not found (--dataset longmemeval:FILE)",
        ),
        (
            ["eval", "retrieval", "--component", "rag", "--dataset", "/nope"],
            "error: --dataset /nope: no such file",
        ),
        (
            ["eval", "benchmark", "--model", "nosuchprovider/x"],
            "error: --model 'nosuchprovider/x': expected openai-compat/NAME@URL",
        ),
        (["eval", "benchmark", "--concurrency", "abc"], "error: --concurrency: 'abc' is not a whole number"),
        (["eval", "benchmark", "--slo", "foo"], "error: --slo: 'foo' must be KEY=MS"),
        (["models", "try", "nosuch/x", "hi"], "error: unknown model provider 'nosuch' in 'nosuch/x'"),
        (
            ["serve-local", "--model-path", "/nope.gguf"],
            "error: GGUF model not found: /nope.gguf (from --model-path)",
        ),
        (
            ["gate", str(REPO / "tests/fixtures/baselines/memory-pr"), "--expect", "/nope"],
            "error: /nope: --expect: expectations file not found",
        ),
        (["compare", ".", "."], "error: .: directory has no scorecard.json"),
        (["rag", "search", "x", "--index", "."], "error: no index at .: run `assay rag index PATH...` first"),
        (["code-index", "search", ".", "x"], "error: no code index for . at "),
    ],
)
def test_bad_input_named(argv: list[str], expected: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, err = run(argv, capsys)
    assert code == 1
    assert error_line(err).startswith(expected)


def test_beir_folder_without_corpus(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "empty").mkdir()
    code, err = run(["eval", "retrieval", "--dataset", "beir:empty"], capsys)
    assert code == 1
    assert error_line(err) == "error: --dataset beir:empty: missing corpus.jsonl"


def test_code_dataset_bad_json_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "bad.jsonl").write_text('{"a":\n')
    code, err = run(
        ["eval", "retrieval", "--component", "code", "--dataset", "bad.jsonl", "--offline"], capsys
    )
    assert code == 1
    assert error_line(err).startswith("error: bad.jsonl:1: not valid JSON")


def test_memory_show_on_garbage_database(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "garbage.db").write_bytes(b"this is not sqlite " * 200)
    code, err = run(["memory", "show", "--db", "garbage.db"], capsys)
    assert code == 1
    assert error_line(err) == "error: memory database garbage.db cannot be opened: file is not a database"


def test_runs_show_truncated_scorecard(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    card = json.loads((REPO / "tests/fixtures/baselines/memory-pr/scorecard.json").read_text())
    (run_dir / "scorecard.json").write_text(json.dumps(card, indent=2)[:300])
    code, err = run(["runs", "show", "run"], capsys)
    assert code == 1
    assert error_line(err).startswith("error: run/scorecard.json:")
    assert "malformed JSON" in err


def test_code_index_search_in_an_empty_index_dir(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An empty --index-dir used to be searched as an empty index: exit 0, "no results"."""
    (tmp_path / "proj").mkdir()
    (tmp_path / "proj" / "a.py").write_text("def f():\n    return 1\n")
    (tmp_path / "ci").mkdir()
    code, err = run(["code-index", "search", "proj", "f", "--embedder", "hash", "--index-dir", "ci"], capsys)
    assert code == 1
    assert error_line(err) == (
        "error: no code index for proj at ci: run `assay code-index build proj --index-dir ci` first"
    )


def test_code_index_truncated_metadata(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "proj").mkdir()
    (tmp_path / "proj" / "a.py").write_text("def f():\n    return 1\n")
    assert run(["code-index", "build", "proj", "--embedder", "hash", "--index-dir", "ci"], capsys)[0] == 0
    meta = tmp_path / "ci" / "metadata.json"
    meta.write_bytes(meta.read_bytes()[:200])
    code, err = run(["code-index", "search", "proj", "f", "--embedder", "hash", "--index-dir", "ci"], capsys)
    assert code == 1
    assert error_line(err).startswith("error: code index ci: metadata.json is not valid JSON")


def test_noise_without_a_command_suggests_one_that_exists(capsys: pytest.CaptureFixture[str]) -> None:
    code, err = run(["eval", "noise", "--runs", "2"], capsys)
    assert code == 1
    line = error_line(err)
    assert line.endswith("e.g. -- assay eval memory")
    suggested = line.rsplit("-- assay eval ", 1)[1].split()[0]
    assert suggested in available()


def test_resume_under_another_benchmark_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`assay eval retrieval --resume <a memory run>` used to resume the memory run and exit 0."""
    assert run(["eval", "memory", "--out", "mem"], capsys)[0] == 0
    before = (tmp_path / "mem" / "results.jsonl").read_bytes()
    code, err = run(["eval", "retrieval", "--resume", "mem"], capsys)
    assert code == 1
    assert error_line(err) == (
        "error: --resume mem: a memory run, not retrieval; resume it with `assay eval memory --resume mem`"
    )
    assert (tmp_path / "mem" / "results.jsonl").read_bytes() == before


def test_bad_rate_card_stops_the_run_without_failing_a_case(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A missing ASSAY_RATE_CARD used to turn every case into ERROR: 0% measured, exit 0."""
    monkeypatch.setenv("ASSAY_RATE_CARD", str(tmp_path / "nope.json"))
    code, err = run(["eval", "memory", "--out", "mem"], capsys)
    assert code == 1
    assert error_line(err) == (
        f"error: run stopped: configuration error: rate card not found: {tmp_path / 'nope.json'} "
        "(from ASSAY_RATE_CARD)"
    )
    assert "resume with: assay eval memory --resume mem" in err
    card = json.loads((tmp_path / "mem" / "scorecard.json").read_text())
    counts = {k: v for k, v in card["summary"]["counts"].items() if v}
    assert set(counts) == {"NOT_RUN"}, counts
    monkeypatch.delenv("ASSAY_RATE_CARD")
    code, err = run(["eval", "memory", "--resume", "mem"], capsys)
    assert code == 0, err
    card = json.loads((tmp_path / "mem" / "scorecard.json").read_text())
    assert {k for k, v in card["summary"]["counts"].items() if v} == {"PASS"}


def test_models_list_flags_an_unusable_rate_card(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "card.json").write_text("{not json\n")
    monkeypatch.setenv("ASSAY_RATE_CARD", str(tmp_path / "card.json"))
    with pytest.raises(SystemExit) as exc:
        main(["models", "list"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    assert "prices: NOT USABLE:" in out and "rate card is not valid JSON" in out


def test_bad_model_script_found_in_setup_ends_the_run_cleanly(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A bad file found while the benchmark sets up used to leave a half-written run folder (meta.json and
    an empty journal, no scorecard) that `runs list` showed as running or killed."""
    (tmp_path / "script.yaml").write_text("replies: [\n")
    argv = ["eval", "memory", "--suite", "full", "--model", "scripted/script.yaml", "--embedder", "hash"]
    code, err = run(argv, capsys)
    assert code == 1
    assert error_line(err).startswith("error: script.yaml:2: invalid YAML")
    assert not any((tmp_path / "results").iterdir()), "a run that measured nothing leaves no folder"
    code, err = run([*argv, "--out", "mem"], capsys)
    assert code == 1 and not (tmp_path / "mem").exists()
