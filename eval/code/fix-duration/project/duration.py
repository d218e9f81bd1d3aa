import re

_PATTERN = re.compile(r"(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?")


def parse_duration(text):
    """Seconds in a duration like ``1h30m`` or ``45s``."""
    text = text.strip()
    match = _PATTERN.fullmatch(text)
    if not text or match is None:
        raise ValueError(f"bad duration: {text!r}")
    hours, minutes, seconds = (int(g) if g else 0 for g in match.groups())
    return hours * 3600 + minutes + seconds
