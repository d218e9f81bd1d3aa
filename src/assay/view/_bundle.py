"""``assay view --bundle OUT``: the same pages as a static site (a CI artifact that works from ``file://``)."""

from __future__ import annotations

import shutil
from pathlib import Path

from assay._util import Scrubber
from assay.errors import ConfigError
from assay.runs.rundir import write_artifact

from ._compare_page import previous_pairs
from ._pages import PAGE_SIZE
from ._safety import SERVED_FILES, run_file
from ._site import STATIC, Site
from ._store import case_slug


def write_bundle(site: Site, out: Path) -> int:
    """Write every page of ``site`` under ``out`` (through the scrubber); returns the number of files."""
    out = Path(out)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise ConfigError("is not an empty folder; pass a new or empty one", path=f"--bundle {out}")
    if out.resolve().is_relative_to(site.root.resolve()):
        raise ConfigError("must not be inside --dir (the bundle would list itself)", path=f"--bundle {out}")
    scrub = Scrubber()
    count = 0

    def put(rel: str, text: str) -> None:
        nonlocal count
        path = out / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        write_artifact(path, text, scrub)
        count += 1

    (out / "static").mkdir(parents=True)
    for name in STATIC:
        (out / "static" / name).write_bytes(site.static(name))
        count += 1
    runs = site.store.runs()
    put("index.html", site.index())
    put("compare.html", site.compare_index(bundle=True))
    put("trends.html", site.trends_index())
    for run in runs:
        base = f"runs/{run.key}"
        put(f"{base}/index.html", site.run_page(run.key))
        card = run.scorecard
        cases = [c.case_id for c in card.cases] if card else []
        for n in range(2, -(-len(cases) // PAGE_SIZE) + 1):
            put(f"{base}/page-{n}.html", site.run_page(run.key, n))
        for cid in dict.fromkeys([*cases, *run.index.by_case]):
            put(f"{base}/case/{case_slug(cid)}.html", site.case_page(run.key, case_slug(cid)))
        for child in sorted(run.path.iterdir()):
            if (
                SERVED_FILES.match(child.name)
                and (src := run_file(site.root, run.path, child.name)) is not None
            ):
                dest = out / base / "files" / child.name
                dest.parent.mkdir(parents=True, exist_ok=True)
                if child.suffix == ".png":
                    shutil.copyfile(src, dest)
                    count += 1
                else:
                    put(f"{base}/files/{child.name}", src.read_text(encoding="utf-8", errors="replace"))
    for b, c in previous_pairs(runs):
        put(f"compare/{b.key}/{c.key}.html", site.compare_page(b.key, c.key))
    for bench, suite in site.groups():
        put(f"trends/{bench}/{case_slug(suite)}.html", site.trends_page(bench, case_slug(suite)))
    return count
