def dedupe(items):
    """``items`` without repeats."""
    return list(set(items))
