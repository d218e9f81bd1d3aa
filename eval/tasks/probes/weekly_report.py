"""Recomputes the weekly report from data/build_times.csv independently and compares it row for row; then
runs the agent's module on a second, different CSV (a hand-written report cannot pass)."""

import csv
import random
import subprocess
import sys
import tempfile
from collections import defaultdict
from datetime import date, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _probe import fail, ok  # noqa: E402

HEADER = ["week", "job", "builds", "failed", "mean_seconds"]


def expected(path):
    groups = defaultdict(lambda: [0, 0, []])
    with open(path, newline="") as fh:
        for row in csv.DictReader(fh):
            year, week, _ = date.fromisoformat(row["date"]).isocalendar()
            g = groups[(f"{year}-W{week:02d}", row["job"])]
            g[0] += 1
            g[1] += row["status"] == "failed"
            if row["seconds"].strip():
                g[2].append(int(row["seconds"]))
    rows = []
    for (week, job), (builds, failed, secs) in sorted(groups.items()):
        mean = f"{round(sum(secs) / len(secs), 1):.1f}" if secs else ""
        rows.append([week, job, str(builds), str(failed), mean])
    return rows


def read(path):
    with open(path, newline="") as fh:
        rows = list(csv.reader(fh))
    if not rows or [c.strip() for c in rows[0]] != HEADER:
        fail(f"{path}: header {rows[:1]} is not {HEADER}")
    return [[c.strip() for c in r] for r in rows[1:] if r]


def same(got, want, where):
    if len(got) != len(want):
        fail(f"{where}: {len(got)} rows, expected {len(want)}")
    for i, (g, w) in enumerate(zip(got, want), start=2):
        g = g[:4] + [f"{float(g[4]):.1f}" if g[4:5] and g[4] else ""]
        if g != w:
            fail(f"{where} line {i}: {g} != expected {w}")


report = Path("reports/weekly.csv")
if not report.is_file():
    fail("reports/weekly.csv does not exist")
same(read(report), expected("data/build_times.csv"), "reports/weekly.csv")

rng = random.Random(11)
tmp = Path(tempfile.mkdtemp())
other = tmp / "other.csv"
lines = ["date,job,seconds,status"]
for day in range(40):
    d = date(2023, 12, 20) + timedelta(days=day)
    for job in rng.sample(["build", "test", "lint"], 2):
        status = rng.choice(["ok", "ok", "failed", "cancelled"])
        lines.append(f"{d},{job},{'' if status == 'cancelled' else rng.randint(1, 99)},{status}")
other.write_text("\n".join(lines) + "\n")
out = tmp / "out.csv"
proc = subprocess.run(
    [sys.executable, "-m", "toybox.report", str(other), str(out)], capture_output=True, text=True, timeout=60
)
if proc.returncode != 0 or not out.is_file():
    fail(f"python -m toybox.report on another CSV: exit {proc.returncode} {proc.stderr[-400:]}")
same(read(out), expected(other), "the report of another CSV")
ok("reports/weekly.csv matches the recomputation row for row, and so does a report of another CSV")
