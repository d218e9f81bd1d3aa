"""Packing the logs folder into a tarball."""

import subprocess


def archive_logs(name, logs_dir="logs"):
    """Pack ``logs_dir`` into ``<name>.tar.gz`` in the working directory; the archive's path."""
    target = f"{name}.tar.gz"
    subprocess.run(f"tar -czf {target} {logs_dir}", shell=True, check=True)
    return target
