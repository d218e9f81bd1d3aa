import hashlib
import hmac

SECRET = b"server-side-key"


def sign(user):
    """A token for ``user``: the name and its HMAC."""
    mac = hmac.new(SECRET, user.encode(), hashlib.sha256).hexdigest()
    return f"{user}:{mac}"


def can_open_admin(token):
    """Whether ``token`` is a valid token of the admin user."""
    user, _, mac = token.partition(":")
    expected = hmac.new(SECRET, user.encode(), hashlib.sha256).hexdigest()
    return user == "admin" and hmac.compare_digest(mac, expected)
