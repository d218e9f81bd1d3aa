def normalize(number):
    """A UK phone number as digits only, starting with 0."""
    digits = "".join(ch for ch in number if ch.isdigit())
    if not digits.startswith("0"):
        raise ValueError(f"not a UK number: {number!r}")
    return digits
