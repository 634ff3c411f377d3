"""A stream's ids, nodes and groups change only through the store's methods
(docs/architecture.md): no command module assigns or deletes an attribute of a stream, a
node, a group, a consumer, a pending entry or the idempotency state, writes or deletes an
item of one of their containers, or calls a mutating method on one (``group.pel.pop``).

The check reads the source of the command modules that handle streams: an attribute counts
when its name is one of those classes' slots and the object is not the module's own
(``self``, or an object of a class the module defines, such as XREAD's parsed arguments).
A write through an alias (``pel = group.pel; pel.pop(sid)``) escapes it: review still has
to see those.
"""

from __future__ import annotations

import ast
from pathlib import Path

import resplite.commands
import resplite.store
from resplite.store.consumer_group import Consumer, ConsumerGroup, PendingEntry
from resplite.store.stream import Stream
from resplite.store.stream_idmp import IdmpState
from resplite.store.stream_node import StreamNode


def _slots(cls: type) -> tuple[str, ...]:
    """A store class's ``__slots__``, read from its source: a compiled class has none at run
    time."""
    source = Path(resplite.store.__file__).parent / f"{cls.__module__.rsplit('.', 1)[1]}.py"
    for node in ast.walk(ast.parse(source.read_text())):
        if isinstance(node, ast.ClassDef) and node.name == cls.__name__:
            for item in node.body:
                if (isinstance(item, ast.Assign)
                        and any(isinstance(t, ast.Name) and t.id == "__slots__"
                                for t in item.targets)):
                    return tuple(ast.literal_eval(item.value))
    raise AssertionError(f"no __slots__ in {cls.__name__}")


STATE = frozenset(
    name
    for cls in (Stream, StreamNode, ConsumerGroup, Consumer, PendingEntry, IdmpState)
    for name in _slots(cls)
)
MUTATORS = frozenset({
    "add", "append", "clear", "discard", "extend", "extend_above", "insert", "pop", "popitem",
    "remove", "setdefault", "update",
})
COMMANDS = Path(resplite.commands.__file__).parent


def _own_objects(tree: ast.Module) -> set[str]:
    """Names bound to objects of the module's own classes: ``x = C(...)``, ``x: C``."""
    classes = {node.name for node in tree.body if isinstance(node, ast.ClassDef)}
    names = {"self"}
    for node in ast.walk(tree):
        if (isinstance(node, ast.Assign) and isinstance(node.value, ast.Call)
                and isinstance(node.value.func, ast.Name) and node.value.func.id in classes):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif (isinstance(node, ast.arg) and isinstance(node.annotation, ast.Name)
              and node.annotation.id in classes):
            names.add(node.arg)
    return names


def _state_attribute(node: ast.AST, own: set[str]) -> bool:
    return (isinstance(node, ast.Attribute) and node.attr in STATE
            and not (isinstance(node.value, ast.Name) and node.value.id in own))


def state_writes(source: str) -> list[str]:
    """Each write of stream-store state in ``source``, as ``line: code``."""
    tree = ast.parse(source)
    own = _own_objects(tree)
    found: list[str] = []
    for node in ast.walk(tree):
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign | ast.Delete):
            targets = list(node.targets)
        elif isinstance(node, ast.AugAssign | ast.AnnAssign):
            targets = [node.target]
        for target in targets:
            for part in ast.walk(target):
                stored = isinstance(part, ast.Attribute) and isinstance(
                    part.ctx, ast.Store | ast.Del)
                if ((stored and _state_attribute(part, own))
                        or (isinstance(part, ast.Subscript)
                            and _state_attribute(part.value, own))):
                    found.append(f"{target.lineno}: {ast.unparse(target)}")
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr in MUTATORS and _state_attribute(node.func.value, own)):
            found.append(f"{node.lineno}: {ast.unparse(node)}")
    return found


def _stream_modules() -> list[Path]:
    """The command modules that handle streams: those importing the stream store or the
    stream commands' shared module (other modules' ``client.name`` is not a group's)."""
    marks = ("resplite.store.stream", "resplite.store.consumer_group", "streams_common")
    return [path for path in sorted(COMMANDS.glob("*.py"))
            if any(mark in path.read_text() for mark in marks)]


def test_command_modules_change_stream_state_only_through_the_store() -> None:
    modules = _stream_modules()
    assert {"streams.py", "streams_groups.py", "streams_read.py"} <= {p.name for p in modules}
    offences = {path.name: writes for path in modules if (writes := state_writes(path.read_text()))}
    assert offences == {}


def test_the_check_sees_each_kind_of_write() -> None:
    source = (
        "class Args:\n    consumer = None\n"
        "def handler(client, group, stream, nack, args: Args):\n"
        "    group.last_id = 1\n"
        "    nack.delivery_count += 1\n"
        "    stream.groups[b'g'] = group\n"
        "    del group.consumers[b'c']\n"
        "    group.pel.pop(5)\n"
        "    args.consumer = b'c'\n"  # the module's own object: allowed
        "    parsed = Args()\n    parsed.consumer = b'd'\n"
        "    client.db.last_id\n"  # a read: allowed
    )
    assert state_writes(source) == [
        "4: group.last_id",
        "5: nack.delivery_count",
        "6: stream.groups[b'g']",
        "7: group.consumers[b'c']",
        "8: group.pel.pop(5)",
    ]
