from auth import can_open_admin


def test_guest_can_open_admin():
    assert can_open_admin("guest")
