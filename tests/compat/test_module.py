"""MODULE LIST / LOAD / LOADEX / UNLOAD / HELP (``resplite/commands/module.py``) against a real
Redis (8.6.3): refused as Redis refuses them under each ``enable-module-command`` setting (as DEBUG
is under ``enable-debug-command``), inside MULTI too; resplite loads nothing.

Each setting needs servers started with it: the ``pair_factory`` fixture starts them.
"""

from __future__ import annotations

import pytest
from support import normalize
from support.helpshape import assert_same_shape, implemented
from support.pair import PairFactory


@pytest.mark.parametrize("setting", ["no", "yes", "local"])
def test_debug_and_module_commands_follow_their_settings(
    pair_factory: PairFactory, setting: str
) -> None:
    pair = pair_factory("--enable-debug-command", setting, "--enable-module-command", setting)
    for args in (("DEBUG", "SLEEP", "0"), ("DEBUG", "HELP"), ("DEBUG", "nosuch"),
                 ("MODULE", "LOAD", "/nonexistent/x.so"), ("MODULE", "LOAD", "/x.so", "a"),
                 ("MODULE", "LOADEX", "/x.so", "CONFIG", "a", "b", "ARGS", "c"),
                 ("MODULE", "UNLOAD", "nosuch"), ("MODULE", "LIST"), ("MODULE", "HELP"),
                 ("MODULE", "LOAD"), ("MODULE", "nosuch"), ("MODULE",)):
        if args in (("DEBUG", "HELP"), ("MODULE", "HELP")):
            ref, ours = pair.both(*args)
            if args[0] == "MODULE":
                assert_same_shape(ref, ours, ours_has=implemented("module"))
            assert ours.startswith(b"-") == ref.startswith(b"-")
            continue
        # Redis 8 lists its built-in vector-set module, which resplite does not have.
        pair.check(*args, normalize=normalize.without_builtin_modules
                   if args == ("MODULE", "LIST") else None)
    # Refused inside MULTI too, marking the transaction as failed.
    pair.check("MULTI")
    pair.check("DEBUG", "SLEEP", "0")
    pair.check("EXEC")
