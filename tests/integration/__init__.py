"""Integration tests: resplite driven by real clients, tools and the test kit."""
