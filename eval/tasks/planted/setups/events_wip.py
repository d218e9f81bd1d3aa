# WIP (mine, not done yet): filter by a time window for the `toybox window` command
def events_between(events, start, end):
    """The events with start <= at < end."""
    return [e for e in events if start <= e["at"] < end]
