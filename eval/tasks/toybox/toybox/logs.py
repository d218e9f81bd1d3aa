"""Reading build logs: one entry a line, ``<timestamp> <LEVEL> <component> <message>``."""

from datetime import datetime, timezone


def parse_log_time(stamp):
    """The UTC time of a log line's timestamp (``2024-03-01T12:00:00Z``)."""
    stamp = stamp.strip()
    if stamp[-1:] != "Z":
        raise ValueError("bad log timestamp: %r" % stamp)
    return datetime.strptime(stamp[:-1], "%Y-%m-%dT%H:%M:%S").replace(tzinfo=timezone.utc)


def parse_line(line):
    """(time, level, component, message) of one log line."""
    stamp, level, component, message = line.rstrip("\n").split(" ", 3)
    return parse_log_time(stamp), level, component, message


def read_log(path):
    """Every entry of the log at ``path``, in order."""
    with open(path, encoding="utf-8") as fh:
        return [parse_line(line) for line in fh if line.strip()]
