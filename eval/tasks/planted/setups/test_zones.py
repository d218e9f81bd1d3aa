from toybox.zones import zone_offset


def test_zone_offsets():
    assert zone_offset("CET") == 60
    assert zone_offset("IST") == 330
    assert zone_offset("PST") == -480
