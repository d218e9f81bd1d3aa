"""toybox: small tools for build logs and event files."""

__version__ = "0.4.0"
