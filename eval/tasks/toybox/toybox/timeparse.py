"""Parsing the UTC timestamps toybox reads: ``2024-03-01T12:00:00Z``."""

from datetime import datetime, timezone

FORMAT = "%Y-%m-%dT%H:%M:%S"


def parse_timestamp(text):
    """The aware UTC datetime of an ISO 8601 timestamp ending in ``Z``."""
    text = text.strip()
    if not text.endswith("Z"):
        raise ValueError(f"not a UTC timestamp: {text!r}")
    return datetime.strptime(text[:-1], FORMAT).replace(tzinfo=timezone.utc)
