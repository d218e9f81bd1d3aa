from toybox.logs import parse_line, read_log


def test_parse_line():
    at, level, component, message = parse_line("2024-03-01T12:00:00Z ERROR payments card declined: 402\n")
    assert (at.hour, level, component, message) == (12, "ERROR", "payments", "card declined: 402")


def test_read_log(tmp_path):
    log = tmp_path / "a.log"
    log.write_text("2024-03-01T12:00:00Z INFO api started\n\n2024-03-01T12:00:01Z WARN api slow\n")
    assert [e[1] for e in read_log(log)] == ["INFO", "WARN"]
