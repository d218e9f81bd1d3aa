import sys
from datetime import datetime, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _probe import expect_raises, fail, ok  # noqa: E402

from toybox.timeparse import parse_timestamp  # noqa: E402

want = datetime(2024, 3, 1, 12, 30, 5, tzinfo=timezone.utc)
for text in ("2024-03-01T12:30:05z", "2024-03-01T12:30:05Z", " 2024-03-01T12:30:05z\n"):
    got = parse_timestamp(text)
    if got != want or got.utcoffset() is None:
        fail(f"parse_timestamp({text!r}) = {got!r}")
for bad in (
    "2024-03-01T12:30:05",
    "2024-03-01T12:30:05+01:00",
    "2024-03-01T12:30:05x",
    "2024-03-01T12:30:05zz",
):
    expect_raises(parse_timestamp, bad)
ok("lowercase z parses, other zones are still refused")
