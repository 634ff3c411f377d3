"""The asyncio shell: listeners, connections, the command line and signals."""
