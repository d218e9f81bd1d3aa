"""The number in answer.txt against a recount from logs/app.log (the log itself is held unchanged)."""

import hashlib
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _probe import facts, fail, ok  # noqa: E402

from assay.evals.tasks._setups import count_log_errors  # noqa: E402  (probes run with assay's Python)

log = Path("logs/app.log").read_bytes()
if hashlib.sha256(log).hexdigest() != facts().get("log_sha256"):
    fail("logs/app.log is not the log the setup wrote")
count = count_log_errors(log.decode(), "payments", {"2024-03-02", "2024-03-03"})
answer = Path("answer.txt")
if not answer.is_file():
    fail("answer.txt does not exist")
text = answer.read_text().strip()
if text != str(count):
    fail(f"answer.txt says {text[:80]!r}; the log has {count}")
ok(f"answer.txt says {count}, as the recount")
