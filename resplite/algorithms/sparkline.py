"""ASCII sparklines as LATENCY GRAPH draws them.

A sequence of ``(value, label)`` samples becomes ``rows`` lines of characters, one column
per sample, scaled between the sequence's minimum and maximum: each row has three levels
(``_``, ``o``, ``#`` when filled, ``_``, ``-``, `````` otherwise), and in the filled style the
rows under a column's top character are ``|``. Under the graph, after one blank line, the
labels are written vertically, one character per line. A sequence longer than ``columns``
is drawn in chunks of ``columns`` samples separated by a blank line.

The scaling keeps Redis's arithmetic: the step of a value is
``int(int((value - min) * steps) / span)`` with ``steps = 3 * rows`` and ``span`` the
range (1 when every value is equal), clipped to ``0 .. steps - 1``.
"""

from __future__ import annotations

from collections.abc import Sequence

_LEVELS = "_-`"
_FILLED = "_o#"
_LABEL_MARGIN = 1


def _render_range(samples: Sequence[tuple[float, str]], low: float, high: float, rows: int,
                  fill: bool) -> list[str]:
    span = high - low
    if span == 0:
        span = 1
    levels = len(_LEVELS)
    steps = levels * rows
    chars = _FILLED if fill else _LEVELS
    step_of: list[int] = []
    for value, _ in samples:
        step = int(int((value - low) * steps) / span)
        step_of.append(min(max(step, 0), steps - 1))
    lines: list[str] = []
    for row in range(rows):
        line = []
        for step in step_of:
            idx = step - (rows - row - 1) * levels
            if 0 <= idx < levels:
                line.append(chars[idx])
            elif fill and idx >= levels:
                line.append("|")
            else:
                line.append(" ")
        lines.append("".join(line))
    labels = [label for _, label in samples]
    if any(labels):
        lines.extend(" " * len(samples) for _ in range(_LABEL_MARGIN))
        for depth in range(max(len(label) for label in labels)):
            lines.append("".join(label[depth] if depth < len(label) else " "
                                 for label in labels))
    return lines


def render(samples: Sequence[tuple[float, str]], columns: int = 80, rows: int = 4,
           fill: bool = True) -> str:
    """The sparkline of ``samples`` (each line ends with a newline)."""
    if not samples:
        return ""
    values = [value for value, _ in samples]
    low, high = min(values), max(values)
    chunks: list[str] = []
    for start in range(0, len(samples), columns):
        lines = _render_range(samples[start:start + columns], low, high, rows, fill)
        chunks.append("".join(line + "\n" for line in lines))
    return "\n".join(chunks)
