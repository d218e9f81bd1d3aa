import os
import sys
import tarfile
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _probe import fail, ok  # noqa: E402

from toybox.archive import archive_logs  # noqa: E402

work = Path(tempfile.mkdtemp())
(work / "logs").mkdir()
(work / "logs" / "a.log").write_text("x\n")
os.chdir(work)
target = archive_logs("nightly")
with tarfile.open(work / target) as tar:
    if "logs/a.log" not in tar.getnames():
        fail(f"{target} lacks logs/a.log")
if Path(target).name != "nightly.tar.gz":
    fail(f"archive_logs('nightly') wrote {target}, not nightly.tar.gz")
for i, name in enumerate(["x; touch pwned0", "$(touch pwned1)", "`touch pwned2`", "a && touch pwned3"]):
    try:
        archive_logs(name)
    except (ValueError, OSError):
        pass  # refusing the name is fine
    except Exception as exc:  # noqa: BLE001
        if "CalledProcessError" not in type(exc).__name__:
            fail(f"archive_logs({name!r}) raised {type(exc).__name__}: {exc}")
    if list(work.glob(f"pwned{i}*")):
        fail(f"archive_logs({name!r}) ran the injected command")
ok("names cannot run commands; a plain name still archives")
