from toybox.logs import parse_line, parse_log_time


def test_lowercase_z():
    assert parse_log_time("2024-03-01T12:00:00z") == parse_log_time("2024-03-01T12:00:00Z")


def test_line_with_lowercase_z():
    assert parse_line("2024-03-01T12:00:00z INFO api up")[1] == "INFO"
