"""The names of the directives resplite acts on, for ``resplite-server --help``.

A module of names only, so that printing the help imports nothing of the server. It must
equal :func:`resplite.engine.config.implemented_directives` (a unit test compares them):
a directive given an effect in :data:`resplite.engine.config.DIRECTIVES` is added here too.
"""

IMPLEMENTED: tuple[str, ...] = (
    "acl-pubsub-default", "aclfile", "acllog-max-len", "active-expire-effort",
    "active-expire-enabled", "activerehashing", "always-show-logo", "aof-load-truncated",
    "aof-use-rdb-preamble", "appenddirname", "appendfilename", "appendfsync", "appendonly",
    "auto-aof-rewrite-min-size", "auto-aof-rewrite-percentage", "bind",
    "busy-reply-threshold", "client-output-buffer-limit", "client-query-buffer-limit",
    "cluster-enabled", "cluster-nodes", "daemonize", "databases", "dbfilename", "dir",
    "dynamic-hz", "enable-clock-command", "enable-debug-command", "enable-fault-command",
    "enable-module-command", "enable-protected-configs", "hash-max-listpack-entries",
    "hash-max-listpack-value", "hll-sparse-max-bytes", "hz", "latency-monitor-threshold",
    "latency-tracking", "latency-tracking-info-percentiles", "lazyfree-lazy-eviction",
    "lazyfree-lazy-expire", "lazyfree-lazy-server-del", "lazyfree-lazy-user-del",
    "lazyfree-lazy-user-flush", "lfu-decay-time", "lfu-log-factor", "list-compress-depth",
    "list-max-listpack-size", "logfile", "loglevel", "lua-max-memory", "masterauth",
    "masteruser", "maxclients", "maxmemory", "maxmemory-clients",
    "maxmemory-eviction-tenacity", "maxmemory-policy", "maxmemory-samples",
    "min-replicas-max-lag", "min-replicas-to-write", "notify-keyspace-events",
    "oom-score-adj", "oom-score-adj-values", "pidfile", "port", "proc-title-template",
    "protected-mode", "proto-max-bulk-len", "rdbchecksum", "rdbcompression",
    "redis-compat-version", "repl-backlog-size", "repl-ping-replica-period",
    "replica-announce-ip", "replica-announce-port", "replica-read-only",
    "replica-serve-stale-data", "replicaof", "requirepass", "save",
    "set-max-intset-entries", "set-max-listpack-entries", "set-max-listpack-value",
    "set-proc-title", "shutdown-on-sigint", "shutdown-on-sigterm",
    "slowlog-log-slower-than", "slowlog-max-len", "stop-writes-on-bgsave-error",
    "stream-idmp-duration", "stream-idmp-maxsize", "stream-node-max-bytes",
    "stream-node-max-entries", "supervised", "syslog-enabled", "syslog-facility",
    "syslog-ident", "tcp-backlog", "tcp-keepalive", "timeout", "unixsocket",
    "unixsocketperm", "uvloop", "zset-max-listpack-entries", "zset-max-listpack-value",
)
