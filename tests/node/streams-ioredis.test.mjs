// A consumer-group workflow through ioredis: XADD, XREADGROUP, a consumer that dies before
// acknowledging, XAUTOCLAIM by another consumer once the server's clock has moved past the
// idle threshold (RESPLITE.CLOCK ADVANCE instead of a sleep), XACK.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import Redis from 'ioredis';

const url = process.env.RESPLITE_URL;
assert.ok(url, 'RESPLITE_URL must name the resplite server under test');

const stream = 'orders:ioredis';
const group = 'billing';
let admin;

before(async () => {
  admin = new Redis(url);
  await admin.call('RESPLITE.CLOCK', 'FREEZE');
});

after(async () => {
  await admin.call('RESPLITE.CLOCK', 'RESUME');
  await admin.quit();
});

test('ioredis: an entry left pending by a crashed consumer is claimed and acknowledged', async () => {
  const ids = [];
  for (const n of [1, 2, 3]) {
    ids.push(await admin.xadd(stream, '*', 'order', String(n), 'amount', String(10 * n)));
  }
  assert.equal(await admin.xgroup('CREATE', stream, group, '0'), 'OK');

  // Alice reads everything, acknowledges the first entry, then crashes.
  const alice = new Redis(url);
  const [[name, delivered]] = await alice.xreadgroup(
    'GROUP', group, 'alice', 'COUNT', 10, 'STREAMS', stream, '>');
  assert.equal(name, stream);
  assert.deepEqual(delivered.map(([id]) => id), ids);
  assert.deepEqual(delivered[1][1], ['order', '2', 'amount', '20']);
  assert.equal(await alice.xack(stream, group, ids[0]), 1);
  alice.disconnect();

  // Too early: nothing has been idle for a minute yet.
  const bob = new Redis(url);
  const early = await bob.xautoclaim(stream, group, 'bob', 60000, '0-0', 'COUNT', 10);
  assert.deepEqual(early, ['0-0', [], []]);

  const before = Number(await admin.call('RESPLITE.CLOCK', 'GET'));
  const now = Number(await admin.call('RESPLITE.CLOCK', 'ADVANCE', '60001'));
  assert.equal(now, before + 60001);

  const [cursor, claimed, deleted] = await bob.xautoclaim(
    stream, group, 'bob', 60000, '0-0', 'COUNT', 10);
  assert.equal(cursor, '0-0');
  assert.deepEqual(claimed.map(([id]) => id), ids.slice(1));
  assert.deepEqual(claimed[0][1], ['order', '2', 'amount', '20']);
  assert.deepEqual(deleted, []);

  const pending = await bob.xpending(stream, group, '-', '+', 10);
  assert.deepEqual(pending.map(([id, consumer, idle, count]) => [id, consumer, idle, count]),
    [[ids[1], 'bob', 0, 2], [ids[2], 'bob', 0, 2]]);

  assert.equal(await bob.xack(stream, group, ...ids.slice(1)), 2);
  assert.deepEqual(await bob.xpending(stream, group), [0, null, null, null]);
  await bob.quit();
});

test('ioredis: a BLOCK timeout fires when the clock is advanced, not when time passes', async () => {
  const waiter = new Redis(url);
  await waiter.xgroup('CREATE', 'quiet:ioredis', 'g', '$', 'MKSTREAM');
  const started = Date.now();
  const reply = waiter.xreadgroup(
    'GROUP', 'g', 'c', 'BLOCK', 3600000, 'STREAMS', 'quiet:ioredis', '>');
  // Wait until the server reports the client as blocked, then move time past its deadline.
  for (;;) {
    const info = await admin.info('clients');
    if (/blocked_clients:1/.test(info)) break;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  await admin.call('RESPLITE.CLOCK', 'ADVANCE', '3600000');
  assert.equal(await reply, null);
  assert.ok(Date.now() - started < 5000);
  await waiter.quit();
});
