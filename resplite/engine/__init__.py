"""The sans-IO core every command sees: server and client state, dispatch and its accounting,
the command table and handler registry, blocking, client pause, slow log, clock and time flow,
config and INFO. It does no I/O: the asyncio shell (:mod:`resplite.server`) drives it and
provides its timers through :mod:`resplite.engine.scheduler`."""
