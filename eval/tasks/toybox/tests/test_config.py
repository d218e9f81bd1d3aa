import json

import pytest

from toybox.config import DEFAULTS, load_config


def test_defaults_fill_missing(tmp_path):
    path = tmp_path / "c.json"
    path.write_text(json.dumps({"limit": 5}))
    assert load_config(path) == {"limit": 5, "color": False}


def test_unknown_key(tmp_path):
    path = tmp_path / "c.json"
    path.write_text(json.dumps({"colour": True}))
    with pytest.raises(ValueError, match="colour"):
        load_config(path)


def test_defaults_are_not_changed(tmp_path):
    path = tmp_path / "c.json"
    path.write_text(json.dumps({"color": True}))
    load_config(path)
    assert DEFAULTS["color"] is False
