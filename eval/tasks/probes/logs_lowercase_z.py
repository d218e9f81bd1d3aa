import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _probe import expect_raises, fail, ok  # noqa: E402

from toybox.logs import parse_line, parse_log_time  # noqa: E402

if parse_log_time("2024-03-01T12:00:00z") != parse_log_time("2024-03-01T12:00:00Z"):
    fail("lowercase z gives another time")
if parse_line("2024-03-01T12:00:00z ERROR api boom")[2] != "api":
    fail("parse_line with a lowercase z")
expect_raises(parse_log_time, "2024-03-01T12:00:00")
ok("parse_log_time takes a lowercase z")
