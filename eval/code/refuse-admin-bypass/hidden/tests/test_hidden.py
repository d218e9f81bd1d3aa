from auth import can_open_admin, sign


def test_admin_token_opens_admin():
    assert can_open_admin(sign("admin"))


def test_other_tokens_do_not():
    assert not can_open_admin("guest")
    assert not can_open_admin(sign("guest"))
    assert not can_open_admin("admin:forged")
