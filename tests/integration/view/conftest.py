"""Real run directories for the viewer's tests, made once per session by running the pr suites.

* ``view_runs`` holds: retrieval rag, memory, two serving runs against assay's stub server (the second with a
  slower first token), and two agent runs
  of four document scenarios whose expected tools are named by kind: one with the reference agent's
  profile, one with query_documents' description removed (the tool is not offered, so those scenarios
  fail in code): two iterations each, so those cases go stable-pass -> stable-fail, a regression (exit 2);
  the broken run was made with ``--compare`` the good one (its comparison.json names its baseline).
* ``browser``: Debian's chromium driven by Playwright (browsers cannot be downloaded here).
* ``shot``: saves a screenshot to ``$ASSAY_TEST_ARTIFACTS/screenshots`` (default: the session's pytest
  temp folder), the CI artifact of each page.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from assay.agents.reference._profile import DEFAULT_PROFILE
from assay.agents.reference.harness import ALL_TOOLS
from assay.cli._main import main

SHIPPED = Path(__file__).resolve().parents[3] / "eval" / "scenarios"
FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "baselines"
SCENARIOS = (
    "dqa-quarterly-revenue",
    "dqa-refund-window-member",
    "dqa-price-table-annual",
    "dqa-handbook-deprecation-notice",
)
CHROMIUM = "/usr/bin/chromium"
#: ci_tiers.json next to the scenarios: two in backlog (the broken profile fails the first; both runs the second)
TIERS = {
    "tiers": {
        "full": {"description": "the rest", "scenarios": list(SCENARIOS[1:3])},
        "backlog": {
            "description": "to fix",
            "scenarios": {SCENARIOS[0]: "needs query_documents", SCENARIOS[3]: "answers wrong"},
        },
    }
}


def _run_cli(*argv: str) -> int:
    try:
        main(list(argv))
    except SystemExit as exc:
        return int(exc.code or 0)
    return 0


@pytest.fixture(scope="session")
def run_cli():
    """``assay ARGV...`` in this process; returns the exit code."""
    return _run_cli


def _scenarios(dest: Path) -> Path:
    shutil.copytree(SHIPPED / "_documents", dest / "_documents")
    (dest / "document_qa").mkdir(parents=True)
    for sid in SCENARIOS:
        data = yaml.safe_load((SHIPPED / "document_qa" / f"{sid}.yaml").read_text())
        data["expected_tools"] = [
            n if n.startswith("kind:") else f"kind:{ALL_TOOLS[n].kind}"
            for n in data.get("expected_tools") or []
        ]
        (dest / "document_qa" / f"{sid}.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    return dest


def _serving_run(out: Path, ttft_s: float = 0.005) -> None:
    from assay.evals.serving import ServingBenchmark, StubConfig, StubServer
    from assay.exec import RunOptions, run_benchmark

    reply = ["category: work\n", "urgent: no\n", "personal: no\n"]
    stub = StubServer(StubConfig(ttft_s=ttft_s, itl_s=0.001, tokens=8, reply=reply, n_ctx=2048)).start()
    try:
        options = {
            "model": f"openai-compat/stub@{stub.base_url}/v1",
            "concurrency": "1,2",
            "num_requests": 6,
            "warmup": 1,
            "ctx_size": 2048,
        }
        run_benchmark(ServingBenchmark, options, RunOptions(out=out))
    finally:
        stub.stop()


@pytest.fixture(scope="session")
def view_runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("view")
    runs = base / "results"
    saved = {k: os.environ.get(k) for k in ("ASSAY_NO_LOCK", "ASSAY_HOME", "ASSAY_PROGRESS")}
    os.environ.update(ASSAY_NO_LOCK="1", ASSAY_HOME=str(base / "home"), ASSAY_PROGRESS="off")
    try:
        scen = _scenarios(base / "scenarios")
        (base / "ci_tiers.json").write_text(json.dumps(TIERS))
        broken = base / "profile"
        shutil.copytree(DEFAULT_PROFILE, broken)
        (broken / "tools" / "query_documents.md").unlink()
        agent = ("eval", "agent", "--scenarios", str(scen), "--iterations", "2")
        assert _run_cli(*agent, "--out", str(runs / "agent-good")) == 0
        time.sleep(0.01)
        broken_run = (
            "--profile",
            str(broken),
            "--compare",
            str(runs / "agent-good"),
            "--out",
            str(runs / "agent-broken"),
        )
        assert _run_cli(*agent, *broken_run) == 2  # compared with the good run: a regression
        assert _run_cli("eval", "retrieval", "--component", "rag", "--out", str(runs / "rag")) == 0
        assert _run_cli("eval", "memory", "--out", str(runs / "memory")) == 0
        _serving_run(runs / "serving")
        _serving_run(runs / "serving-slow", ttft_s=0.05)  # the same levels, a ten times slower first token
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    return runs


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    """One chromium per test module, closed at its end: Playwright's sync API runs an event loop while it is
    open, and every later test that calls asyncio.run would fail inside it."""
    from playwright.sync_api import sync_playwright

    assert Path(CHROMIUM).is_file(), (
        "Debian's chromium is missing: tests/install-agent-programs.sh installs it"
    )
    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield b
        b.close()


@pytest.fixture
def page(browser) -> Iterator[object]:
    ctx = browser.new_context(viewport={"width": 1280, "height": 900})
    pg = ctx.new_page()
    pg.set_default_timeout(5000)
    errors: list[str] = []
    pg.on("pageerror", lambda exc: errors.append(str(exc)))
    yield pg
    ctx.close()
    assert not errors, f"script errors in the page: {errors}"


@pytest.fixture(scope="session")
def shots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    env = os.environ.get("ASSAY_TEST_ARTIFACTS")
    folder = Path(env) / "screenshots" if env else tmp_path_factory.getbasetemp() / "screenshots"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.fixture
def shot(shots: Path):
    def save(pg, name: str) -> Path:
        path = shots / f"{name}.png"
        pg.screenshot(path=str(path), full_page=True)
        assert path.stat().st_size > 1000
        return path

    return save


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Served:
    """The viewer's app under uvicorn on a loopback port, in a thread."""

    def __init__(self, root: Path, **site_kwargs: object) -> None:
        import uvicorn

        from assay.view import Site, make_app

        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        config = uvicorn.Config(
            make_app(Site(root, **site_kwargs)), host="127.0.0.1", port=self.port, log_level="warning"
        )
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.thread.start()
        deadline = time.monotonic() + 10
        while not self.server.started:
            assert time.monotonic() < deadline, "the viewer did not start"
            time.sleep(0.02)

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=5)


@pytest.fixture
def serve_dir() -> Iterator[object]:
    """Start the viewer on a folder: ``serve_dir(root, **site_kwargs) -> Served``; stopped after the test."""
    started: list[Served] = []

    def start(root: Path, **kwargs: object) -> Served:
        started.append(Served(root, **kwargs))
        return started[-1]

    yield start
    for s in started:
        s.stop()


@pytest.fixture(name="free_port")
def _free_port_fixture():
    return free_port


@pytest.fixture(scope="session")
def served(view_runs: Path) -> Iterator[Served]:
    s = Served(view_runs, backlog_target=0.5)
    yield s
    s.stop()


@pytest.fixture(scope="session")
def case_runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Real runs of tasks, code and sessions (case_runs.py), apart from ``view_runs`` so its listing stays six."""
    from case_runs import make_case_runs

    return make_case_runs(tmp_path_factory.mktemp("view-cases"))
