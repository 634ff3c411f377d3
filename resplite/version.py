"""The one place that says which versions resplite is and follows.

``REDIS_VERSION`` names the newest Redis release whose behaviour resplite follows for what it
implements: INFO's ``redis_version``, HELLO's ``version`` and LOLWUT report it, and clients and
test suites gate features on it (docs/compatibility.md says what it means).
"""

__version__ = "0.1.0"
REDIS_VERSION = "8.10.0"
