"""Compatibility tests against a real redis-server; README.md maps each file to its code."""
