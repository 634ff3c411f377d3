// The newest stream calls through node-redis's own commands, under RESP2 and RESP3:
// idempotent producers (xAdd IDMP / IDMPAUTO, xCfgSet, Redis 8.6), xNack (8.8) and xRead /
// xReadGroup MAXCOUNT / MAXSIZE (8.10).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createClient } from 'redis';

const url = process.env.RESPLITE_URL;
assert.ok(url, 'RESPLITE_URL must name the resplite server under test');

let admin;

before(async () => {
  admin = await createClient({ url }).connect();
});

after(async () => {
  await admin.close();
});

// Entries in an xRead / xReadGroup reply, whichever shape the protocol gives it.
function countEntries(reply) {
  if (reply === null) return 0;
  if (Array.isArray(reply)) return reply.reduce((n, s) => n + s.messages.length, 0);
  const values = reply instanceof Map ? [...reply.values()] : Object.values(reply);
  return values.reduce((n, messages) => n + messages.length, 0);
}

for (const RESP of [2, 3]) {
  test(`node-redis RESP${RESP}: IDMP, XCFGSET, XNACK and MAXCOUNT / MAXSIZE`, async () => {
    const client = await createClient({ url, RESP }).connect();
    try {
      const key = `newest:node-redis:${RESP}`;
      await client.del(key);
      const first = await client.xAdd(key, '*', { amount: '100' }, { IDMP: { pid: 'p1', iid: 'pay-1' } });
      assert.equal(await client.xAdd(key, '*', { amount: '200' }, { IDMP: { pid: 'p1', iid: 'pay-1' } }), first);
      const auto = await client.xAdd(key, '*', { a: '1', b: '2' }, { IDMPAUTO: { pid: 'p2' } });
      assert.equal(await client.xAdd(key, '*', { b: '2', a: '1' }, { IDMPAUTO: { pid: 'p2' } }), auto);
      assert.equal(await client.xLen(key), 2);
      assert.equal(await client.xCfgSet(key, { IDMP_DURATION: 300, IDMP_MAXSIZE: 50 }), 'OK');
      const info = await client.xInfoStream(key);
      const field = (name) => (info instanceof Map ? info.get(name) : info[name]);
      assert.equal(field('idmp-duration'), 300);
      assert.equal(field('idmp-maxsize'), 50);
      assert.equal(field('iids-added'), 2);
      assert.equal(field('iids-duplicates'), 2);
      await assert.rejects(client.xCfgSet(key, { IDMP_DURATION: 0 }), /IDMP-DURATION must be between/);

      assert.equal(await client.xGroupCreate(key, 'g', '0'), 'OK');
      await client.xReadGroup('g', 'c', { key, id: '>' });
      assert.equal(await client.xNack(key, 'g', 'FAIL', [first, auto]), 2);
      assert.equal(await client.xNack(key, 'g', 'FATAL', first, { RETRYCOUNT: 3 }), 1);
      assert.equal(await client.xNack(key, 'g', 'SILENT', '9-9', { FORCE: true }), 0);
      const pending = await client.xPendingRange(key, 'g', '-', '+', 10);
      assert.deepEqual(pending.map((p) => [p.consumer, p.deliveriesCounter]), [['', 3], ['', 1]]);
      const claimed = await client.xAutoClaimJustId(key, 'g', 'd', 3_600_000, '0-0');
      assert.deepEqual(claimed.messages, [first, auto]);

      await client.xAdd(key, '*', { x: '1' });
      const other = `${key}:copy`;
      await client.del(other);
      for (const n of [1, 2, 3]) await client.xAdd(other, '*', { n: String(n) });
      // Two streams (a RESP3 map cannot name one stream twice in node-redis's reply).
      const twice = [{ key, id: '0' }, { key: other, id: '0' }];
      assert.equal(countEntries(await client.xRead(twice, { MAXCOUNT: 2 })), 2);
      assert.equal(countEntries(await client.xRead(twice, { COUNT: 2, MAXCOUNT: 3 })), 3);
      await assert.rejects(client.xRead(twice, { COUNT: 5, MAXCOUNT: 3 }), /MAXCOUNT must be/);
      assert.equal(countEntries(await client.xReadGroup('g', 'c', { key, id: '>' }, { MAXSIZE: 1 })), 1);
    } finally {
      client.destroy();
    }
  });
}
