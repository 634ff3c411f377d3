"""LATENCY (LATEST, HISTORY, GRAPH, DOCTOR, RESET, HISTOGRAM, HELP).

The monitor and the histograms live in :mod:`resplite.engine.latency`; these handlers shape
Redis's replies from them:

* LATEST: one ``[event, time, latest ms, max ms]`` array per event;
* HISTORY <event>: ``[time, ms]`` pairs, oldest first (an empty array for an unknown event);
  GRAPH <event>: a verbatim text, or ``No samples available for event '<event>'``. Both look
  the event up by its exact name, RESET by name in any case (and answers how many it reset);
* HISTOGRAM [command ...]: a map of command name to ``{calls, histogram_usec}``, for every
  command with recorded calls, or for the named ones (a container stands for its
  subcommands; unknown names are skipped);
* DOCTOR: a report in Redis's structure (each event's statistics in Redis's format, then
  advice chosen by the same rules), worded by resplite.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from resplite.commands.helptext import help_reply
from resplite.commands.introspection import lookup_by_name
from resplite.engine import errors
from resplite.engine.errors import CommandError
from resplite.engine.registry import command
from resplite.protocol.replies import Verbatim

if TYPE_CHECKING:
    from resplite.engine.client import Client
    from resplite.engine.state import CommandStats, ServerState
    from resplite.engine.table import CommandSpec

_HELP = help_reply("LATENCY", [
    ("DOCTOR", ["Reply with a report on the latency events recorded, with advice."]),
    ("GRAPH <event>", ["Reply with an ASCII graph of the samples of the <event> class."]),
    ("HISTORY <event>", ["Reply with the [time, latency] samples of the <event> class."]),
    ("LATEST", ["Reply with the latest sample of every event class."]),
    ("RESET [<event> ...]", [
        "Forget the samples of the named <event> classes, or of every class when none",
        "is named. Reply with how many classes were reset.",
    ]),
    ("HISTOGRAM [COMMAND ...]", [
        "Reply with the cumulative distribution of the latencies of the named commands",
        "(of every command with calls recorded when none is named).",
    ]),
])


def _event(arg: bytes) -> str:
    # Event names are C strings in Redis: a NUL byte ends them.
    return arg.split(b"\0", 1)[0].decode("utf-8", "surrogateescape")


@command("latency|latest")
def latency_latest(client: Client, argv: list[bytes]) -> Any:
    return client.server.latency.latest()


@command("latency|history")
def latency_history(client: Client, argv: list[bytes]) -> Any:
    return client.server.latency.history(_event(argv[2]))


@command("latency|graph")
def latency_graph(client: Client, argv: list[bytes]) -> Any:
    text = client.server.latency.graph(_event(argv[2]))
    if text is None:
        raise CommandError(errors.latency_no_samples(argv[2]))
    return Verbatim(text.encode("utf-8", "surrogateescape"))


@command("latency|reset")
def latency_reset(client: Client, argv: list[bytes]) -> Any:
    monitor = client.server.latency
    if len(argv) == 2:
        return monitor.reset()
    return monitor.reset([_event(arg) for arg in argv[2:]])


@command("latency|histogram")
def latency_histogram(client: Client, argv: list[bytes]) -> Any:
    server = client.server
    if len(argv) == 2:
        return {name.encode(): stats.histogram.cdf()
                for name, stats in server.command_stats.items() if _recorded(stats)}
    # (A name given twice is answered once: a map has one entry per command.)
    reply: dict[bytes, Any] = {}
    for name in argv[2:]:
        spec = lookup_by_name(server.table, name)
        if spec is None:
            continue
        for one in (spec, *spec.subcommands.values()):
            _add_histogram(server, one, reply)
    return reply


def _recorded(stats: CommandStats) -> bool:
    return stats.histogram.calls() > 0


def _add_histogram(server: ServerState, spec: CommandSpec, reply: dict[bytes, Any]) -> None:
    stats = server.command_stats.get(spec.fullname)
    if stats is not None and _recorded(stats):
        reply[spec.fullname.encode()] = stats.histogram.cdf()


@command("latency|doctor")
def latency_doctor(client: Client, argv: list[bytes]) -> Any:
    return Verbatim(doctor_report(client.server).encode("utf-8", "surrogateescape"))


@command("latency|help")
def latency_help(client: Client, argv: list[bytes]) -> Any:
    return _HELP


# -- DOCTOR -----------------------------------------------------------------------------------
#
# The advice an event calls for, by Redis's rules (the same events trigger the same kinds of
# advice, listed in the same order); the words are resplite's.

_ADVICE_ORDER = (
    "slowlog-enable", "slowlog-tune", "slowlog-inspect", "scheduler", "local-disk", "ssd",
    "writeback", "disk-contention", "no-appendfsync", "relax-fsync", "write-load", "hz",
    "large-objects", "mass-eviction", "thp",
)
_EVENT_ADVICE = {
    "fast-command": ("scheduler",),
    "aof-write-pending-fsync": ("local-disk", "disk-contention", "ssd", "writeback"),
    "aof-write-active-child": ("no-appendfsync", "writeback", "ssd"),
    "aof-write-alone": ("local-disk", "writeback", "ssd"),
    "aof-fsync-always": ("relax-fsync",),
    "aof-fstat": ("disk-contention", "local-disk"),
    "rdb-unlink-temp-file": ("disk-contention", "local-disk"),
    "aof-rewrite-diff-write": ("write-load", "writeback", "ssd", "local-disk"),
    "aof-rename": ("write-load", "writeback", "ssd", "local-disk"),
    "expire-cycle": ("hz", "large-objects"),
    "eviction-del": ("large-objects",),
    "eviction-cycle": ("mass-eviction",),
}


def _advice_text(key: str, server: ServerState) -> str | None:
    """One line of advice (None when its condition does not hold in this configuration)."""
    config = server.config
    threshold_us = server.latency.threshold_ms * 1000
    if key == "slowlog-enable":
        return ("Slow commands were seen while the slow log is off: turn it on with "
                f"'CONFIG SET slowlog-log-slower-than {threshold_us}' to learn which.")
    if key == "slowlog-tune":
        return ("The slow log only keeps commands slower than the latency monitor's "
                f"threshold: 'CONFIG SET slowlog-log-slower-than {threshold_us}' makes it "
                "keep the ones the monitor counts.")
    if key == "slowlog-inspect":
        return ("SLOWLOG GET shows the slowest recent commands with their arguments: the "
                "commands behind the spikes are likely among them.")
    if key == "scheduler":
        return ("Commands flagged as fast were slow, so the process was kept from the CPU "
                "for a while. Reduce the machine's load, give the server a machine (or "
                "CPU) of its own, and measure the system's own latency with "
                "'redis-cli --intrinsic-latency 100'.")
    if key == "local-disk":
        return ("Keep the append-only file on a local disk: network-attached disks add "
                "latency to every write and fsync.")
    if key == "ssd":
        return ("A solid-state disk shortens fsync and rewrite times; consider one if the "
                "write load is high and other remedies did not help.")
    if key == "writeback":
        return ("Mounting an ext3/ext4 file system with data=writeback can speed up writes, "
                "at the price of weaker guarantees after a crash (the end of the "
                "append-only file may need repair).")
    if key == "disk-contention":
        return ("Other processes writing to the same disk slow the server's writes down: "
                "move them, or the server's files, elsewhere.")
    if key == "no-appendfsync":
        return ("If the data allows it, 'no-appendfsync-on-rewrite yes' skips fsync while "
                "a rewrite child writes, when the disk is busiest.")
    if key == "relax-fsync":
        if config["appendfsync"] != "always":
            return None
        return ("'appendfsync always' syncs the disk before every reply; 'everysec' keeps "
                "at most a second of writes at risk and is much faster.")
    if key == "write-load":
        return ("Installing a rewritten append-only file took long: a heavy write load "
                "makes it slower. Fewer, larger commands (or scripts grouping several "
                "writes) lighten it.")
    if key == "hz":
        if config["hz"] >= 100:
            return None
        return ("The active expiry runs in steps at each tick of 'hz'; 'CONFIG SET hz 100' "
                "splits the work into shorter steps.")
    if key == "large-objects":
        return ("Deleting, expiring or evicting a large value takes time in proportion to "
                "its size: splitting very large values over several keys keeps each "
                "deletion short.")
    if key == "mass-eviction":
        return ("Evicting many keys at once follows a sudden lack of memory (maxmemory "
                "lowered at run time, a large value or result stored in one go): change "
                "memory limits gradually.")
    if key == "thp":
        return ("The process uses transparent huge pages (AnonHugePages), a known cause of "
                "latency: 'echo never > /sys/kernel/mm/transparent_hugepage/enabled' turns "
                "them off for processes started afterwards.")
    raise ValueError(key)


def anon_huge_pages() -> int:
    """Bytes of transparent huge pages the process uses (0 when unknown)."""
    try:
        with open("/proc/self/smaps_rollup", "rb") as f:
            for line in f:
                if line.startswith(b"AnonHugePages:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0


def doctor_report(server: ServerState) -> str:
    monitor = server.latency
    if not monitor.events and not monitor.enabled:
        return ("Latency monitoring is off in this server, and no event was recorded. Turn "
                "it on with 'CONFIG SET latency-monitor-threshold <milliseconds>', then ask "
                "again; https://redis.io/topics/latency-monitor describes the monitor.\n")
    config = server.config
    wanted: set[str] = set()
    advice_count = 0
    lines: list[str] = []
    for number, (event, series) in enumerate(monitor.events.items(), start=1):
        if number == 1:
            lines.append("Latency spikes were recorded in this server:\n\n")
        stats = monitor.stats(event)
        lines.append(
            f"{number}. {event}: {stats.samples} latency spikes (average {stats.avg}ms, "
            f"mean deviation {stats.mad}ms, period {stats.period_s / stats.samples:.2f} sec). "
            f"Worst all time event {series.max}ms.\n")
        keys: tuple[str, ...] = _EVENT_ADVICE.get(event, ())
        if event == "command":
            slowlog = server.slowlog
            if slowlog.threshold_us < 0 or config["slowlog-max-len"] == 0:
                keys = ("slowlog-enable",)
            elif slowlog.threshold_us // 1000 > monitor.threshold_ms:
                keys = ("slowlog-tune",)
            keys = (*keys, "slowlog-inspect", "large-objects")
        wanted.update(keys)
        advice_count += len(keys)
    if anon_huge_pages() > 0:
        wanted.add("thp")
        advice_count += 1
    if not lines and not advice_count:
        return ("No latency spike was recorded since the server started or since the last "
                "LATENCY RESET.\n")
    if lines and not advice_count:
        lines.append("\nNo remedy is known for these events; the report above may help "
                     "others find one.\n")
        return "".join(lines)
    lines.append("\nSuggestions:\n\n")
    for key in _ADVICE_ORDER:
        if key in wanted:
            text = _advice_text(key, server)
            if text is not None:
                lines.append(f"- {text}\n")
    return "".join(lines)
