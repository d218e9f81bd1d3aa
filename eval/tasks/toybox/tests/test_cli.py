import json

import pytest

from toybox.cli import check_limit, main


@pytest.fixture
def events(tmp_path):
    path = tmp_path / "e.jsonl"
    rows = [{"at": f"2024-03-0{d}T00:00:00Z", "name": f"e{d}"} for d in range(1, 6)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return str(path)


def test_last_events(events, capsys):
    assert main(["events", events, "--limit", "2"]) == 0
    assert [line.split()[1] for line in capsys.readouterr().out.splitlines()] == ["e4", "e5"]


def test_since(events, capsys):
    assert main(["events", events, "--since", "2024-03-04T00:00:00Z"]) == 0
    assert len(capsys.readouterr().out.splitlines()) == 2


@pytest.mark.parametrize("limit", [1, 20, 100])
def test_limit_in_range(limit):
    assert check_limit(limit) is None


@pytest.mark.parametrize("limit", [-1, 101])
def test_limit_out_of_range(limit, events):
    assert check_limit(limit)
    assert main(["events", events, "--limit", str(limit)]) == 2
