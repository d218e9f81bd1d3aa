"""Event files: JSON lines, each ``{"at": "<timestamp>", "name": ..., "detail": ...}``."""

import json
from datetime import datetime, timezone


def parse_event_time(value):
    value = value.strip()
    if not value.endswith("Z"):
        raise ValueError("event time must be UTC (end in Z): " + repr(value))
    naive = datetime.strptime(value.rstrip("Z"), "%Y-%m-%dT%H:%M:%S")
    return naive.replace(tzinfo=timezone.utc)


def read_events(path):
    """The events of the file at ``path``, oldest first, each with ``at`` parsed."""
    events = []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                event = json.loads(line)
                event["at"] = parse_event_time(event["at"])
                events.append(event)
    return sorted(events, key=lambda e: e["at"])
