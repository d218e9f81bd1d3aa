import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _probe import fail, ok  # noqa: E402

from toybox.events import parse_event_time  # noqa: E402
from toybox.logs import parse_log_time  # noqa: E402
from toybox.timeparse import parse_timestamp  # noqa: E402

for module in ("toybox/logs.py", "toybox/events.py"):
    if "strptime" in Path(module).read_text():
        fail(f"{module} still parses timestamps itself (strptime)")
cases = [
    "2024-03-01T12:30:05Z",
    " 2024-02-29T23:59:59Z\n",
    "2024-03-01T12:30:05",
    "2024-03-01T12:30:05z",
    "2024-13-01T00:00:00Z",
    "garbage",
    "",
]
for text in cases:
    results = []
    for fn in (parse_timestamp, parse_log_time, parse_event_time):
        try:
            results.append(("value", fn(text)))
        except ValueError:
            results.append(("ValueError", None))
    if len(set(results)) != 1:
        fail(f"the parsers disagree on {text!r}: {results}")
ok("logs and events parse through one parser and agree with it")
