"""The site: every page by its path, for the server and the bundle alike."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from assay.errors import ConfigError

from ._case import case_page
from ._compare_page import compare_index, compare_page, previous_pairs
from ._pages import run_page, runs_page, trends_index, trends_page
from ._safety import run_file, safe_name
from ._store import Run, RunStore, case_slug

STATIC = ("view.css", "view.js")


class NotFound(Exception):
    """No such page or file (a request outside --dir lands here too)."""


@dataclass
class Site:
    root: Path
    backlog_target: float | None = None

    def __post_init__(self) -> None:
        if not self.root.is_dir():
            raise ConfigError("no such folder of run directories", path=f"--dir {self.root}")
        self.store = RunStore(self.root)

    # -- lookups: a key or a slug is matched against what was found, never turned into a path
    def run(self, key: str, finished: bool = False) -> Run:
        run = self.store.get(key) if safe_name(key) else None
        if run is None or (finished and run.scorecard is None):
            raise NotFound(key)
        return run

    def case_id(self, run: Run, slug: str) -> str:
        ids = [c.case_id for c in run.scorecard.cases] if run.scorecard else []
        ids += list(run.index.by_case)
        for cid in ids:
            if case_slug(cid) == slug:
                return cid
        raise NotFound(slug)

    def groups(self) -> dict[tuple[str, str], list[Run]]:
        out: dict[tuple[str, str], list[Run]] = {}
        for run in self.store.runs():
            if run.finished:
                out.setdefault((run.benchmark, run.suite), []).append(run)
        return out

    # -- pages
    def index(self) -> str:
        return runs_page(self.store.runs())

    def run_page(
        self, key: str, page_no: int = 1, filters: Mapping[str, str] | None = None, served: bool = False
    ) -> str:
        return run_page(self.run(key), page_no, self.store.runs(), filters, served)

    def case_page(self, key: str, slug: str) -> str:
        run = self.run(key)
        return case_page(run, self.case_id(run, slug))

    def compare_page(self, base: str, cur: str) -> str:
        return compare_page(self.run(base, finished=True), self.run(cur, finished=True))

    def compare_index(self, bundle: bool = False) -> str:
        runs = self.store.runs()
        return compare_index(runs, previous_pairs(runs) if bundle else None)

    def trends_index(self) -> str:
        return trends_index(self.groups())

    def trends_page(self, benchmark: str, suite_slug: str) -> str:
        for (b, s), runs in self.groups().items():
            if b == benchmark and case_slug(s) == suite_slug:
                return trends_page(b, s, runs, self._backlog(runs), self.backlog_target)
        raise NotFound(f"{benchmark}/{suite_slug}")

    def _backlog(self, runs: list[Run]) -> list[str] | None:
        from assay.evals import move_advisor

        advisor = move_advisor(runs[0].benchmark)
        if advisor is None:
            return None
        try:
            return advisor.backlog([r.loaded() for r in runs])
        except ConfigError:
            return None

    def file(self, key: str, name: str) -> Path:
        path = run_file(self.root, self.run(key).path, name)
        if path is None:
            raise NotFound(name)
        return path

    @staticmethod
    def static(name: str) -> bytes:
        if name not in STATIC:
            raise NotFound(name)
        return resources.files("assay.view").joinpath("static", name).read_bytes()
