"""``python -m resplite``: the same as ``resplite-server``."""

from resplite.server.cli import main

raise SystemExit(main())
