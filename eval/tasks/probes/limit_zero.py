import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _probe import fail, ok  # noqa: E402

from toybox.cli import check_limit, main  # noqa: E402

for bad in (0, -1, 101):
    if not check_limit(bad):
        fail(f"check_limit({bad}) accepts it")
for good in (1, 50, 100):
    if check_limit(good) is not None:
        fail(f"check_limit({good}) refuses it")
path = Path(tempfile.mkdtemp()) / "e.jsonl"
path.write_text(
    "".join(json.dumps({"at": f"2024-03-0{d}T00:00:00Z", "name": f"e{d}"}) + "\n" for d in (1, 2))
)
if main(["events", str(path), "--limit", "0"]) != 2:
    fail("toybox events --limit 0 is not refused")
if main(["events", str(path), "--limit", "1"]) != 0:
    fail("toybox events --limit 1 fails")
ok("--limit 0 is refused, 1..100 accepted")
