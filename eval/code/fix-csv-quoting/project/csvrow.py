def to_csv_row(fields):
    """One CSV line (no newline) of ``fields``."""
    return ",".join(str(f) for f in fields)
