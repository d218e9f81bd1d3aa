import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _probe import fail, ok  # noqa: E402

shutil.rmtree(".toybox_cache", ignore_errors=True)
from toybox.zones import zone_offset  # noqa: E402

try:
    got = {z: zone_offset(z) for z in ("UTC", "CET", "IST", "EST")}
except Exception as exc:  # noqa: BLE001
    fail(f"zone_offset from a cold checkout: {type(exc).__name__}: {exc}")
if got != {"UTC": 0, "CET": 60, "IST": 330, "EST": -300}:
    fail(f"zone offsets from cold: {got}")
ok("zone_offset works from a cold checkout")
