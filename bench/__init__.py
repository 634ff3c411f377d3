"""Benchmarks that measure resplite side by side with a real redis-server in one run."""
