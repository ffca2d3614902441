"""openbot: autonomous coding bots on git repositories."""

__version__ = "0.1.0"
