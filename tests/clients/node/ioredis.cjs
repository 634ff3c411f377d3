// The client matrix's workload through ioredis: `node ioredis.cjs HOST PORT PREFIX`, with
// NODE_PATH at tests/node/node_modules. Prints one "PASS step", "FAIL step: why" or "SKIP
// step: why" line per step and exits 1 when a step failed. Every key and channel starts with
// PREFIX. ioredis 6 speaks RESP3 by default (HELLO 3, RESP2-shaped replies): the steps run on
// that default, and the resp3 step asks for RESP3's own shapes (replyMapping "resp3").
'use strict';
const crypto = require('node:crypto');
const Redis = require('ioredis');

const [host, portText, p] = process.argv.slice(2);
const port = Number(portText);
let failed = false;
const client = (extra = {}) =>
  new Redis({ host, port, commandTimeout: 60000, maxRetriesPerRequest: 0, ...extra });

function check(cond, what) {
  if (!cond) throw new Error(what);
}
const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);

async function step(name, fn) {
  try {
    await fn();
    console.log(`PASS ${name}`);
  } catch (err) {
    failed = true;
    console.log(`FAIL ${name}: ${err && err.message}`);
  }
}

// Resolves once a client is blocked (CLIENT LIST flags=b; its cmd= would name an earlier BLPOP
// that has returned too).
async function untilBlocked(conn, clientList) {
  const deadline = Date.now() + 60000;
  while (!(await clientList(conn)).includes(' flags=b ')) {
    check(Date.now() < deadline, 'BLPOP never blocked');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

async function main() {
  const r = client();

  await step('strings', async () => {
    await r.set(`${p}s`, 'hello');
    check((await r.append(`${p}s`, ' world')) === 11, 'APPEND');
    check((await r.get(`${p}s`)) === 'hello world', 'GET');
    check((await r.incrby(`${p}n`, 5)) === 5, 'INCRBY');
    await r.set(`${p}t`, 'v', 'EX', 100);
    const ttl = await r.ttl(`${p}t`);
    check(ttl > 0 && ttl <= 100, `TTL ${ttl}`);
  });

  await step('hashes', async () => {
    check((await r.hset(`${p}h`, { f1: 'v1', f2: 'v2' })) === 2, 'HSET');
    check(same(await r.hgetall(`${p}h`), { f1: 'v1', f2: 'v2' }), 'HGETALL');
    check((await r.hincrby(`${p}h`, 'n', 3)) === 3, 'HINCRBY');
    check((await r.hdel(`${p}h`, 'f1')) === 1, 'HDEL');
    check((await r.hlen(`${p}h`)) === 2, 'HLEN');
  });

  await step('lists_blpop', async () => {
    check((await r.rpush(`${p}l`, 'a', 'b', 'c')) === 3, 'RPUSH');
    check(same(await r.lrange(`${p}l`, 0, -1), ['a', 'b', 'c']), 'LRANGE');
    check(same(await r.blpop(`${p}l`, 5), [`${p}l`, 'a']), 'BLPOP');
    check(same(await r.blpop(`${p}empty`, `${p}l`, 5), [`${p}l`, 'b']), 'BLPOP 2 keys');
    // A BLPOP that blocks until another connection pushes.
    const other = client();
    try {
      const woken = r.blpop(`${p}wait`, 60);
      await untilBlocked(other, (c) => c.client('LIST'));
      await other.rpush(`${p}wait`, 'late');
      check(same(await woken, [`${p}wait`, 'late']), 'woken BLPOP');
    } finally {
      other.disconnect();
    }
  });

  await step('sorted_sets', async () => {
    check((await r.zadd(`${p}z`, 1, 'a', 2, 'b', 3, 'c')) === 3, 'ZADD');
    check(Number(await r.zincrby(`${p}z`, 10, 'a')) === 11, 'ZINCRBY');
    const all = await r.zrange(`${p}z`, 0, -1, 'WITHSCORES');
    check(same(all, ['b', '2', 'c', '3', 'a', '11']), `ZRANGE ${JSON.stringify(all)}`);
    check(same(await r.zrangebyscore(`${p}z`, 2, 3), ['b', 'c']), 'ZRANGEBYSCORE');
    check((await r.zrank(`${p}z`, 'a')) === 2, 'ZRANK');
    check(Number(await r.zscore(`${p}z`, 'c')) === 3, 'ZSCORE');
  });

  await step('scan', async () => {
    const all = {};
    for (let i = 0; i < 300; i++) all[`${p}scan:${i}`] = String(i);
    await r.mset(all);
    const seen = new Set();
    let cursor = '0';
    let calls = 0;
    do {
      const [next, keys] = await r.scan(cursor, 'MATCH', `${p}scan:*`, 'COUNT', 20);
      keys.forEach((k) => seen.add(k));
      cursor = next;
      check(++calls < 10000, 'SCAN did not reach cursor 0');
    } while (cursor !== '0');
    check(calls > 1, 'one SCAN call returned everything');
    check(seen.size === 300 && Object.keys(all).every((k) => seen.has(k)), 'SCAN keys');
  });

  await step('hscan', async () => {
    const all = {};
    for (let i = 0; i < 600; i++) all[`f${i}`] = String(i);
    await r.hset(`${p}bigh`, all);
    const seen = {};
    let cursor = '0';
    let calls = 0;
    do {
      const [next, kv] = await r.hscan(`${p}bigh`, cursor, 'COUNT', 20);
      for (let i = 0; i + 1 < kv.length; i += 2) seen[kv[i]] = kv[i + 1];
      cursor = next;
      check(++calls < 10000, 'HSCAN did not reach cursor 0');
    } while (cursor !== '0');
    check(calls > 1, 'one HSCAN call returned everything');
    check(Object.keys(seen).length === 600 && Object.keys(all).every((f) => seen[f] === all[f]),
      'HSCAN fields');
  });

  await step('pipeline', async () => {
    const pipe = r.pipeline();
    for (let i = 0; i < 1000; i++) pipe.incr(`${p}pipe`);
    const replies = await pipe.exec();
    check(replies.every(([err, n], i) => err === null && n === i + 1), '1,000 INCR replies');
    check((await r.get(`${p}pipe`)) === '1000', 'GET after the pipeline');
  });

  await step('multi_watch', async () => {
    const done = await r.multi().incr(`${p}tx`).incr(`${p}tx`).exec();
    check(same(done, [[null, 1], [null, 2]]), 'MULTI/EXEC');
    const other = client();
    try {
      await r.watch(`${p}w`);
      await other.set(`${p}w`, 'theirs');
      check((await r.multi().set(`${p}w`, 'mine').exec()) === null,
        'EXEC after a WATCH conflict ran');
      check((await r.get(`${p}w`)) === 'theirs', 'value after the aborted EXEC');
      await r.watch(`${p}w`);
      check(same(await r.multi().set(`${p}w`, 'mine').exec(), [[null, 'OK']]),
        'EXEC without a conflict');
      check((await r.get(`${p}w`)) === 'mine', 'value after EXEC');
    } finally {
      other.disconnect();
    }
  });

  await step('pubsub', async () => {
    const sub = client();
    try {
      const received = new Promise((resolve) => sub.on('message', (ch, msg) => resolve([ch, msg])));
      await sub.subscribe(`${p}chan`); // resolves on the server's confirmation
      check((await r.publish(`${p}chan`, 'hi')) === 1, 'PUBLISH receivers');
      check(same(await received, [`${p}chan`, 'hi']), 'message');
      await sub.unsubscribe();
    } finally {
      sub.disconnect();
    }
  });

  await step('eval_evalsha', async () => {
    const body = `return redis.call('INCRBY', KEYS[1], ARGV[1]) -- ${p}`;
    const sha = crypto.createHash('sha1').update(body).digest('hex');
    let error = null;
    await r.evalsha(sha, 1, `${p}ev`, 2).catch((err) => { error = err; });
    check(error && error.message.startsWith('NOSCRIPT'), `EVALSHA of an unknown script: ${error}`);
    check((await r.eval(body, 1, `${p}ev`, 2)) === 2, 'EVAL');
    check((await r.evalsha(sha, 1, `${p}ev`, 3)) === 5, 'EVALSHA');
    // defineCommand sends EVALSHA, and EVAL on NOSCRIPT.
    r.defineCommand('matrixEcho', { numberOfKeys: 0, lua: `return ARGV[1] .. '${p}'` });
    check((await r.matrixEcho('x')) === `x${p}`, 'defineCommand');
  });

  await step('consumer_group', async () => {
    const st = `${p}st`;
    await r.xgroup('CREATE', st, 'g', '$', 'MKSTREAM');
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push(await r.xadd(st, '*', 'n', String(i)));
    const got = await r.xreadgroup('GROUP', 'g', 'c1', 'COUNT', 10, 'STREAMS', st, '>');
    check(same(got[0][1].map((e) => e[0]), ids), 'XREADGROUP');
    check((await r.xack(st, 'g', ids[0])) === 1, 'XACK');
    const summary = await r.xpending(st, 'g');
    check(summary[0] === 2 && summary[1] === ids[1], 'XPENDING summary');
    const detail = await r.xpending(st, 'g', '-', '+', 10);
    check(same(detail.map((d) => d[0]), ids.slice(1)), 'XPENDING range');
    const claimed = await r.xautoclaim(st, 'g', 'c2', 0, '0-0');
    check(claimed[0] === '0-0' && same(claimed[1].map((e) => e[0]), ids.slice(1)), 'XAUTOCLAIM');
    check(same((await r.xpending(st, 'g'))[3], [['c2', '2']]), 'XPENDING after XAUTOCLAIM');
  });

  const pairs = (flat) => {
    const m = {};
    for (let i = 0; i + 1 < flat.length; i += 2) m[flat[i]] = flat[i + 1];
    return m;
  };
  await step('xinfo_stream_full', async () => {
    const info = pairs(await r.xinfo('STREAM', `${p}st`, 'FULL'));
    check(info.length === 3, 'length');
    const group = pairs(info.groups[0]);
    check(group.name === 'g' && group['pel-count'] === 2, 'group');
    check(same(group.consumers.map((c) => pairs(c).name), ['c1', 'c2']), 'consumers');
  });

  await step('resp3', async () => {
    const r3 = client({ protocol: 3, replyMapping: 'resp3' });
    try {
      const hello = await r3.hello(3);
      check(hello.proto === 3, `HELLO 3: ${JSON.stringify(hello)}`);
      check(same(await r3.hgetall(`${p}h`), { f2: 'v2', n: '3' }), 'HGETALL map');
      check((await r3.zscore(`${p}z`, 'c')) === 3, 'ZSCORE double');
      const info = await r3.xinfo('STREAM', `${p}st`, 'FULL');
      check(info.groups[0]['pel-count'] === 2, `XINFO STREAM FULL map: ${JSON.stringify(info)}`);
    } finally {
      r3.disconnect();
    }
  });

  r.disconnect();
}

main().then(() => process.exit(failed ? 1 : 0), (err) => {
  console.log(`FAIL setup: ${err && err.stack}`);
  process.exit(1);
});
