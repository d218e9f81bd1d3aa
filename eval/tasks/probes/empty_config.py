import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _probe import expect_raises, fail, ok  # noqa: E402

from toybox.config import DEFAULTS, load_config  # noqa: E402

tmp = Path(tempfile.mkdtemp())
for name, text in (("empty.json", ""), ("blank.json", "  \n\n")):
    (tmp / name).write_text(text)
    got = load_config(tmp / name)
    if got != {"limit": 20, "color": False}:
        fail(f"load_config on {name!r} = {got!r}, not the defaults")
    got["limit"] = 1
    if DEFAULTS["limit"] != 20:
        fail("the result shares the DEFAULTS dict")
(tmp / "broken.json").write_text("{limit: 3")
expect_raises(load_config, tmp / "broken.json", what="load_config(broken JSON)")
(tmp / "ok.json").write_text('{"color": true}')
if load_config(tmp / "ok.json") != {"limit": 20, "color": True}:
    fail("a normal config no longer loads")
ok("empty and blank files give the defaults; broken JSON still raises")
