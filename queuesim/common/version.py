"""The queuesim version, written into every output (pyproject.toml reads it from here)."""

__version__ = "0.1.0"
