def paginate(items, page, size):
    """The items on 1-based page ``page`` of ``size`` items each."""
    start = page * size
    return items[start : start + size]
