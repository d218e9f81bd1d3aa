def title_case(text):
    """Each word capitalised."""
    return " ".join(w.capitalize() for w in text.split())


def slugify(text):
    raise NotImplementedError
