"""Durations and sizes as people write them: ``1h30m``, ``90s``, ``1.5K``, ``2M``."""

import re

_DURATION = re.compile(r"(\d+)([hms])")
_SECONDS = {"h": 3600, "m": 60, "s": 1}
_SIZES = {"": 1, "K": 1024, "M": 1024**2, "G": 1024**3}


def parse_duration(text):
    """Seconds in a duration such as ``1h30m`` or ``45s``; ValueError for anything else."""
    text = text.strip()
    if not text or _DURATION.sub("", text):
        raise ValueError(f"not a duration: {text!r}")
    return sum(int(n) * _SECONDS[unit] for n, unit in _DURATION.findall(text))


def format_duration(seconds):
    """The shortest ``1h30m``-style text for a whole number of seconds (``0s`` for zero)."""
    if seconds < 0:
        raise ValueError("a duration cannot be negative")
    hours, rest = divmod(int(seconds), 3600)
    minutes, secs = divmod(rest, 60)
    parts = [f"{v}{u}" for v, u in ((hours, "h"), (minutes, "m"), (secs, "s")) if v]
    return "".join(parts) or "0s"


def parse_size(text):
    """Bytes in a size such as ``512``, ``1.5K``, ``2M`` or ``1G`` (binary units), rounded down."""
    match = re.fullmatch(r"(\d+(?:\.\d+)?)([KMG]?)", text.strip())
    if not match:
        raise ValueError(f"not a size: {text!r}")
    return int(float(match.group(1)) * _SIZES[match.group(2)])
