import json

from toybox.cli import check_limit, main


def test_zero_is_refused():
    assert check_limit(0)


def test_main_refuses_zero(tmp_path):
    path = tmp_path / "e.jsonl"
    path.write_text(json.dumps({"at": "2024-03-01T00:00:00Z", "name": "a"}) + "\n")
    assert main(["events", str(path), "--limit", "0"]) == 2
