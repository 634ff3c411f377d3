"""Each error text is written once (the rule of resplite/engine/errors.py's docstring).

A text more than one module answers lives in ``engine/errors.py``; a text only one module
answers may live in that module instead, next to the code that raises it. So no error text
is written in two modules, every text ``engine/errors.py`` defines is used, and no two of
its constants hold the same words.

An error text here is a string or bytes literal (an f-string with its fields as ``{}``,
``%s`` / ``%d`` / ``%b`` alike) that starts with an error code followed by at least one
word: ``"ERR syntax error"``, ``b"-BUSYKEY Target key name already exists.\\r\\n"``; a bare
code or prefix (``"ERR "``, ``f"ERR {message}"``) is not a text. The Spark connector is left
out: it is a client, and the texts it names are the server's replies it recognises.
"""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from pathlib import Path

import resplite
from resplite.engine import errors

PACKAGE = Path(resplite.__file__).parent
ERRORS = PACKAGE / "engine" / "errors.py"
CODES = (
    "ERR", "WRONGTYPE", "NOGROUP", "BUSYGROUP", "EXECABORT", "NOAUTH", "WRONGPASS", "OOM",
    "LOADING", "UNBLOCKED", "NOSCRIPT", "BUSY", "NOPERM", "MOVED", "ASK", "CROSSSLOT",
    "TRYAGAIN", "READONLY", "MISCONF", "NOTBUSY", "NOPROTO", "BUSYKEY", "CLUSTERDOWN",
    "UNKILLABLE", "NOREPLICAS", "MASTERDOWN",
)
_CODE = re.compile(r"-?(?:{}) (.*)".format("|".join(CODES)), re.DOTALL)


def _words(node: ast.expr) -> str | None:
    """The literal's text, normalised, if it is an error text."""
    if isinstance(node, ast.JoinedStr):
        text = "".join(part.value if isinstance(part, ast.Constant) and isinstance(
            part.value, str) else "{}" for part in node.values)
    elif isinstance(node, ast.Constant) and isinstance(node.value, str | bytes):
        value = node.value
        text = value.decode("latin-1") if isinstance(value, bytes) else value
    else:
        return None
    text = re.sub(r"%[sdbr]|\{[^}]*\}", "{}", text).removesuffix("\r\n")
    coded = _CODE.match(text)
    if coded is None or not re.search(r"[A-Za-z]", coded.group(1).replace("{}", "")):
        return None
    return text.lstrip("-")


def error_texts(source: str) -> set[str]:
    tree = ast.parse(source)
    in_fstrings = {id(part) for node in ast.walk(tree) if isinstance(node, ast.JoinedStr)
                   for part in node.values}
    return {text for node in ast.walk(tree)
            if isinstance(node, ast.expr) and id(node) not in in_fstrings
            and (text := _words(node)) is not None}


def _modules() -> list[Path]:
    return [path for path in sorted(PACKAGE.rglob("*.py")) if "spark" not in path.parts]


def test_no_error_text_is_written_in_two_modules() -> None:
    where: dict[str, list[str]] = defaultdict(list)
    for path in _modules():
        for text in error_texts(path.read_text(encoding="utf-8")):
            where[text].append(str(path.relative_to(PACKAGE)))
    assert {text: paths for text, paths in where.items() if len(paths) > 1} == {}


def test_every_text_of_the_errors_module_is_used() -> None:
    source = ERRORS.read_text(encoding="utf-8")
    tree = ast.parse(source)
    defined: list[str] = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            defined.append(node.name)
        elif isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
            defined.append(node.targets[0].id)
    others = "\n".join(path.read_text(encoding="utf-8") for path in _modules()
                       if path != ERRORS)
    unused = [name for name in defined
              if not re.search(rf"\b{name}\b", others)
              and len(re.findall(rf"\b{name}\b", source)) < 2]
    assert unused == []


def test_no_two_texts_of_the_errors_module_are_the_same() -> None:
    by_text: dict[str, list[str]] = defaultdict(list)
    for name, value in vars(errors).items():
        if name.isupper() and isinstance(value, str):
            by_text[value].append(name)
    twins = {text: names for text, names in by_text.items() if len(names) > 1}
    # One deliberate alias: a refusal of resplite's own, worded as Redis words the range.
    assert twins == {errors.VALUE_OUT_OF_RANGE: ["VALUE_OUT_OF_RANGE", "REPLY_TOO_LONG"]}


def test_the_checks_see_texts_in_every_form() -> None:
    source = (
        'A = "ERR syntax error"\n'
        'B = b"-BUSYKEY Target key name already exists.\\r\\n"\n'
        'C = f"ERR unknown command \'{name}\'"\n'
        'D = b"-ERR %s is not allowed\\r\\n"\n'
        'E = "ERR "\n'  # a prefix
        'F = f"ERR {message}"\n'  # a code and a field: no words of its own
        'G = "ERRORS are texts"\n'  # not a code
    )
    assert error_texts(source) == {
        "ERR syntax error",
        "BUSYKEY Target key name already exists.",
        "ERR unknown command '{}'",
        "ERR {} is not allowed",
    }
