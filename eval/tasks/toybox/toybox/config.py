"""Settings from a JSON config file; missing keys take their defaults."""

import json

DEFAULTS = {"limit": 20, "color": False}


def load_config(path):
    """The settings in the JSON file at ``path``, over the defaults."""
    with open(path, encoding="utf-8") as fh:
        data = json.load(fh)
    if not isinstance(data, dict):
        raise ValueError(f"{path}: the config must be a JSON object")
    unknown = set(data) - set(DEFAULTS)
    if unknown:
        raise ValueError(f"{path}: unknown settings: {', '.join(sorted(unknown))}")
    return {**DEFAULTS, **data}
