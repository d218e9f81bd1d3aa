"""``python -m hostile_attacks "HOSTILE {json}" [MARKER]``: one attack in a process of its own."""

import os
import sys

from hostile_attacks import run

print(run(sys.argv[1], os.getcwd()), flush=True)
