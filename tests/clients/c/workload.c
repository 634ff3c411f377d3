/* The client matrix's workload through hiredis (Debian's libhiredis-dev): `workload HOST PORT
 * PREFIX`. Prints one "PASS step", "FAIL step: why" or "SKIP step: why" line per step and exits
 * 1 when a step failed. Every key and channel starts with PREFIX. */
#include <hiredis/hiredis.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *host, *p;
static int port, failed;
static redisContext *c;
static char why[512];

#define CHECK(cond, ...)                                   \
    do {                                                   \
        if (!(cond)) {                                     \
            snprintf(why, sizeof why, __VA_ARGS__);        \
            return 0;                                      \
        }                                                  \
    } while (0)

static redisContext *dial(void) {
    struct timeval sixty = {60, 0};
    redisContext *ctx = redisConnectWithTimeout(host, port, sixty);
    if (ctx == NULL || ctx->err) {
        fprintf(stderr, "cannot connect: %s\n", ctx ? ctx->errstr : "out of memory");
        exit(2);
    }
    redisSetTimeout(ctx, sixty);
    return ctx;
}

/* Every reply of a step is kept until the step ends, then freed. */
static redisReply *kept[4096];
static int nkept;

static redisReply *keep(redisReply *reply) {
    if (reply != NULL && nkept < 4096) kept[nkept++] = reply;
    return reply;
}

static redisReply *cmd(redisContext *ctx, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    redisReply *reply = redisvCommand(ctx, fmt, ap);
    va_end(ap);
    return keep(reply);
}

static redisReply *argv_cmd(int argc, const char **argv) {
    return keep(redisCommandArgv(c, argc, argv, NULL));
}

static int is_int(redisReply *r, long long v) {
    return r && r->type == REDIS_REPLY_INTEGER && r->integer == v;
}
static int is_str(redisReply *r, const char *s) {
    return r && (r->type == REDIS_REPLY_STRING || r->type == REDIS_REPLY_STATUS) &&
           strcmp(r->str, s) == 0;
}
static int is_array(redisReply *r, size_t n) {
    return r && r->type == REDIS_REPLY_ARRAY && r->elements == n;
}
/* The value of `key` in a flat [k1, v1, k2, v2, ...] array, or NULL. */
static redisReply *field(redisReply *r, const char *key) {
    if (r == NULL || r->type != REDIS_REPLY_ARRAY) return NULL;
    for (size_t i = 0; i + 1 < r->elements; i += 2)
        if (is_str(r->element[i], key)) return r->element[i + 1];
    return NULL;
}

static void step(const char *name, int (*fn)(void)) {
    why[0] = 0;
    nkept = 0;
    int ok = fn();
    for (int i = 0; i < nkept; i++) freeReplyObject(kept[i]);
    if (ok) {
        printf("PASS %s\n", name);
    } else {
        failed = 1;
        printf("FAIL %s: %s\n", name, why);
    }
    fflush(stdout);
}

static int strings(void) {
    cmd(c, "SET %ss hello", p);
    CHECK(is_int(cmd(c, "APPEND %ss %s", p, " world"), 11), "APPEND");
    CHECK(is_str(cmd(c, "GET %ss", p), "hello world"), "GET");
    CHECK(is_int(cmd(c, "INCRBY %sn 5", p), 5), "INCRBY");
    cmd(c, "SET %st v EX 100", p);
    redisReply *ttl = cmd(c, "TTL %st", p);
    CHECK(ttl && ttl->type == REDIS_REPLY_INTEGER && ttl->integer > 0 && ttl->integer <= 100,
          "TTL");
    return 1;
}

static int hashes(void) {
    CHECK(is_int(cmd(c, "HSET %sh f1 v1 f2 v2", p), 2), "HSET");
    redisReply *all = cmd(c, "HGETALL %sh", p);
    CHECK(is_array(all, 4) && is_str(field(all, "f1"), "v1") && is_str(field(all, "f2"), "v2"),
          "HGETALL");
    CHECK(is_int(cmd(c, "HINCRBY %sh n 3", p), 3), "HINCRBY");
    CHECK(is_int(cmd(c, "HDEL %sh f1", p), 1), "HDEL");
    CHECK(is_int(cmd(c, "HLEN %sh", p), 2), "HLEN");
    return 1;
}

static int lists_blpop(void) {
    CHECK(is_int(cmd(c, "RPUSH %sl a b c", p), 3), "RPUSH");
    redisReply *all = cmd(c, "LRANGE %sl 0 -1", p);
    CHECK(is_array(all, 3) && is_str(all->element[0], "a") && is_str(all->element[2], "c"),
          "LRANGE");
    redisReply *got = cmd(c, "BLPOP %sl 5", p);
    CHECK(is_array(got, 2) && is_str(got->element[1], "a"), "BLPOP");
    got = cmd(c, "BLPOP %sempty %sl 5", p, p);
    char key[256];
    snprintf(key, sizeof key, "%sl", p);
    CHECK(is_array(got, 2) && is_str(got->element[0], key) && is_str(got->element[1], "b"),
          "BLPOP 2 keys");
    /* A BLPOP that blocks until another connection pushes: sent, not waited for. */
    redisAppendCommand(c, "BLPOP %swait 60", p);
    int written = 0;
    while (!written) CHECK(redisBufferWrite(c, &written) == REDIS_OK, "sending BLPOP");
    redisContext *other = dial();
    int blocked = 0;
    for (int i = 0; i < 6000 && !blocked; i++) {  /* 60 s at most */
        redisReply *list = redisCommand(other, "CLIENT LIST");
        blocked = list && list->type == REDIS_REPLY_STRING && strstr(list->str, " flags=b ");
        if (list) freeReplyObject(list);
        if (!blocked) nanosleep(&(struct timespec){0, 10000000}, NULL);
    }
    if (blocked) keep(redisCommand(other, "RPUSH %swait late", p));
    redisFree(other);
    CHECK(blocked, "BLPOP never blocked");
    void *woken = NULL;
    CHECK(redisGetReply(c, &woken) == REDIS_OK, "woken BLPOP: %s", c->errstr);
    keep(woken);
    CHECK(is_array(woken, 2) && is_str(((redisReply *)woken)->element[1], "late"), "woken BLPOP");
    return 1;
}

static int sorted_sets(void) {
    CHECK(is_int(cmd(c, "ZADD %sz 1 a 2 b 3 c", p), 3), "ZADD");
    CHECK(is_str(cmd(c, "ZINCRBY %sz 10 a", p), "11"), "ZINCRBY");
    redisReply *all = cmd(c, "ZRANGE %sz 0 -1 WITHSCORES", p);
    CHECK(is_array(all, 6) && is_str(all->element[0], "b") && is_str(all->element[5], "11"),
          "ZRANGE WITHSCORES");
    redisReply *mid = cmd(c, "ZRANGEBYSCORE %sz 2 3", p);
    CHECK(is_array(mid, 2) && is_str(mid->element[0], "b"), "ZRANGEBYSCORE");
    CHECK(is_int(cmd(c, "ZRANK %sz a", p), 2), "ZRANK");
    CHECK(is_str(cmd(c, "ZSCORE %sz c", p), "3"), "ZSCORE");
    return 1;
}

/* Iterates SCAN (over PREFIXscan:N keys) or HSCAN (over fN fields) to cursor 0, marking each
 * N returned in seen[0..n) (a key may come twice while the table grows, none may be
 * missed); returns the number of calls, or -1. */
static int scan_all(int hash, char *seen, int n) {
    char cursor[64] = "0";
    int calls = 0;
    size_t skip = hash ? 1 : strlen(p) + strlen("scan:");
    memset(seen, 0, n);
    do {
        redisReply *r = hash ? redisCommand(c, "HSCAN %sbigh %s COUNT 20", p, cursor)
                             : redisCommand(c, "SCAN %s MATCH %sscan:* COUNT 20", cursor, p);
        if (!is_array(r, 2)) {
            if (r) freeReplyObject(r);
            return -1;
        }
        snprintf(cursor, sizeof cursor, "%s", r->element[0]->str);
        redisReply *items = r->element[1];
        for (size_t i = 0; i < items->elements; i += hash ? 2 : 1) {
            int k = atoi(items->element[i]->str + skip);
            if (k >= 0 && k < n) seen[k] = 1;
        }
        freeReplyObject(r);
        if (++calls >= 10000) return -1;
    } while (strcmp(cursor, "0") != 0);
    return calls;
}

static int all_seen(const char *seen, int n) {
    for (int i = 0; i < n; i++)
        if (!seen[i]) return 0;
    return 1;
}

static int scan(void) {
    const char *argv[601];
    char buf[300][64];
    argv[0] = "MSET";
    for (int i = 0; i < 300; i++) {
        snprintf(buf[i], sizeof buf[i], "%sscan:%d", p, i);
        argv[1 + 2 * i] = buf[i];
        argv[2 + 2 * i] = "x";
    }
    CHECK(is_str(argv_cmd(601, argv), "OK"), "MSET");
    char seen[300];
    int calls = scan_all(0, seen, 300);
    CHECK(calls > 1, "SCAN took %d calls", calls);
    CHECK(all_seen(seen, 300), "SCAN missed keys");
    return 1;
}

static int hscan(void) {
    const char *argv[1202];
    char buf[600][16];
    argv[0] = "HSET";
    char key[256];
    snprintf(key, sizeof key, "%sbigh", p);
    argv[1] = key;
    for (int i = 0; i < 600; i++) {
        snprintf(buf[i], sizeof buf[i], "f%d", i);
        argv[2 + 2 * i] = buf[i];
        argv[3 + 2 * i] = buf[i];
    }
    CHECK(is_int(argv_cmd(1202, argv), 600), "HSET");
    char seen[600];
    int calls = scan_all(1, seen, 600);
    CHECK(calls > 1, "HSCAN took %d calls", calls);
    CHECK(all_seen(seen, 600), "HSCAN missed fields");
    return 1;
}

static int pipeline(void) {
    for (int i = 0; i < 1000; i++) redisAppendCommand(c, "INCR %spipe", p);
    for (int i = 1; i <= 1000; i++) {
        void *reply;
        CHECK(redisGetReply(c, &reply) == REDIS_OK, "reply %d: %s", i, c->errstr);
        int right = is_int(reply, i);
        freeReplyObject(reply);
        CHECK(right, "reply %d", i);
    }
    CHECK(is_str(cmd(c, "GET %spipe", p), "1000"), "GET after the pipeline");
    return 1;
}

static int multi_watch(void) {
    cmd(c, "MULTI");
    cmd(c, "INCR %stx", p);
    cmd(c, "INCR %stx", p);
    redisReply *done = cmd(c, "EXEC");
    CHECK(is_array(done, 2) && is_int(done->element[1], 2), "MULTI/EXEC");
    redisContext *other = dial();
    cmd(c, "WATCH %sw", p);
    cmd(other, "SET %sw theirs", p);
    cmd(c, "MULTI");
    cmd(c, "SET %sw mine", p);
    redisReply *aborted = cmd(c, "EXEC");
    redisFree(other);
    CHECK(aborted && aborted->type == REDIS_REPLY_NIL, "EXEC after a WATCH conflict ran");
    CHECK(is_str(cmd(c, "GET %sw", p), "theirs"), "value after the aborted EXEC");
    cmd(c, "WATCH %sw", p);
    cmd(c, "MULTI");
    cmd(c, "SET %sw mine", p);
    CHECK(is_array(cmd(c, "EXEC"), 1), "EXEC without a conflict");
    CHECK(is_str(cmd(c, "GET %sw", p), "mine"), "value after EXEC");
    return 1;
}

static int pubsub(void) {
    redisContext *sub = dial();
    redisReply *confirm = cmd(sub, "SUBSCRIBE %schan", p);
    int ok = is_array(confirm, 3) && is_str(confirm->element[0], "subscribe");
    ok = ok && is_int(cmd(c, "PUBLISH %schan hi", p), 1);
    void *msg = NULL;
    ok = ok && redisGetReply(sub, &msg) == REDIS_OK;
    keep(msg);
    redisFree(sub);
    CHECK(ok, "subscribe or publish");
    CHECK(is_array(msg, 3) && is_str(((redisReply *)msg)->element[0], "message") &&
              is_str(((redisReply *)msg)->element[2], "hi"),
          "message");
    return 1;
}

static int eval_evalsha(void) {
    char body[256];
    snprintf(body, sizeof body, "return redis.call('INCRBY', KEYS[1], ARGV[1]) -- %s", p);
    /* The body's digest, from Lua's sha1hex: no SHA-1 in libc, and the body stays unknown. */
    redisReply *sha = cmd(c, "EVAL %s 0 %s", "return redis.sha1hex(ARGV[1])", body);
    CHECK(sha && sha->type == REDIS_REPLY_STRING, "sha1hex");
    redisReply *missing = cmd(c, "EVALSHA %s 1 %sev 2", sha->str, p);
    CHECK(missing && missing->type == REDIS_REPLY_ERROR && strncmp(missing->str, "NOSCRIPT", 8) == 0,
          "EVALSHA of an unknown script");
    CHECK(is_int(cmd(c, "EVAL %s 1 %sev 2", body, p), 2), "EVAL");
    CHECK(is_int(cmd(c, "EVALSHA %s 1 %sev 3", sha->str, p), 5), "EVALSHA");
    return 1;
}

static int consumer_group(void) {
    cmd(c, "XGROUP CREATE %sst g $ MKSTREAM", p);
    char ids[3][64];
    for (int i = 0; i < 3; i++) {
        redisReply *id = cmd(c, "XADD %sst * n %d", p, i);
        CHECK(id && id->type == REDIS_REPLY_STRING, "XADD");
        snprintf(ids[i], sizeof ids[i], "%s", id->str);
    }
    redisReply *got = cmd(c, "XREADGROUP GROUP g c1 COUNT 10 STREAMS %sst >", p);
    CHECK(is_array(got, 1) && is_array(got->element[0]->element[1], 3), "XREADGROUP");
    CHECK(is_int(cmd(c, "XACK %sst g %s", p, ids[0]), 1), "XACK");
    redisReply *summary = cmd(c, "XPENDING %sst g", p);
    CHECK(is_array(summary, 4) && is_int(summary->element[0], 2) &&
              is_str(summary->element[1], ids[1]), "XPENDING summary");
    CHECK(is_array(cmd(c, "XPENDING %sst g - + 10", p), 2), "XPENDING range");
    redisReply *claimed = cmd(c, "XAUTOCLAIM %sst g c2 0 0-0", p);
    CHECK(claimed && claimed->type == REDIS_REPLY_ARRAY && is_str(claimed->element[0], "0-0") &&
              is_array(claimed->element[1], 2), "XAUTOCLAIM");
    redisReply *after = cmd(c, "XPENDING %sst g", p);
    CHECK(is_array(after, 4) && is_array(after->element[3], 1) &&
              is_str(after->element[3]->element[0]->element[0], "c2"), "XPENDING after");
    return 1;
}

static int xinfo_stream_full(void) {
    redisReply *info = cmd(c, "XINFO STREAM %sst FULL", p);
    CHECK(is_int(field(info, "length"), 3), "length");
    redisReply *groups = field(info, "groups");
    CHECK(groups && groups->elements == 1, "groups");
    redisReply *g = groups->element[0];
    CHECK(is_str(field(g, "name"), "g") && is_int(field(g, "pel-count"), 2), "group");
    redisReply *consumers = field(g, "consumers");
    CHECK(is_array(consumers, 2) && is_str(field(consumers->element[1], "name"), "c2"),
          "consumers");
    return 1;
}

int main(int argc, char **argv) {
    if (argc != 4) return 2;
    host = argv[1], port = atoi(argv[2]), p = argv[3];
    c = dial();
    step("strings", strings);
    step("hashes", hashes);
    step("lists_blpop", lists_blpop);
    step("sorted_sets", sorted_sets);
    step("scan", scan);
    step("hscan", hscan);
    step("pipeline", pipeline);
    step("multi_watch", multi_watch);
    step("pubsub", pubsub);
    step("eval_evalsha", eval_evalsha);
    step("consumer_group", consumer_group);
    step("xinfo_stream_full", xinfo_stream_full);
    printf("SKIP resp3: hiredis %d.%d.%d speaks RESP2 only (RESP3 came with hiredis 1.0)\n",
           HIREDIS_MAJOR, HIREDIS_MINOR, HIREDIS_PATCH);
    redisFree(c);
    return failed;
}
