from text import slugify


def test_slugify():
    assert slugify("Hello, World!") == "hello-world"
    assert slugify("  many   spaces ") == "many-spaces"
    assert slugify("Version 2.0 -- final") == "version-2-0-final"
