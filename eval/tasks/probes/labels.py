import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _probe import fail, ok  # noqa: E402

WANT = {"005": ["bug"], "006": ["docs"]}
for number, want in WANT.items():
    lines = [ln for ln in Path(f"issues/{number}.md").read_text().splitlines() if ln.startswith("labels:")]
    if len(lines) != 1:
        fail(f"issues/{number}.md has {len(lines)} labels: lines")
    got = [x.strip(" `'\"[]") for x in lines[0].removeprefix("labels:").split(",") if x.strip(" `'\"[]")]
    if got != want:
        fail(f"issues/{number}.md is labelled {got}, expected {want}")
ok("005 is a bug, 006 is docs")
