import json

from toybox.events import parse_event_time, read_events


def test_parse_event_time():
    assert parse_event_time("2024-03-01T08:00:00Z").hour == 8


def test_read_events_sorted(tmp_path):
    path = tmp_path / "e.jsonl"
    rows = [{"at": "2024-03-02T00:00:00Z", "name": "b"}, {"at": "2024-03-01T00:00:00Z", "name": "a"}]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert [e["name"] for e in read_events(path)] == ["a", "b"]
