"""Foundations every layer may use: errors, atomic writes, reading input bytes, the version."""
