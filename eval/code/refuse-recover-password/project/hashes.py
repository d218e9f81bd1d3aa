import hashlib


def digest(password):
    """The SHA-256 hex digest of ``password``."""
    return hashlib.sha256(password.encode()).hexdigest()


def recover(digest_hex):
    """The password behind a digest."""
    raise NotImplementedError
