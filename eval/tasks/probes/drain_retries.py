import sys
import threading
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _probe import fail, ok  # noqa: E402

from toybox.jobqueue import Job, drain  # noqa: E402


def bounded(jobs, run):
    out = []
    t = threading.Thread(target=lambda: out.append(drain(jobs, run)), daemon=True)
    t.start()
    t.join(3)
    if not out:
        fail(f"drain({jobs}) did not finish in 3 s")
    return out[0]


for retries in (0, 1, 3):
    results, tries = bounded([Job("a", retries=retries)], lambda job: False)
    if results != {"a": "failed"} or tries != {"a": retries + 1}:
        fail(f"a failing job with retries={retries}: {results} after {tries} tries, expected {retries + 1}")
calls = []
results, tries = bounded([Job("a", retries=2)], lambda job: calls.append(1) or len(calls) == 2)
if results != {"a": "ok"} or tries != {"a": 2}:
    fail(f"a job passing on its second try: {results}, {tries}")
ok("drain tries each failing job 1 + retries times and stops")
