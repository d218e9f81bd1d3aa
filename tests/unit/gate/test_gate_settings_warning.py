from __future__ import annotations

from assay.gate.comparison import _changed_settings


def test_changed_subject_settings_are_listed():
    assert _changed_settings(
        {"ctx_size": 2048, "endpoint": "chat"}, {"ctx_size": 4096, "endpoint": "chat"}
    ) == ["ctx_size: 2048 -> 4096"]
    assert _changed_settings({}, {"structured": "json"}) == ["structured: None -> 'json'"]
    assert _changed_settings({"a": 1}, {"a": 1}) == []
