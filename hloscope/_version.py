"""hloscope's version (read by the build backend and by whoever reports it)."""

__version__ = "0.1.0"
