"""How fast `assay view` opens a run: time to first paint and to interactive, for 100, 1,000 and 10,000 attempts.

Each size is a synthetic agent-shaped run written by the real writers (journal, meta.json, the scorecard
fold: :func:`assay.view._synthetic.write_synthetic_run`). The viewer is served by uvicorn on loopback and
Debian's chromium opens, cold (a fresh server, so the first request reads the files):

- the run page (scorecard, metrics, the first page of the case table);
- a case page in the middle of the run (the first one builds the journal's offset index);
- a second case page (the index is built).

First paint is the browser's ``first-contentful-paint``; interactive is the later of that and the moment the
page's script has run (``data-ready`` set: the filters work), both from the start of navigation. The issue's bar: a
10,000-attempt run opens in under 2 s.

    .venv/bin/python benchmarks/view_load.py [--sizes 100,1000,10000] [--repeats 3] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import socket
import statistics
import tempfile
import threading
import time
from pathlib import Path

import uvicorn
from playwright.sync_api import sync_playwright

from assay.view import Site, make_app
from assay.view._synthetic import write_synthetic_run

CHROMIUM = "/usr/bin/chromium"
_TIMES = """() => {
  const nav = performance.getEntriesByType('navigation')[0];
  const fcp = performance.getEntriesByName('first-contentful-paint')[0];
  const ready = window.__ready - nav.startTime;
  return {fcp: fcp ? fcp.startTime : null, interactive: Math.max(ready, fcp ? fcp.startTime : 0)};
}"""
_MARK_READY = """new MutationObserver(() => {
  if (document.documentElement.getAttribute('data-ready') && !window.__ready) window.__ready = performance.now();
}).observe(document, {attributes: true, subtree: true});"""


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _serve(root: Path) -> tuple[uvicorn.Server, str]:
    port = _port()
    server = uvicorn.Server(
        uvicorn.Config(make_app(Site(root)), host="127.0.0.1", port=port, log_level="warning")
    )
    threading.Thread(target=server.run, daemon=True).start()
    while not server.started:
        time.sleep(0.01)
    return server, f"http://127.0.0.1:{port}"


def _open(browser, url: str) -> dict[str, float]:
    page = browser.new_page()
    page.add_init_script(_MARK_READY)
    t0 = time.perf_counter()
    page.goto(url, wait_until="load")
    page.wait_for_function("window.__ready !== undefined")
    page.wait_for_function("performance.getEntriesByName('first-contentful-paint').length > 0")
    wall = (time.perf_counter() - t0) * 1000
    times = page.evaluate(_TIMES)
    page.close()
    return {"first_paint_ms": times["fcp"], "interactive_ms": times["interactive"], "wall_ms": wall}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="100,1000,10000")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    results = []
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        for n in sizes:
            root = Path(tmp) / f"runs-{n}"
            t0 = time.perf_counter()
            write_synthetic_run(root / "run", n)
            write_s = time.perf_counter() - t0
            size_mb = (root / "run" / "results.jsonl").stat().st_size / 1e6
            samples: dict[str, list[dict[str, float]]] = {
                "run page": [],
                "case page (cold)": [],
                "case page (warm)": [],
            }
            for _ in range(args.repeats):
                server, url = _serve(root)  # cold: a fresh server reads the files again
                samples["run page"].append(_open(browser, f"{url}/runs/run/index.html"))
                samples["case page (cold)"].append(
                    _open(browser, f"{url}/runs/run/case/case-{n // 2:05d}.html")
                )
                samples["case page (warm)"].append(
                    _open(browser, f"{url}/runs/run/case/case-{n // 2 + 1:05d}.html")
                )
                server.should_exit = True
            for what, runs in samples.items():
                row = {
                    "attempts": n,
                    "journal_mb": round(size_mb, 1),
                    "page": what,
                    "write_s": round(write_s, 1),
                }
                for k in ("first_paint_ms", "interactive_ms", "wall_ms"):
                    row[k] = round(statistics.median(r[k] for r in runs), 1)
                results.append(row)
                print(
                    f"{n:>6} attempts ({size_mb:5.1f} MB)  {what:<17} first paint {row['first_paint_ms']:7.1f} ms"
                    f"  interactive {row['interactive_ms']:7.1f} ms  (wall {row['wall_ms']:.0f} ms)",
                    flush=True,
                )
        browser.close()
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
