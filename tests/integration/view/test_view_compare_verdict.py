"""The compare page's verdict and exit code equal `assay compare`'s, for every pair of the committed
baselines (tests/fixtures/baselines) and fresh pr runs: same-suite pairs and not-comparable ones alike."""

from __future__ import annotations

import contextlib
import io
import json
import re
import shutil
from html import escape
from pathlib import Path

from assay.view import Site

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "baselines"
_VERDICT = re.compile(
    r'<p class="verdict [a-z]+" data-exit-code="(\d+)"><b>(.*?)</b> · exit code <b>(\d+)</b>'
)


def test_page_verdict_equals_assay_compare_on_every_pair(view_runs: Path, tmp_path: Path, run_cli) -> None:
    root = tmp_path / "results"
    for d in sorted(FIXTURES.iterdir()):
        shutil.copytree(d, root / f"baseline-{d.name}")
    for name in ("rag", "memory", "agent-good", "agent-broken"):
        shutil.copytree(view_runs / name, root / name)
    site = Site(root)
    keys = [r.key for r in site.store.runs() if r.scorecard is not None]
    assert len(keys) == 8
    seen: dict[int, int] = {}
    same_suite = 0
    for base in keys:
        for cur in keys:
            html = site.compare_page(base, cur)
            m = _VERDICT.search(html)
            assert m is not None, (base, cur)
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                code = run_cli("compare", str(root / base), str(root / cur), "--json")
            cli = json.loads(out.getvalue())
            assert int(m.group(1)) == int(m.group(3)) == code == cli["exit_code"], (base, cur)
            assert m.group(2) == escape(cli["verdict"]), (base, cur)
            seen[code] = seen.get(code, 0) + 1
            b, c = site.run(base).scorecard, site.run(cur).scorecard
            if base != cur and (b.benchmark, b.suite, b.suite_version) == (
                c.benchmark,
                c.suite,
                c.suite_version,
            ):
                same_suite += 1
                assert code in (0, 2), (base, cur, cli["verdict"])
    # fresh rag and memory runs against their committed baselines (both ways), and the two agent runs
    print("pairs by exit code", seen, "same suite", same_suite)
    assert same_suite >= 6
    assert seen.get(3, 0) > 0 and seen.get(0, 0) > 0 and seen.get(2, 0) > 0
