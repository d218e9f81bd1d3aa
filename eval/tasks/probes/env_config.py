import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _probe import fail, ok  # noqa: E402

from toybox.config import load_config  # noqa: E402

tmp = Path(tempfile.mkdtemp())
(tmp / "env.json").write_text('{"limit": 7}')
(tmp / "arg.json").write_text('{"color": true}')
os.environ.pop("TOYBOX_CONFIG", None)
if load_config() != {"limit": 20, "color": False}:
    fail("load_config() without TOYBOX_CONFIG is not the defaults")
os.environ["TOYBOX_CONFIG"] = str(tmp / "env.json")
if load_config() != {"limit": 7, "color": False}:
    fail("load_config() does not read the file TOYBOX_CONFIG names")
if load_config(tmp / "arg.json") != {"limit": 20, "color": True}:
    fail("an explicit path does not win over TOYBOX_CONFIG")
(tmp / "env.json").write_text('{"limit": 9}')
if load_config()["limit"] != 9:
    fail("TOYBOX_CONFIG is read once, not at each call")
ok("TOYBOX_CONFIG is read when no path is given; a path wins")
