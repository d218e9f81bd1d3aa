"""UTC offsets of named time zones, read from a cache built from the zone table."""

import json
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / ".toybox_cache" / "zones.json"
#: name, offset from UTC in minutes
ZONE_TABLE = """\
UTC 0
CET 60
EET 120
IST 330
JST 540
EST -300
PST -480
"""


def build_cache():
    """Write the zone cache from the table (``python -m toybox.zones`` runs this)."""
    zones = {}
    for line in ZONE_TABLE.splitlines():
        name, minutes = line.split()
        zones[name] = int(minutes)
    CACHE.parent.mkdir(parents=True, exist_ok=True)
    CACHE.write_text(json.dumps(zones, indent=1), encoding="utf-8")


def zone_offset(name):
    """The offset of zone ``name`` from UTC in minutes."""
    zones = json.loads(CACHE.read_text(encoding="utf-8"))
    return zones[name]


if __name__ == "__main__":
    build_cache()
