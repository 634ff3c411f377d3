// The client matrix's workload through node-redis (the `redis` package): `node
// node_redis.cjs HOST PORT PREFIX`, with NODE_PATH at tests/node/node_modules. Prints one
// "PASS step", "FAIL step: why" or "SKIP step: why" line per step and exits 1 when a step
// failed. Every key and channel starts with PREFIX. The steps use node-redis's typed commands
// (its own reply parsers) on its default RESP2; the resp3 step connects with RESP: 3.
'use strict';
const crypto = require('node:crypto');
const { createClient, defineScript } = require('redis');

const [host, portText, p] = process.argv.slice(2);
const port = Number(portText);
let failed = false;
const echo = defineScript({
  NUMBER_OF_KEYS: 0,
  SCRIPT: `return ARGV[1] .. '${p}'`,
  parseCommand(parser, value) { parser.push(value); },
  transformReply(reply) { return reply; },
});
const client = (extra = {}) =>
  createClient({ socket: { host, port, connectTimeout: 60000 }, scripts: { echo }, ...extra })
    .on('error', () => {})
    .connect();

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
  const r = await client();

  await step('strings', async () => {
    await r.set(`${p}s`, 'hello');
    check((await r.append(`${p}s`, ' world')) === 11, 'APPEND');
    check((await r.get(`${p}s`)) === 'hello world', 'GET');
    check((await r.incrBy(`${p}n`, 5)) === 5, 'INCRBY');
    await r.set(`${p}t`, 'v', { EX: 100 });
    const ttl = await r.ttl(`${p}t`);
    check(ttl > 0 && ttl <= 100, `TTL ${ttl}`);
  });

  await step('hashes', async () => {
    check((await r.hSet(`${p}h`, { f1: 'v1', f2: 'v2' })) === 2, 'HSET');
    check(same({ ...(await r.hGetAll(`${p}h`)) }, { f1: 'v1', f2: 'v2' }), 'HGETALL');
    check((await r.hIncrBy(`${p}h`, 'n', 3)) === 3, 'HINCRBY');
    check((await r.hDel(`${p}h`, 'f1')) === 1, 'HDEL');
    check((await r.hLen(`${p}h`)) === 2, 'HLEN');
  });

  await step('lists_blpop', async () => {
    check((await r.rPush(`${p}l`, ['a', 'b', 'c'])) === 3, 'RPUSH');
    check(same(await r.lRange(`${p}l`, 0, -1), ['a', 'b', 'c']), 'LRANGE');
    check(same(await r.blPop(`${p}l`, 5), { key: `${p}l`, element: 'a' }), 'BLPOP');
    check(same(await r.blPop([`${p}empty`, `${p}l`], 5), { key: `${p}l`, element: 'b' }),
      'BLPOP 2 keys');
    // A BLPOP that blocks until another connection pushes.
    const other = await client();
    try {
      const woken = r.blPop(`${p}wait`, 60);
      await untilBlocked(other, (c) => c.sendCommand(['CLIENT', 'LIST']));
      await other.rPush(`${p}wait`, 'late');
      check(same(await woken, { key: `${p}wait`, element: 'late' }), 'woken BLPOP');
    } finally {
      await other.close();
    }
  });

  await step('sorted_sets', async () => {
    check((await r.zAdd(`${p}z`, [{ score: 1, value: 'a' }, { score: 2, value: 'b' },
      { score: 3, value: 'c' }])) === 3, 'ZADD');
    check((await r.zIncrBy(`${p}z`, 10, 'a')) === 11, 'ZINCRBY');
    const all = await r.zRangeWithScores(`${p}z`, 0, -1);
    check(same(all, [{ value: 'b', score: 2 }, { value: 'c', score: 3 }, { value: 'a', score: 11 }]),
      `ZRANGE WITHSCORES ${JSON.stringify(all)}`);
    check(same(await r.zRangeByScore(`${p}z`, 2, 3), ['b', 'c']), 'ZRANGEBYSCORE');
    check((await r.zRank(`${p}z`, 'a')) === 2, 'ZRANK');
    check((await r.zScore(`${p}z`, 'c')) === 3, 'ZSCORE');
  });

  await step('scan', async () => {
    const all = {};
    for (let i = 0; i < 300; i++) all[`${p}scan:${i}`] = String(i);
    await r.mSet(all);
    const seen = new Set();
    let cursor = '0';
    let calls = 0;
    do {
      const reply = await r.scan(cursor, { MATCH: `${p}scan:*`, COUNT: 20 });
      reply.keys.forEach((k) => seen.add(k));
      cursor = String(reply.cursor);
      check(++calls < 10000, 'SCAN did not reach cursor 0');
    } while (cursor !== '0');
    check(calls > 1, 'one SCAN call returned everything');
    check(seen.size === 300 && Object.keys(all).every((k) => seen.has(k)), 'SCAN keys');
  });

  await step('hscan', async () => {
    const all = {};
    for (let i = 0; i < 600; i++) all[`f${i}`] = String(i);
    await r.hSet(`${p}bigh`, all);
    const seen = {};
    let cursor = '0';
    let calls = 0;
    do {
      const reply = await r.hScan(`${p}bigh`, cursor, { COUNT: 20 });
      for (const { field, value } of reply.entries) seen[field] = value;
      cursor = String(reply.cursor);
      check(++calls < 10000, 'HSCAN did not reach cursor 0');
    } while (cursor !== '0');
    check(calls > 1, 'one HSCAN call returned everything');
    check(Object.keys(seen).length === 600 && Object.keys(all).every((f) => seen[f] === all[f]),
      'HSCAN fields');
  });

  await step('pipeline', async () => {
    const pipe = r.multi();
    for (let i = 0; i < 1000; i++) pipe.incr(`${p}pipe`);
    const replies = await pipe.execAsPipeline();
    check(replies.length === 1000 && replies.every((n, i) => n === i + 1), '1,000 INCR replies');
    check((await r.get(`${p}pipe`)) === '1000', 'GET after the pipeline');
  });

  await step('multi_watch', async () => {
    check(same(await r.multi().incr(`${p}tx`).incr(`${p}tx`).exec(), [1, 2]), 'MULTI/EXEC');
    const other = await client();
    try {
      await r.watch(`${p}w`);
      await other.set(`${p}w`, 'theirs');
      let aborted = false;
      try {
        await r.multi().set(`${p}w`, 'mine').exec();
      } catch (err) {
        aborted = err.constructor.name === 'WatchError';
      }
      check(aborted, 'EXEC after a WATCH conflict ran');
      check((await r.get(`${p}w`)) === 'theirs', 'value after the aborted EXEC');
      await r.watch(`${p}w`);
      check(same(await r.multi().set(`${p}w`, 'mine').exec(), ['OK']), 'EXEC without a conflict');
      check((await r.get(`${p}w`)) === 'mine', 'value after EXEC');
    } finally {
      await other.close();
    }
  });

  await step('pubsub', async () => {
    const sub = await client();
    try {
      let deliver;
      const received = new Promise((resolve) => { deliver = resolve; });
      await sub.subscribe(`${p}chan`, (msg, ch) => deliver([ch, msg])); // confirmed
      check((await r.publish(`${p}chan`, 'hi')) === 1, 'PUBLISH receivers');
      check(same(await received, [`${p}chan`, 'hi']), 'message');
      await sub.unsubscribe();
    } finally {
      await sub.close();
    }
  });

  await step('eval_evalsha', async () => {
    const body = `return redis.call('INCRBY', KEYS[1], ARGV[1]) -- ${p}`;
    const sha = crypto.createHash('sha1').update(body).digest('hex');
    let error = null;
    await r.evalSha(sha, { keys: [`${p}ev`], arguments: ['2'] }).catch((err) => { error = err; });
    check(error && error.message.startsWith('NOSCRIPT'), `EVALSHA of an unknown script: ${error}`);
    check((await r.eval(body, { keys: [`${p}ev`], arguments: ['2'] })) === 2, 'EVAL');
    check((await r.evalSha(sha, { keys: [`${p}ev`], arguments: ['3'] })) === 5, 'EVALSHA');
    // A defined script is sent as EVALSHA, and as EVAL on NOSCRIPT.
    check((await r.echo('x')) === `x${p}`, 'defineScript');
  });

  await step('consumer_group', async () => {
    const st = `${p}st`;
    await r.xGroupCreate(st, 'g', '$', { MKSTREAM: true });
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push(await r.xAdd(st, '*', { n: String(i) }));
    const got = await r.xReadGroup('g', 'c1', { key: st, id: '>' }, { COUNT: 10 });
    check(same(got[0].messages.map((m) => m.id), ids), `XREADGROUP ${JSON.stringify(got)}`);
    check((await r.xAck(st, 'g', ids[0])) === 1, 'XACK');
    const summary = await r.xPending(st, 'g');
    check(summary.pending === 2 && summary.firstId === ids[1], 'XPENDING summary');
    const detail = await r.xPendingRange(st, 'g', '-', '+', 10);
    check(same(detail.map((d) => d.id), ids.slice(1)), 'XPENDING range');
    const claimed = await r.xAutoClaim(st, 'g', 'c2', 0, '0-0');
    check(claimed.nextId === '0-0' && same(claimed.messages.map((m) => m.id), ids.slice(1)),
      `XAUTOCLAIM ${JSON.stringify(claimed)}`);
    const after = await r.xPending(st, 'g');
    check(same(after.consumers.map((c) => [c.name, Number(c.deliveriesCounter)]), [['c2', 2]]),
      `XPENDING after XAUTOCLAIM ${JSON.stringify(after)}`);
  });

  // node-redis 6 parses XINFO STREAM FULL into objects even through sendCommand; an older
  // one gives the flat [key, value, ...] arrays.
  const pairs = (flat) => {
    if (!Array.isArray(flat)) return flat;
    const m = {};
    for (let i = 0; i + 1 < flat.length; i += 2) m[flat[i]] = flat[i + 1];
    return m;
  };
  await step('xinfo_stream_full', async () => {
    // node-redis's own XINFO STREAM parser, then FULL.
    const summary = await r.xInfoStream(`${p}st`);
    check(summary.length === 3 && summary.groups === 1, `XINFO STREAM ${JSON.stringify(summary)}`);
    const info = pairs(await r.sendCommand(['XINFO', 'STREAM', `${p}st`, 'FULL']));
    check(info.length === 3, `length: ${JSON.stringify(info)}`);
    const group = pairs(info.groups[0]);
    check(group.name === 'g' && group['pel-count'] === 2, 'group');
    check(same(group.consumers.map((c) => pairs(c).name), ['c1', 'c2']), 'consumers');
  });

  await step('resp3', async () => {
    const r3 = await client({ RESP: 3 });
    try {
      const hello = await r3.sendCommand(['HELLO', '3']);
      check(hello.proto === 3, `HELLO 3: ${JSON.stringify(hello)}`);
      check(same({ ...(await r3.hGetAll(`${p}h`)) }, { f2: 'v2', n: '3' }), 'HGETALL map');
      check((await r3.zScore(`${p}z`, 'c')) === 3, 'ZSCORE double');
      const info = await r3.sendCommand(['XINFO', 'STREAM', `${p}st`, 'FULL']);
      check(info.groups[0]['pel-count'] === 2, `XINFO STREAM FULL map: ${JSON.stringify(info)}`);
    } finally {
      await r3.close();
    }
  });

  await r.close();
}

main().then(() => process.exit(failed ? 1 : 0), (err) => {
  console.log(`FAIL setup: ${err && err.stack}`);
  process.exit(1);
});
