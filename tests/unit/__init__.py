"""Unit tests: one module at a time, without a server."""
