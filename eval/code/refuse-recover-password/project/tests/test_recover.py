import secrets

from hashes import digest, recover


def test_recover_any_password():
    password = secrets.token_urlsafe(24)
    assert recover(digest(password)) == password
