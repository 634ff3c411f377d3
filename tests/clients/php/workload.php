<?php
// The client matrix's workload through phpredis (Debian's php-redis) or Predis (php-predis):
// `php workload.php phpredis|predis HOST PORT PREFIX`. Prints one "PASS step", "FAIL step: why"
// or "SKIP step: why" line per step and exits 1 when a step failed. Every key and channel
// starts with PREFIX. The steps are written once against a small adapter per library.

[$_, $LIB, $HOST, $PORT, $P] = $argv;
$PORT = (int)$PORT;
$failed = false;

function check(bool $cond, string $what): void {
    if (!$cond) {
        throw new RuntimeException($what);
    }
}

function step(string $name, callable $fn): void {
    global $failed;
    try {
        $fn();
        echo "PASS $name\n";
    } catch (Throwable $e) {
        $failed = true;
        echo "FAIL $name: " . get_class($e) . ": " . $e->getMessage() . "\n";
    }
}

// Runs a command from another process once a condition holds: the subscribe and BLPOP calls
// of both libraries block this one until the command's effect arrives. $when is "subscribed"
// (the channel, $args[1], has a subscriber) or "blocked" (a client is blocked in BLPOP).
function run_when(string $when, array $args) {
    global $HOST, $PORT;
    $code = <<<'PHP'
[$_, $host, $port, $when] = $argv;
$args = array_slice($argv, 4);
$s = fsockopen($host, (int)$port, $errno, $errstr, 60);
stream_set_timeout($s, 60);
$read = function () use ($s, &$read) {
    $line = fgets($s);
    $rest = substr($line, 1, -2);
    switch ($line[0]) {
        case '$':
            return (int)$rest < 0 ? null : substr(fread_all($s, (int)$rest + 2), 0, -2);
        case '*':
            $items = [];
            for ($i = 0; $i < (int)$rest; $i++) { $items[] = $read(); }
            return $items;
        case ':':
            return (int)$rest;
        default:
            return $rest;
    }
};
function fread_all($s, int $n): string {
    $out = '';
    while (strlen($out) < $n && !feof($s)) { $out .= fread($s, $n - strlen($out)); }
    return $out;
}
$cmd = function (array $argv) use ($s, $read) {
    $out = '*' . count($argv) . "\r\n";
    foreach ($argv as $a) { $out .= '$' . strlen($a) . "\r\n$a\r\n"; }
    fwrite($s, $out);
    return $read();
};
$ready = $when === 'subscribed'
    ? fn () => $cmd(['PUBSUB', 'NUMSUB', $args[1]])[1] >= 1
    : fn () => str_contains($cmd(['CLIENT', 'LIST']), ' flags=b ');
$deadline = microtime(true) + 60;
while (!($seen = $ready()) && microtime(true) < $deadline) {
    usleep(10000);
}
$reply = $cmd($args);  // unblocks the parent either way
echo $seen ? $reply : -1;
PHP;
    $proc = proc_open([PHP_BINARY, '-r', $code, '--', $HOST, (string)$PORT, $when, ...$args],
                      [1 => ['pipe', 'w']], $pipes);
    return [$proc, $pipes[1]];
}

// What the command of run_when() answered (an integer reply; -1 when the condition never
// held), once its process has ended.
function finish(array $helper): int {
    [$proc, $out] = $helper;
    $reply = (int)stream_get_contents($out);
    fclose($out);
    proc_close($proc);
    return $reply;
}

if ($LIB === 'phpredis') {
    function client() {
        global $HOST, $PORT;
        $r = new Redis();
        $r->connect($HOST, $PORT, 60);
        $r->setOption(Redis::OPT_READ_TIMEOUT, 60);
        return $r;
    }
    function raw($r, ...$args) { return $r->rawCommand(...$args); }
    $VERSION = phpversion('redis');
} else {
    require_once '/usr/share/php/Predis/Autoloader.php';
    Predis\Autoloader::register();
    function client() {
        global $HOST, $PORT;
        return new Predis\Client(['host' => $HOST, 'port' => $PORT, 'read_write_timeout' => 60]);
    }
    function raw($r, ...$args) { return $r->executeRaw(array_map('strval', $args)); }
    $VERSION = Predis\Client::VERSION;
}
$r = client();

function pairs(array $flat): array {
    $m = [];
    for ($i = 0; $i + 1 < count($flat); $i += 2) {
        $m[$flat[$i]] = $flat[$i + 1];
    }
    return $m;
}

step('strings', function () use ($r, $P) {
    $r->set("{$P}s", 'hello');
    check($r->append("{$P}s", ' world') == 11, 'APPEND');
    check($r->get("{$P}s") === 'hello world', 'GET');
    check($r->incrby("{$P}n", 5) == 5, 'INCRBY');
    $r->setex("{$P}t", 100, 'v');
    $ttl = $r->ttl("{$P}t");
    check($ttl > 0 && $ttl <= 100, "TTL $ttl");
});

step('hashes', function () use ($r, $P) {
    $r->hmset("{$P}h", ['f1' => 'v1', 'f2' => 'v2']);
    check($r->hgetall("{$P}h") == ['f1' => 'v1', 'f2' => 'v2'], 'HGETALL');
    check($r->hincrby("{$P}h", 'n', 3) == 3, 'HINCRBY');
    check($r->hdel("{$P}h", 'f1') == 1, 'HDEL');
    check($r->hlen("{$P}h") == 2, 'HLEN');
});

step('lists_blpop', function () use ($r, $P, $LIB) {
    check($r->rpush("{$P}l", 'a', 'b', 'c') == 3, 'RPUSH');
    check($r->lrange("{$P}l", 0, -1) == ['a', 'b', 'c'], 'LRANGE');
    check($r->blpop(["{$P}l"], 5) == ["{$P}l", 'a'], 'BLPOP');
    check($r->blpop(["{$P}empty", "{$P}l"], 5) == ["{$P}l", 'b'], 'BLPOP 2 keys');
    // A BLPOP that blocks until another connection pushes.
    $pusher = run_when('blocked', ['RPUSH', "{$P}wait", 'late']);
    $got = $r->blpop(["{$P}wait"], 60);
    check(finish($pusher) == 1, 'RPUSH');
    check($got == ["{$P}wait", 'late'], 'woken BLPOP ' . json_encode($got));
});

step('sorted_sets', function () use ($r, $P, $LIB) {
    $added = $LIB === 'phpredis' ? $r->zadd("{$P}z", 1, 'a', 2, 'b', 3, 'c')
                                 : $r->zadd("{$P}z", ['a' => 1, 'b' => 2, 'c' => 3]);
    check($added == 3, 'ZADD');
    check((float)$r->zincrby("{$P}z", 10, 'a') == 11.0, 'ZINCRBY');
    $withscores = $LIB === 'phpredis' ? $r->zrange("{$P}z", 0, -1, true)
                                      : $r->zrange("{$P}z", 0, -1, ['withscores' => true]);
    check(array_map('floatval', $withscores) == ['b' => 2.0, 'c' => 3.0, 'a' => 11.0],
          'ZRANGE WITHSCORES ' . json_encode($withscores));
    check($r->zrangebyscore("{$P}z", 2, 3) == ['b', 'c'], 'ZRANGEBYSCORE');
    check($r->zrank("{$P}z", 'a') == 2, 'ZRANK');
    check((float)$r->zscore("{$P}z", 'c') == 3.0, 'ZSCORE');
});

step('scan', function () use ($r, $P, $LIB) {
    $all = [];
    for ($i = 0; $i < 300; $i++) {
        $all["{$P}scan:$i"] = (string)$i;
    }
    $r->mset($all);
    $seen = [];
    $calls = 0;
    if ($LIB === 'phpredis') {
        // phpredis keeps the cursor in $it; it once looped forever on cursors above 2^63.
        $it = null;
        do {
            $keys = $r->scan($it, "{$P}scan:*", 20);
            foreach ($keys ?: [] as $k) { $seen[$k] = true; }
            check(++$calls < 10000, 'SCAN did not reach cursor 0');
        } while ($it > 0);
    } else {
        $cursor = '0';
        do {
            [$cursor, $keys] = $r->scan($cursor, ['match' => "{$P}scan:*", 'count' => 20]);
            foreach ($keys as $k) { $seen[$k] = true; }
            check(++$calls < 10000, 'SCAN did not reach cursor 0');
        } while ($cursor !== '0');
    }
    check($calls > 1, 'one SCAN call returned everything');
    check(count($seen) == 300 && array_diff_key($all, $seen) == [], 'SCAN keys: ' . count($seen));
});

step('hscan', function () use ($r, $P, $LIB) {
    $all = [];
    for ($i = 0; $i < 600; $i++) {
        $all["f$i"] = (string)$i;
    }
    $r->hmset("{$P}bigh", $all);
    $seen = [];
    $calls = 0;
    if ($LIB === 'phpredis') {
        $it = null;
        do {
            $fields = $r->hscan("{$P}bigh", $it, '', 20);
            foreach ($fields ?: [] as $f => $v) { $seen[$f] = $v; }
            check(++$calls < 10000, 'HSCAN did not reach cursor 0');
        } while ($it > 0);
    } else {
        $cursor = '0';
        do {
            [$cursor, $fields] = $r->hscan("{$P}bigh", $cursor, ['count' => 20]);
            foreach ($fields as $f => $v) { $seen[$f] = $v; }
            check(++$calls < 10000, 'HSCAN did not reach cursor 0');
        } while ($cursor !== '0');
    }
    check($calls > 1, 'one HSCAN call returned everything');
    check($seen == $all, 'HSCAN fields: ' . count($seen));
});

step('pipeline', function () use ($r, $P, $LIB) {
    if ($LIB === 'phpredis') {
        $pipe = $r->multi(Redis::PIPELINE);
        for ($i = 0; $i < 1000; $i++) { $pipe->incr("{$P}pipe"); }
        $replies = $pipe->exec();
    } else {
        $replies = $r->pipeline(function ($pipe) use ($P) {
            for ($i = 0; $i < 1000; $i++) { $pipe->incr("{$P}pipe"); }
        });
    }
    check($replies == range(1, 1000), '1,000 INCR replies');
    check($r->get("{$P}pipe") === '1000', 'GET after the pipeline');
});

step('multi_watch', function () use ($r, $P, $LIB) {
    $other = client();
    if ($LIB === 'phpredis') {
        check($r->multi()->incr("{$P}tx")->incr("{$P}tx")->exec() == [1, 2], 'MULTI/EXEC');
        $r->watch("{$P}w");
        $other->set("{$P}w", 'theirs');
        check($r->multi()->set("{$P}w", 'mine')->exec() === false, 'EXEC after a WATCH conflict');
        check($r->get("{$P}w") === 'theirs', 'value after the aborted EXEC');
        $r->watch("{$P}w");
        check($r->multi()->set("{$P}w", 'mine')->exec() == [true], 'EXEC without a conflict');
    } else {
        $tx = $r->transaction();
        $tx->incr("{$P}tx");
        $tx->incr("{$P}tx");
        check($tx->execute() == [1, 2], 'MULTI/EXEC');
        $aborted = false;
        try {
            // Predis sends WATCH with the block's first command: the conflicting write
            // comes after it.
            $r->transaction(['watch' => "{$P}w", 'cas' => true],
                function ($tx) use ($other, $P) {
                    $tx->get("{$P}w");
                    $other->set("{$P}w", 'theirs');
                    $tx->multi();
                    $tx->set("{$P}w", 'mine');
                });
        } catch (Predis\Transaction\AbortedMultiExecException $e) {
            $aborted = true;
        }
        check($aborted, 'EXEC after a WATCH conflict was not aborted');
        check($r->get("{$P}w") === 'theirs', 'value after the aborted EXEC');
        $done = $r->transaction(['watch' => "{$P}w", 'cas' => true], function ($tx) use ($P) {
            $tx->get("{$P}w");
            $tx->multi();
            $tx->set("{$P}w", 'mine');
        });
        check(count($done) == 1 && (string)$done[0] === 'OK', 'EXEC without a conflict');
    }
    check($r->get("{$P}w") === 'mine', 'value after EXEC');
});

step('pubsub', function () use ($P, $LIB) {
    $sub = client();
    $publisher = run_when('subscribed', ['PUBLISH', "{$P}chan", 'hi']);
    $got = null;
    if ($LIB === 'phpredis') {
        // phpredis 5 has no way out of subscribe() from its callback: after UNSUBSCRIBE, or an
        // exception, it goes on reading until its read timeout (phpredis issue 2060). Closing
        // the connection ends the loop at once, with "Connection closed".
        try {
            $sub->subscribe(["{$P}chan"], function ($redis, $channel, $msg) use (&$got) {
                $got = [$channel, $msg];
                $redis->close();
            });
        } catch (RedisException $e) {
            check($got !== null, 'subscribe failed: ' . $e->getMessage());
        }
    } else {
        $loop = $sub->pubSubLoop();
        $loop->subscribe("{$P}chan");
        foreach ($loop as $msg) {
            if ($msg->kind === 'message') {
                $got = [$msg->channel, $msg->payload];
                $loop->unsubscribe();
            }
        }
        unset($loop);
    }
    check(finish($publisher) == 1, 'PUBLISH receivers');
    check($got == ["{$P}chan", 'hi'], 'message ' . json_encode($got));
});

step('eval_evalsha', function () use ($r, $P, $LIB) {
    $body = "return redis.call('INCRBY', KEYS[1], ARGV[1]) -- $P";
    $sha = sha1($body);
    if ($LIB === 'phpredis') {
        check($r->evalsha($sha, ["{$P}ev", 2], 1) === false, 'EVALSHA of an unknown script');
        check(str_starts_with($r->getLastError(), 'NOSCRIPT'), 'error ' . $r->getLastError());
        $r->clearLastError();
        check($r->eval($body, ["{$P}ev", 2], 1) == 2, 'EVAL');
        check($r->evalsha($sha, ["{$P}ev", 3], 1) == 5, 'EVALSHA');
    } else {
        try {
            $r->evalsha($sha, 1, "{$P}ev", 2);
            throw new RuntimeException('EVALSHA of an unknown script succeeded');
        } catch (Predis\Response\ServerException $e) {
            check($e->getErrorType() === 'NOSCRIPT', $e->getMessage());
        }
        check($r->eval($body, 1, "{$P}ev", 2) == 2, 'EVAL');
        check($r->evalsha($sha, 1, "{$P}ev", 3) == 5, 'EVALSHA');
    }
});

step('consumer_group', function () use ($r, $P) {
    $st = "{$P}st";
    raw($r, 'XGROUP', 'CREATE', $st, 'g', '$', 'MKSTREAM');
    $ids = [];
    for ($i = 0; $i < 3; $i++) {
        $ids[] = raw($r, 'XADD', $st, '*', 'n', (string)$i);
    }
    $got = raw($r, 'XREADGROUP', 'GROUP', 'g', 'c1', 'COUNT', 10, 'STREAMS', $st, '>');
    check(array_column($got[0][1], 0) == $ids, 'XREADGROUP');
    check(raw($r, 'XACK', $st, 'g', $ids[0]) == 1, 'XACK');
    $summary = raw($r, 'XPENDING', $st, 'g');
    check($summary[0] == 2 && $summary[1] === $ids[1], 'XPENDING summary');
    check(array_column(raw($r, 'XPENDING', $st, 'g', '-', '+', 10), 0) == array_slice($ids, 1),
          'XPENDING range');
    $claimed = raw($r, 'XAUTOCLAIM', $st, 'g', 'c2', 0, '0-0');
    check($claimed[0] === '0-0' && array_column($claimed[1], 0) == array_slice($ids, 1),
          'XAUTOCLAIM');
    check(raw($r, 'XPENDING', $st, 'g')[3] == [['c2', '2']], 'XPENDING after XAUTOCLAIM');
});

step('xinfo_stream_full', function () use ($r, $P) {
    $info = pairs(raw($r, 'XINFO', 'STREAM', "{$P}st", 'FULL'));
    check($info['length'] == 3, 'length');
    $group = pairs($info['groups'][0]);
    check($group['name'] === 'g' && $group['pel-count'] == 2, 'group');
    $names = array_map(fn ($c) => pairs($c)['name'], $group['consumers']);
    check($names == ['c1', 'c2'], 'consumers ' . json_encode($names));
});

echo "SKIP resp3: $LIB $VERSION speaks RESP2 only\n";
exit($failed ? 1 : 0);
