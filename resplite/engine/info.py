"""The text of INFO: Redis's sections, field names and value formats, filled from our state.

Each section is a function returning ``(field, value)`` lines; :func:`render` joins the
sections a request selects into Redis's layout (``# Name`` headers, ``name:value`` lines, CRLF
line ends, one blank line between sections). Section selection follows Redis 7: no argument
or ``default`` gives the default sections, ``all`` adds commandstats and latencystats,
``everything`` is ``all`` (resplite has no modules), names are case-insensitive, unknown
names contribute nothing, and sections always come out in the canonical order whatever
order they were asked in.

The field set is Redis 7.4's (the fields clients read; docs/compatibility.md says what the
reported version means), with values that are true of resplite where a counterpart exists and
Redis's idle values where it does not (replication offsets, active defrag). ``Threads`` is
Redis 8's one line per I/O thread (resplite's one thread does all socket I/O) and
``Hotkeys`` the state of a HOTKEYS session (8.6); a server answering as an older Redis
leaves them out. ``Keysizes`` has Redis 8's key-size histograms per database and type
(:mod:`resplite.store.keysizes`), kept as keys change.
Memory figures follow the data (see :mod:`resplite.engine.state`): ``used_memory`` is what
the data set, the clients and scripts hold plus the startup allowance, the figure
``maxmemory`` is checked against; ``used_memory_dataset`` is the data set alone and
``used_memory_rss`` the process's resident size, so ``mem_fragmentation_ratio`` (RSS over
used memory) shows what the interpreter and its free lists add. There is no allocator to
report on: its fields equal ``used_memory`` and its ratios are 1. ``Latencystats`` has each
command's latency percentiles from its histogram (:mod:`resplite.engine.latency`). """

from __future__ import annotations

import itertools
import os
import resource
import sys
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from resplite import build
from resplite.engine import acl, compat
from resplite.store import keysizes
from resplite.store.keyspace import EXPIRE_COST, KEY_COST
from resplite.version import __version__

if TYPE_CHECKING:
    from resplite.engine.state import ServerState

Lines = list[tuple[str, object]]

DEFAULT_SECTIONS = (
    "server", "clients", "memory", "persistence", "threads", "stats", "replication", "cpu",
    "hotkeys", "modules", "errorstats", "cluster", "keyspace", "keysizes",
)
ALL_SECTIONS = (
    "server", "clients", "memory", "persistence", "threads", "stats", "replication", "cpu",
    "hotkeys", "modules", "commandstats", "errorstats", "latencystats", "cluster", "keyspace",
    "keysizes",
)
#: Sections a server answering as an older Redis does not have: section -> compat key.
_SECTION_SINCE = {"threads": "info-threads", "hotkeys": "info-hotkeys",
                  "keysizes": "info-keysizes"}
_TITLES = {name: name.capitalize() for name in ALL_SECTIONS}
_TITLES["cpu"] = "CPU"

_LRU_CLOCK_MAX = (1 << 24) - 1


def _build_id() -> str:
    """A fixed, hex-looking id derived from our version, in the shape Redis gives its
    build id (computed with the first INFO server: hashlib is not imported at start)."""
    import hashlib

    return hashlib.sha1(f"resplite-{__version__}".encode()).hexdigest()[:15]


def bytes_to_human(n: int) -> str:
    """Redis's bytesToHuman: ``200B``, ``1.67M``, ``23.54G`` ..."""
    if n < 1024:
        return f"{n}B"
    for unit, power in (("K", 1), ("M", 2), ("G", 3), ("T", 4), ("P", 5)):
        if n < 1024 ** (power + 1):
            return f"{n / 1024**power:.2f}{unit}"
    return f"{n}B"


def total_system_memory() -> int:
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return 0


def resident_memory() -> int:
    """Resident set size of this process in bytes (0 where /proc is not available)."""
    try:
        with open("/proc/self/statm", "rb") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


class InfoState:
    """Figures INFO keeps between calls: rate samples."""

    __slots__ = ("rate_sample",)

    def __init__(self, state: ServerState) -> None:
        # (monotonic ms, commands, input bytes, output bytes) at the previous INFO
        self.rate_sample = (state.clock.monotonic_ms(), 0, 0, 0)


def memory_figures(state: ServerState) -> tuple[int, int, int]:
    """(used, peak, startup) bytes of ``used_memory``, every client measured afresh."""
    used = state.measure_clients()
    return used, state.peak_memory, state.startup_memory


def db_overheads(state: ServerState) -> list[tuple[int, int, int]]:
    """(db index, main table overhead, expires overhead) of each database holding keys:
    what the key entries cost beyond the keys' and values' own bytes (MEMORY STATS)."""
    return [(db.index, KEY_COST * len(db.data), EXPIRE_COST * len(db.expires))
            for db in state.keyspace.dbs if db.data]


def overhead_total(state: ServerState) -> int:
    """Redis's ``used_memory_overhead``: the startup allowance, the clients, scripts and
    the key tables; ``used_memory`` minus this is ``used_memory_dataset``. Call after
    :func:`memory_figures` (it reads the clients' figure as measured there)."""
    return (state.startup_memory + state.clients_memory + state.script_memory
            + sum(main + expires for _, main, expires in db_overheads(state)))


# -- sections -------------------------------------------------------------------------------


def _server(state: ServerState) -> Lines:
    clock = state.clock
    now_ms = clock.time_ms()
    uptime = max(clock.monotonic_ms() - state.start_monotonic_ms, 0) // 1000
    import platform  # with the first INFO server, not at start

    uname = platform.uname()
    lines: Lines = [
        ("redis_version", compat.reported(state.config["redis-compat-version"])),
        ("redis_git_sha1", "00000000"),
        ("redis_git_dirty", 0),
        ("redis_build_id", _build_id()),
        ("redis_mode", "standalone"),
        ("os", f"{uname.system} {uname.release} {uname.machine}"),
        ("arch_bits", 64 if sys.maxsize > 2**32 else 32),
        ("monotonic_clock", "POSIX clock_gettime"),
        ("multiplexing_api", "kqueue" if sys.platform == "darwin" else "epoll"),
        ("atomicvar_api", "c11-builtin"),
        ("gcc_version", "0.0.0"),
        ("process_id", os.getpid()),
        ("process_supervised", "no"),
        ("run_id", state.run_id),
        ("tcp_port", state.tcp_port),
        ("server_time_usec", clock.time_us()),
        ("uptime_in_seconds", uptime),
        ("uptime_in_days", uptime // 86400),
        ("hz", state.current_hz()),
        ("configured_hz", state.config["hz"]),
        ("lru_clock", (now_ms // 1000) & _LRU_CLOCK_MAX),
        ("executable", state.executable or os.path.abspath(sys.argv[0])),
        ("config_file", state.config.config_file or ""),
        ("io_threads_active", 0),
    ]
    listener = 0
    if state.tcp_port:
        bind = " ".join(a.lstrip("-") for a in state.config["bind"])
        lines.append((f"listener{listener}", f"name=tcp,bind={bind},port={state.tcp_port}"))
        listener += 1
    if state.unix_socket:
        lines.append((f"listener{listener}", f"name=unix,bind={state.unix_socket}"))
    lines.append(("resplite_version", __version__))
    lines.append(("resplite_build", build.kind()))
    return lines


def _clients(state: ServerState) -> Lines:
    blocking = state.blocking
    clients = state.clients.values()
    blocked = [c for c in clients if c.blocked is not None]
    return [
        ("connected_clients", len(state.clients)),
        ("cluster_connections", 0),
        ("maxclients", state.config["maxclients"]),
        ("client_recent_max_input_buffer", 0),
        ("client_recent_max_output_buffer",
         max((c.output_memory() for c in clients), default=0)),
        ("blocked_clients", blocking.count),
        ("tracking_clients", state.tracking.tracking_clients),
        ("pubsub_clients", sum(1 for c in clients if c.pubsub)),
        ("watching_clients", sum(1 for c in clients if c.watched)),
        ("clients_in_timeout_table",
         sum(1 for c in blocked if c.blocked is not None and c.blocked.deadline_ms is not None)),
        ("total_watched_keys", len(state.watched_keys)),
        ("total_blocking_keys", len(blocking.waiting)),
        # Keys an XREADGROUP waits on: it is woken when its key goes (NOGROUP), not only
        # when data comes (Redis's unblock_on_nokey).
        ("total_blocking_keys_on_nokey", sum(
            1 for waiters in blocking.waiting.values()
            if any(c.blocked is not None and c.blocked.command == "xreadgroup"
                   for c in waiters))),
    ]


def _perc(part: int, whole: int) -> str:
    return f"{(part * 100 / whole) if whole else 0:.2f}%"


def _ratio(part: int, whole: int) -> str:
    return f"{part / whole if whole else 0:.2f}"


def _memory(state: ServerState) -> Lines:
    used, peak, startup = memory_figures(state)
    rss = resident_memory()
    overhead = overhead_total(state)
    dataset = max(used - overhead, 0)
    system = total_system_memory()
    maxmemory = state.config["maxmemory"]
    return [
        ("used_memory", used),
        ("used_memory_human", bytes_to_human(used)),
        ("used_memory_rss", rss),
        ("used_memory_rss_human", bytes_to_human(rss)),
        ("used_memory_peak", peak),
        ("used_memory_peak_human", bytes_to_human(peak)),
        *([("used_memory_peak_time", state.peak_memory_time)] if compat.follows(
            state.config["redis-compat-version"], "info-fields-8.6") else []),
        ("used_memory_peak_perc", _perc(used, peak)),
        ("used_memory_overhead", overhead),
        ("used_memory_startup", startup),
        ("used_memory_dataset", dataset),
        ("used_memory_dataset_perc", _perc(dataset, used - startup)),
        ("allocator_allocated", used),
        ("allocator_active", used),
        ("allocator_resident", used),
        ("allocator_muzzy", 0),
        ("total_system_memory", system),
        ("total_system_memory_human", bytes_to_human(system)),
        *state.scripting.memory_lines(),
        ("maxmemory", maxmemory),
        ("maxmemory_human", bytes_to_human(maxmemory)),
        ("maxmemory_policy", state.config["maxmemory-policy"]),
        ("allocator_frag_ratio", "1.00"),
        ("allocator_frag_bytes", 0),
        ("allocator_rss_ratio", "1.00"),
        ("allocator_rss_bytes", 0),
        ("rss_overhead_ratio", "1.00"),
        ("rss_overhead_bytes", 0),
        ("mem_fragmentation_ratio", _ratio(rss, used)),
        ("mem_fragmentation_bytes", rss - used),
        ("mem_not_counted_for_evict", 0),
        ("mem_replication_backlog", state.replication.backlog_memory),
        ("mem_total_replication_buffers", 0),
        ("mem_clients_slaves", 0),
        ("mem_clients_normal", state.clients_memory),
        ("mem_cluster_links", 0),
        ("mem_aof_buffer", 0),
        ("mem_allocator", "libc"),
        ("mem_overhead_db_hashtable_rehashing", 0),
        ("active_defrag_running", 0),
        ("lazyfree_pending_objects", state.lazyfree.pending_count),
        ("lazyfreed_objects", state.lazyfree.freed),
    ]


def _persistence(state: ServerState) -> Lines:
    return [*state.persistence.info_lines(), *state.aof.info_lines(),
            *state.persistence.loading_info_lines()]


def _rates(state: ServerState) -> tuple[int, float, float]:
    """Operations per second and kilobytes per second in and out since the previous INFO."""
    istate = state.info
    now = state.clock.monotonic_ms()
    then, cmds, inb, outb = istate.rate_sample
    istate.rate_sample = (
        now, state.total_commands, state.net_input_bytes, state.net_output_bytes
    )
    elapsed = (now - then) / 1000
    if elapsed <= 0:
        return 0, 0.0, 0.0
    return (
        int(max(state.total_commands - cmds, 0) / elapsed),
        max(state.net_input_bytes - inb, 0) / 1024 / elapsed,
        max(state.net_output_bytes - outb, 0) / 1024 / elapsed,
    )


def _expired(state: ServerState, keys: int) -> Lines:
    """expired_keys and expired_subkeys, in the order of the version answered as."""
    dbs = state.keyspace.dbs
    subkeys = sum(db.expired_fields for db in dbs)
    version = state.config["redis-compat-version"]
    if not compat.follows(version, "info-fields-8.6"):
        return [("expired_keys", keys), ("expired_subkeys", subkeys)]
    return [("expired_subkeys", subkeys),
            ("expired_subkeys_active", sum(db.expired_fields_active for db in dbs)),
            ("expired_keys", keys),
            ("expired_keys_active", sum(db.expired_keys_active for db in dbs))]


def _stats(state: ServerState) -> Lines:
    ops, kin, kout = _rates(state)
    expired = sum(db.expired_keys for db in state.keyspace.dbs)
    exceeded_total, exceeded_now = state.evictor.exceeded_ms()
    denials = state.acl.denials
    return [
        ("total_connections_received", state.total_connections),
        ("total_commands_processed", state.total_commands),
        ("instantaneous_ops_per_sec", ops),
        ("total_net_input_bytes", state.net_input_bytes),
        ("total_net_output_bytes", state.net_output_bytes),
        ("total_net_repl_input_bytes", 0),
        ("total_net_repl_output_bytes", 0),
        ("instantaneous_input_kbps", f"{kin:.2f}"),
        ("instantaneous_output_kbps", f"{kout:.2f}"),
        ("instantaneous_input_repl_kbps", "0.00"),
        ("instantaneous_output_repl_kbps", "0.00"),
        ("rejected_connections", state.rejected_connections),
        ("sync_full", state.replication.sync_full),
        ("sync_partial_ok", state.replication.sync_partial_ok),
        ("sync_partial_err", state.replication.sync_partial_err),
        *_expired(state, expired),
        *state.expiry.info_lines(),
        ("evicted_keys", state.evictor.evicted_keys),
        ("evicted_clients", state.evicted_clients),
        ("evicted_scripts", state.scripting.evicted_scripts),
        ("total_eviction_exceeded_time", exceeded_total),
        ("current_eviction_exceeded_time", exceeded_now),
        ("keyspace_hits", state.keyspace_hits),
        ("keyspace_misses", state.keyspace_misses),
        ("pubsub_channels", len(state.pubsub.channels)),
        ("pubsub_patterns", len(state.pubsub.patterns)),
        ("pubsubshard_channels", len(state.pubsub.shard_channels)),
        ("latest_fork_usec", state.latest_fork_usec),
        ("total_forks", state.total_forks),
        ("migrate_cached_sockets", len(state.migrate)),
        ("slave_expires_tracked_keys", 0),
        ("active_defrag_hits", 0),
        ("active_defrag_misses", 0),
        ("active_defrag_key_hits", 0),
        ("active_defrag_key_misses", 0),
        ("total_active_defrag_time", 0),
        ("current_active_defrag_time", 0),
        ("tracking_total_keys", state.tracking.total_keys),
        ("tracking_total_items", state.tracking.total_items),
        ("tracking_total_prefixes", len(state.tracking.prefixes)),
        ("unexpected_error_replies", state.unexpected_errors),
        ("total_error_replies", state.total_error_replies),
        ("dump_payload_sanitizations", state.dump_payload_sanitizations),
        ("total_reads_processed", state.reads_processed),
        ("total_writes_processed", state.writes_processed),
        ("io_threaded_reads_processed", 0),
        ("io_threaded_writes_processed", 0),
        ("io_threaded_total_prefetch_batches", 0),
        ("io_threaded_total_prefetch_entries", 0),
        ("client_query_buffer_limit_disconnections", state.qbuf_limit_disconnections),
        ("client_output_buffer_limit_disconnections", state.output.disconnections),
        ("reply_buffer_shrinks", 0),
        ("reply_buffer_expands", 0),
        ("eventloop_cycles", 0),
        ("eventloop_duration_sum", 0),
        ("eventloop_duration_cmd_sum", 0),
        ("instantaneous_eventloop_cycles_per_sec", 0),
        ("instantaneous_eventloop_duration_usec", 0),
        ("acl_access_denied_auth", denials[acl.DENIED_AUTH]),
        ("acl_access_denied_cmd", denials[acl.DENIED_CMD]),
        ("acl_access_denied_key", denials[acl.DENIED_KEY]),
        ("acl_access_denied_channel", denials[acl.DENIED_CHANNEL]),
        ("acl_access_denied_tls_cert", 0),  # no TLS: no client certificate to refuse
    ]


def _threads(state: ServerState) -> Lines:
    # One thread does all the socket I/O, as Redis with io-threads 1: its line counts every
    # connected client and every read and write.
    return [("io_thread_0",
             f"clients={len(state.clients)},reads={state.reads_processed},"
             f"writes={state.writes_processed}")]


def _hotkeys(state: ServerState) -> Lines:
    # Empty until the first HOTKEYS START and again after RESET, as Redis (no session).
    hotkeys = state.hotkeys
    hotkeys.expire(state.net_bytes())
    if not hotkeys.exists:
        return []
    return [("hotkeys-tracking-active", int(hotkeys.active)),
            ("hotkeys-cmd-cpu-time", hotkeys.tracking_ms)]


def _replication(state: ServerState) -> Lines:
    return state.replication.info_lines()


def _cpu(state: ServerState) -> Lines:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    thread_usage = getattr(resource, "RUSAGE_THREAD", None)
    main = resource.getrusage(thread_usage) if thread_usage is not None else own
    return [
        ("used_cpu_sys", f"{own.ru_stime:.6f}"),
        ("used_cpu_user", f"{own.ru_utime:.6f}"),
        ("used_cpu_sys_children", f"{children.ru_stime:.6f}"),
        ("used_cpu_user_children", f"{children.ru_utime:.6f}"),
        ("used_cpu_sys_main_thread", f"{main.ru_stime:.6f}"),
        ("used_cpu_user_main_thread", f"{main.ru_utime:.6f}"),
    ]


def _modules(state: ServerState) -> Lines:
    return []


def _commandstats(state: ServerState) -> Lines:
    lines: Lines = []
    for name, stats in state.command_stats.items():
        calls = stats.calls  # (a sum: see CommandStats)
        if not (calls or stats.failed_calls or stats.rejected_calls):
            continue
        per_call = stats.usec / calls if calls else 0.0
        lines.append((
            f"cmdstat_{name}",
            f"calls={calls},usec={stats.usec},usec_per_call={per_call:.2f},"
            f"rejected_calls={stats.rejected_calls},failed_calls={stats.failed_calls}",
        ))
    return lines


def _errorstats(state: ServerState) -> Lines:
    return [(f"errorstat_{code}", f"count={count}")
            for code, count in sorted(state.error_stats.items())]


def _latencystats(state: ServerState) -> Lines:
    # Nothing while latency-tracking is off, as Redis (the histograms are kept).
    if not state.latency_tracking:
        return []
    percentiles = state.config["latency-tracking-info-percentiles"]
    return [(f"latency_percentiles_usec_{name}", stats.histogram.percentiles_usec(percentiles))
            for name, stats in state.command_stats.items() if stats.histogram.calls()]


def _cluster(state: ServerState) -> Lines:
    return [("cluster_enabled", int(state.cluster is not None))]


def _avg_ttl(expires: dict[bytes, int], now_ms: int) -> int:
    """Average remaining time to live over a bounded sample, as Redis only estimates it."""
    sample = [when - now_ms for when in itertools.islice(expires.values(), 1000)]
    live = [ttl for ttl in sample if ttl > 0]
    return sum(live) // len(live) if live else 0


def _keyspace(state: ServerState) -> Lines:
    now = state.clock.time_ms()
    lines: Lines = []
    for db in state.keyspace.dbs:
        if not db.data:
            continue
        lines.append((
            f"db{db.index}",
            f"keys={len(db.data)},expires={len(db.expires)},"
            f"avg_ttl={_avg_ttl(db.expires, now)},subexpiry={db.hashes_with_ttls()}",
        ))
    return lines


def _keysizes(state: ServerState) -> Lines:
    lines: Lines = []
    for db in state.keyspace.dbs:
        if not db.data:
            continue
        if db.unsettled:
            db.settle()  # containers changed in place are counted in their new bins
        lines.extend(keysizes.lines(db.index, db.sizes))
    return lines


SECTIONS: dict[str, Callable[[ServerState], Lines]] = {
    "server": _server,
    "clients": _clients,
    "memory": _memory,
    "persistence": _persistence,
    "threads": _threads,
    "stats": _stats,
    "replication": _replication,
    "cpu": _cpu,
    "hotkeys": _hotkeys,
    "modules": _modules,
    "commandstats": _commandstats,
    "errorstats": _errorstats,
    "latencystats": _latencystats,
    "cluster": _cluster,
    "keyspace": _keyspace,
    "keysizes": _keysizes,
}


def select_sections(names: Iterable[str]) -> list[str]:
    """The sections a request names, in canonical order (Redis's rules, see module doc)."""
    wanted: set[str] = set()
    asked = False
    for raw in names:
        asked = True
        name = raw.lower()
        if name == "default":
            wanted.update(DEFAULT_SECTIONS)
        elif name in ("all", "everything"):
            wanted.update(ALL_SECTIONS)
        elif name in SECTIONS:
            wanted.add(name)
    if not asked:
        wanted.update(DEFAULT_SECTIONS)
    return [name for name in ALL_SECTIONS if name in wanted]


def render(state: ServerState, names: Iterable[str]) -> bytes:
    """The INFO text for the requested section names."""
    parts: list[str] = []
    version = state.config["redis-compat-version"]
    for name in select_sections(names):
        since = _SECTION_SINCE.get(name)
        if since is not None and not compat.follows(version, since):
            continue
        body = "".join(f"{field}:{value}\r\n" for field, value in SECTIONS[name](state))
        parts.append(f"# {_TITLES[name]}\r\n{body}")
    return "\r\n".join(parts).encode("utf-8", "surrogateescape")


def fields(text: bytes) -> dict[str, str]:
    """Parse INFO text back into ``field -> value`` (for tests and tools)."""
    out: dict[str, str] = {}
    for line in text.decode("utf-8", "replace").split("\r\n"):
        if not line or line.startswith("#"):
            continue
        field, _, value = line.partition(":")
        out[field] = value
    return out
