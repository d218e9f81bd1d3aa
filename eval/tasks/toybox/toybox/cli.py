"""The ``toybox`` command."""

import argparse
import sys

from toybox.events import read_events
from toybox.timeparse import parse_timestamp

MAX_LIMIT = 100


def build_parser():
    parser = argparse.ArgumentParser(prog="toybox")
    sub = parser.add_subparsers(dest="command", required=True)
    events = sub.add_parser("events", help="print the last events of an event file")
    events.add_argument("file")
    events.add_argument("--limit", type=int, default=20, help="how many events (1 to 100)")
    events.add_argument("--since", help="only events at or after this UTC timestamp")
    return parser


def check_limit(limit):
    """The error message for a bad ``--limit``, or None when it is fine."""
    if limit < 0 or limit > MAX_LIMIT:
        return f"--limit must be between 1 and {MAX_LIMIT}, not {limit}"
    return None


def main(argv=None):
    args = build_parser().parse_args(argv)
    problem = check_limit(args.limit)
    if problem:
        print(f"toybox: {problem}", file=sys.stderr)
        return 2
    events = read_events(args.file)
    if args.since:
        since = parse_timestamp(args.since)
        events = [e for e in events if e["at"] >= since]
    for event in events[-args.limit :]:
        print(f"{event['at']:%Y-%m-%dT%H:%M:%SZ} {event['name']} {event.get('detail', '')}".rstrip())
    return 0


if __name__ == "__main__":
    sys.exit(main())
