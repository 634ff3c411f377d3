"""Every directive Redis 7.4 to 8.6 accept, as data: name, type, default, bounds, flags.

This is the catalogue behind "a stock redis.conf loads": :mod:`resplite.engine.config` turns
each row it does not declare itself into a directive with the same CONFIG GET / SET type and
range checks as Redis (``yes``/``no`` booleans, integers and memory values within the C type's
bounds, enums, strings), so a file written for Redis parses here line for line, CONFIG GET
answers what Redis would, and CONFIG SET refuses what Redis refuses with Redis's words.

The rows are facts taken from Redis's configuration table (7.4 and the 8.0 line; aliases are
the old names Redis still accepts). Whether resplite gives a directive a meaning is not
recorded here: :data:`MEANINGFUL` names the catalogue rows resplite acts on; every other row
is accepted, shown and stored, and the server logs once at start that it has no effect.

Invariant: rows hold only plain values (no parsers), so this module imports nothing of the
engine and the engine's config module stays the one place that builds directives.
"""

from __future__ import annotations

from typing import Any, NamedTuple

INT_MAX = (1 << 31) - 1
INT_MIN = -(1 << 31)
UINT_MAX = (1 << 32) - 1
LONG_MAX = (1 << 63) - 1
ULLONG_MAX = (1 << 64) - 1


class RedisDirective(NamedTuple):
    """One row of Redis's configuration table.

    ``kind`` is ``bool``, ``string``, ``enum``, ``int``, ``memory`` (integers with the
    ``k``/``kb``/... suffixes; ``percent`` also takes ``N%``) or ``octal``. ``low`` and
    ``high`` bound integers; ``unsigned`` says Redis checks them as an unsigned C type (a
    negative number is out of range). ``multi`` enums take several words (flags).
    """

    name: str
    kind: str
    default: object
    low: int = 0
    high: int = 0
    choices: tuple[str, ...] = ()
    mutable: bool = True
    hidden: bool = False
    sensitive: bool = False
    protected: bool = False
    alias: str | None = None
    percent: bool = False
    unsigned: bool = False
    multi: bool = False


def _bool(name: str, default: bool, **flags: Any) -> RedisDirective:
    return RedisDirective(name, "bool", default, **flags)


def _string(name: str, default: str, **flags: Any) -> RedisDirective:
    return RedisDirective(name, "string", default, **flags)


def _enum(name: str, default: str, choices: tuple[str, ...], **flags: Any) -> RedisDirective:
    return RedisDirective(name, "enum", default, choices=choices, **flags)


def _int(name: str, default: int, low: int, high: int, **flags: Any) -> RedisDirective:
    return RedisDirective(name, "int", default, low, high, **flags)


def _memory(name: str, default: int, low: int, high: int, **flags: Any) -> RedisDirective:
    return RedisDirective(name, "memory", default, low, high, **flags)


def _octal(name: str, default: int, low: int, high: int, **flags: Any) -> RedisDirective:
    return RedisDirective(name, "octal", default, low, high, **flags)


CATALOGUE: tuple[RedisDirective, ...] = (
    _bool('rdbchecksum', True, mutable=False),
    _bool('daemonize', False, mutable=False),
    _bool('io-threads-do-reads', False, mutable=False),
    _bool('always-show-logo', False, mutable=False),
    _bool('protected-mode', True),
    _bool('rdbcompression', True),
    _bool('rdb-del-sync-files', False),
    _bool('activerehashing', True),
    _bool('stop-writes-on-bgsave-error', True),
    _bool('set-proc-title', True, mutable=False),
    _bool('dynamic-hz', True),
    _bool('lazyfree-lazy-eviction', False),
    _bool('lazyfree-lazy-expire', False),
    _bool('lazyfree-lazy-server-del', False),
    _bool('lazyfree-lazy-user-del', False),
    _bool('lazyfree-lazy-user-flush', False),
    _bool('repl-disable-tcp-nodelay', False),
    _bool('repl-diskless-sync', True),
    _bool('aof-rewrite-incremental-fsync', True),
    _bool('no-appendfsync-on-rewrite', False),
    _bool('cluster-require-full-coverage', True),
    _bool('rdb-save-incremental-fsync', True),
    _bool('aof-load-truncated', True),
    _bool('aof-use-rdb-preamble', True),
    _bool('aof-timestamp-enabled', False),
    _bool('cluster-replica-no-failover', False, alias='cluster-slave-no-failover'),
    _bool('replica-lazy-flush', False, alias='slave-lazy-flush'),
    _bool('replica-serve-stale-data', True, alias='slave-serve-stale-data'),
    _bool('replica-read-only', True, alias='slave-read-only'),
    _bool('replica-ignore-maxmemory', True, alias='slave-ignore-maxmemory'),
    _bool('jemalloc-bg-thread', True),
    _bool('activedefrag', False),
    _bool('syslog-enabled', False, mutable=False),
    _bool('cluster-enabled', False, mutable=False),
    _bool('appendonly', False),
    _bool('cluster-allow-reads-when-down', False),
    _bool('cluster-allow-pubsubshard-when-down', True),
    _bool('crash-log-enabled', True),
    _bool('crash-memcheck-enabled', True),
    _bool('use-exit-on-panic', False, hidden=True),
    _bool('disable-thp', True, mutable=False),
    _bool('cluster-allow-replica-migration', True),
    _bool('replica-announced', True),
    _bool('latency-tracking', True),
    _bool('aof-disable-auto-gc', False, hidden=True),
    _bool('replica-ignore-disk-write-errors', False),
    _bool('hide-user-data-from-log', False),
    _string('aclfile', '', mutable=False),
    _string('unixsocket', '', mutable=False),
    _string('pidfile', '', mutable=False),
    _string('replica-announce-ip', '', alias='slave-announce-ip'),
    _string('masteruser', '', sensitive=True),
    _string('cluster-announce-ip', ''),
    _string('cluster-config-file', 'nodes.conf', mutable=False),
    _string('cluster-announce-hostname', ''),
    _string('cluster-announce-human-nodename', ''),
    _string('syslog-ident', 'redis', mutable=False),
    _string('dbfilename', 'dump.rdb', protected=True),
    _string('appendfilename', 'appendonly.aof', mutable=False),
    _string('appenddirname', 'appendonlydir', mutable=False),
    _string('server-cpulist', '', mutable=False, alias='server_cpulist'),
    _string('bio-cpulist', '', mutable=False, alias='bio_cpulist'),
    _string('aof-rewrite-cpulist', '', mutable=False, alias='aof_rewrite_cpulist'),
    _string('bgsave-cpulist', '', mutable=False, alias='bgsave_cpulist'),
    _string('ignore-warnings', ''),
    _string('proc-title-template', '{title} {listen-addr} {server-mode}'),
    _string('bind-source-addr', ''),
    _string('logfile', '', mutable=False),
    _string('locale-collate', ''),
    _string('masterauth', '', sensitive=True),
    _string('requirepass', '', sensitive=True),
    _enum('supervised', 'no', ('upstart', 'systemd', 'auto', 'no'), mutable=False),
    _enum('syslog-facility', 'local0',
        ('user', 'local0', 'local1', 'local2', 'local3', 'local4', 'local5', 'local6', 'local7'),
        mutable=False),
    _enum('repl-diskless-load', 'disabled', ('disabled', 'on-empty-db', 'swapdb', 'flushdb')),
    _enum('loglevel', 'notice', ('debug', 'verbose', 'notice', 'warning', 'nothing')),
    _enum('maxmemory-policy', 'noeviction',
        ('volatile-lru', 'volatile-lfu', 'volatile-random', 'volatile-ttl', 'volatile-lrm',
        'allkeys-lru', 'allkeys-lfu', 'allkeys-random', 'allkeys-lrm', 'noeviction')),
    _enum('appendfsync', 'everysec', ('everysec', 'always', 'no')),
    _enum('oom-score-adj', 'no', ('no', 'yes', 'relative', 'absolute')),
    _enum('acl-pubsub-default', 'resetchannels', ('allchannels', 'resetchannels')),
    _enum('sanitize-dump-payload', 'no', ('no', 'yes', 'clients')),
    _enum('enable-protected-configs', 'no', ('no', 'yes', 'local'), mutable=False),
    _enum('enable-debug-command', 'no', ('no', 'yes', 'local'), mutable=False),
    _enum('enable-module-command', 'no', ('no', 'yes', 'local'), mutable=False),
    _enum('cluster-preferred-endpoint-type', 'ip', ('ip', 'hostname', 'unknown-endpoint')),
    _enum('propagation-error-behavior', 'ignore', ('ignore', 'panic', 'panic-on-replicas')),
    _enum('shutdown-on-sigint', 'default',
        ('default', 'save', 'nosave', 'now', 'force'), multi=True),
    _enum('shutdown-on-sigterm', 'default',
        ('default', 'save', 'nosave', 'now', 'force'), multi=True),
    _int('databases', 16, 1, INT_MAX, mutable=False),
    _int('port', 6379, 0, 65535),
    _int('io-threads', 1, 1, 128, mutable=False),
    _int('auto-aof-rewrite-percentage', 100, 0, INT_MAX),
    _int('cluster-replica-validity-factor', 10, 0, INT_MAX, alias='cluster-slave-validity-factor'),
    _int('list-max-listpack-size', -2, INT_MIN, INT_MAX, alias='list-max-ziplist-size'),
    _int('tcp-keepalive', 300, 0, INT_MAX),
    _int('cluster-migration-barrier', 1, 0, INT_MAX),
    _int('active-defrag-cycle-min', 1, 1, 99),
    _int('active-defrag-cycle-max', 25, 1, 99),
    _int('active-defrag-threshold-lower', 10, 0, 1000),
    _int('active-defrag-threshold-upper', 100, 0, 1000),
    _int('lfu-log-factor', 10, 0, INT_MAX),
    _int('lfu-decay-time', 1, 0, INT_MAX),
    _int('replica-priority', 100, 0, INT_MAX, alias='slave-priority'),
    _int('repl-diskless-sync-delay', 5, 0, INT_MAX),
    _int('maxmemory-samples', 5, 1, 64),
    _int('maxmemory-eviction-tenacity', 10, 0, 100),
    _int('timeout', 0, 0, INT_MAX),
    _int('replica-announce-port', 0, 0, 65535, alias='slave-announce-port'),
    _int('tcp-backlog', 511, 0, INT_MAX, mutable=False),
    _int('cluster-port', 0, 0, 65535, mutable=False),
    _int('cluster-announce-bus-port', 0, 0, 65535),
    _int('cluster-announce-port', 0, 0, 65535),
    _int('cluster-announce-tls-port', 0, 0, 65535),
    _int('repl-timeout', 60, 1, INT_MAX),
    _int('repl-ping-replica-period', 10, 1, INT_MAX, alias='repl-ping-slave-period'),
    _int('list-compress-depth', 0, 0, INT_MAX),
    _int('rdb-key-save-delay', 0, INT_MIN, INT_MAX, hidden=True),
    _int('key-load-delay', 0, INT_MIN, INT_MAX, hidden=True),
    _int('active-expire-effort', 1, 1, 10),
    _int('hz', 10, 0, INT_MAX),
    _int('min-replicas-to-write', 0, 0, INT_MAX, alias='min-slaves-to-write'),
    _int('min-replicas-max-lag', 10, 0, INT_MAX, alias='min-slaves-max-lag'),
    _int('watchdog-period', 0, 0, INT_MAX, hidden=True),
    _int('shutdown-timeout', 10, 0, INT_MAX),
    _int('repl-diskless-sync-max-replicas', 0, 0, INT_MAX),
    _int('maxclients', 10000, 1, UINT_MAX, unsigned=True),
    _octal('unixsocketperm', 0, 0, 511, mutable=False, unsigned=True),
    _int('socket-mark-id', 0, 0, UINT_MAX, mutable=False, unsigned=True),
    _int('max-new-connections-per-cycle', 10, 1, 1000, unsigned=True),
    _int('max-new-tls-connections-per-cycle', 1, 1, 1000, unsigned=True),
    _int('active-defrag-max-scan-fields', 1000, 1, LONG_MAX, unsigned=True),
    _int('slowlog-max-len', 128, 0, LONG_MAX, unsigned=True),
    _int('acllog-max-len', 128, 0, LONG_MAX, unsigned=True),
    _int('busy-reply-threshold', 5000, 0, LONG_MAX, alias='lua-time-limit'),
    _int('cluster-node-timeout', 15000, 0, LONG_MAX),
    _int('cluster-ping-interval', 0, 0, LONG_MAX, hidden=True),
    _int('slowlog-log-slower-than', 10000, -1, LONG_MAX),
    _int('latency-monitor-threshold', 0, 0, LONG_MAX),
    _memory('proto-max-bulk-len', 536870912, 1048576, LONG_MAX),
    _int('stream-node-max-entries', 100, 0, LONG_MAX),
    _memory('repl-backlog-size', 1048576, 1, LONG_MAX),
    _memory('maxmemory', 0, 0, ULLONG_MAX, unsigned=True),
    _memory('cluster-link-sendbuf-limit', 0, 0, ULLONG_MAX, unsigned=True),
    _int('hash-max-listpack-entries', 512,
        0, LONG_MAX, alias='hash-max-ziplist-entries', unsigned=True),
    _int('set-max-intset-entries', 512, 0, LONG_MAX, unsigned=True),
    _int('set-max-listpack-entries', 128, 0, LONG_MAX, unsigned=True),
    _int('set-max-listpack-value', 64, 0, LONG_MAX, unsigned=True),
    _int('zset-max-listpack-entries', 128,
        0, LONG_MAX, alias='zset-max-ziplist-entries', unsigned=True),
    _memory('active-defrag-ignore-bytes', 104857600, 1, LONG_MAX, unsigned=True),
    _memory('hash-max-listpack-value', 64,
        0, LONG_MAX, alias='hash-max-ziplist-value', unsigned=True),
    _memory('stream-node-max-bytes', 4096, 0, LONG_MAX, unsigned=True),
    _memory('zset-max-listpack-value', 64,
        0, LONG_MAX, alias='zset-max-ziplist-value', unsigned=True),
    _memory('hll-sparse-max-bytes', 3000, 0, LONG_MAX, unsigned=True),
    _int('tracking-table-max-keys', 1000000, 0, LONG_MAX, unsigned=True),
    _memory('client-query-buffer-limit', 1073741824, 1048576, LONG_MAX, unsigned=True),
    _memory('maxmemory-clients', 0, -100, LONG_MAX, percent=True),
    _int('repl-backlog-ttl', 3600, 0, LONG_MAX),
    _memory('auto-aof-rewrite-min-size', 67108864, 0, LONG_MAX),
    _int('loading-process-events-interval-bytes', 2097152, 1024, INT_MAX, hidden=True),
    _int('tls-port', 0, 0, 65535),
    _int('tls-session-cache-size', 20480, 0, INT_MAX),
    _int('tls-session-cache-timeout', 300, 0, INT_MAX),
    _bool('tls-cluster', False),
    _bool('tls-replication', False),
    _enum('tls-auth-clients', 'yes', ('no', 'yes', 'optional')),
    _bool('tls-prefer-server-ciphers', False),
    _bool('tls-session-caching', True),
    _string('tls-cert-file', ''),
    _string('tls-key-file', ''),
    _string('tls-key-file-pass', '', sensitive=True),
    _string('tls-client-cert-file', ''),
    _string('tls-client-key-file', ''),
    _string('tls-client-key-file-pass', '', sensitive=True),
    _string('tls-dh-params-file', ''),
    _string('tls-ca-cert-file', ''),
    _string('tls-ca-cert-dir', ''),
    _string('tls-protocols', ''),
    _string('tls-ciphers', ''),
    _string('tls-ciphersuites', ''),
    # Redis 8.2 - 8.6 (config.c of 8.6.3).
    _int('aof-load-corrupt-tail-max-size', 0, 0, LONG_MAX),
    _int('cluster-compatibility-sample-ratio', 0, 0, 100),
    _memory('cluster-slot-migration-handoff-max-lag-bytes', 1048576, 0, LONG_MAX),
    _int('cluster-slot-migration-write-pause-timeout', 10000, 0, LONG_MAX),
    _enum('cluster-slot-stats-enabled', 'no', ('no', 'yes', 'cpu', 'net', 'mem'), multi=True),
    _bool('key-memory-histograms', False),
    _int('lookahead', 16, 1, INT_MAX),
    _memory('replica-full-sync-buffer-limit', 0, 0, LONG_MAX),
    _enum('tls-auth-clients-user', 'off', ('CN', 'off')),
)

# Directives Redis reads that are not in its table: a file line of their own (include,
# rename-command, user, loadmodule, sentinel) or a multi-word value with its own parser.
SPECIAL = ("dir", "save", "client-output-buffer-limit", "oom-score-adj-values",
           "notify-keyspace-events", "bind", "replicaof", "latency-tracking-info-percentiles")
# Names Redis 7.x ignores in a config file (removed settings it still tolerates).
DEPRECATED = frozenset({"list-max-ziplist-entries", "list-max-ziplist-value",
                        "lua-replicate-commands"})

# Catalogue rows resplite acts on (its own declarations in resplite.engine.config aside).
MEANINGFUL = frozenset({
    "pidfile", "syslog-enabled", "syslog-ident", "syslog-facility", "always-show-logo",
    "set-proc-title", "oom-score-adj", "dynamic-hz", "supervised", "activerehashing",
    "active-expire-effort", "lazyfree-lazy-eviction", "lazyfree-lazy-expire",
    "lazyfree-lazy-server-del", "maxmemory-clients", "latency-monitor-threshold",
    "rdb-key-save-delay", "key-load-delay", "shutdown-on-sigterm", "shutdown-on-sigint",
    "masterauth", "masteruser", "replica-announce-ip", "replica-announce-port",
    "repl-backlog-size", "repl-ping-replica-period", "min-replicas-to-write",
    "min-replicas-max-lag", "replica-serve-stale-data",
})
