// The same consumer-group workflow through node-redis, under RESP2 and RESP3: XADD,
// XREADGROUP, a consumer that dies before acknowledging, RESPLITE.CLOCK ADVANCE past the
// idle threshold, XAUTOCLAIM by another consumer, XACK.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createClient } from 'redis';

const url = process.env.RESPLITE_URL;
assert.ok(url, 'RESPLITE_URL must name the resplite server under test');

let admin;

before(async () => {
  admin = await createClient({ url }).connect();
  await admin.sendCommand(['RESPLITE.CLOCK', 'FREEZE']);
});

after(async () => {
  await admin.sendCommand(['RESPLITE.CLOCK', 'RESUME']);
  await admin.close();
});

for (const RESP of [2, 3]) {
  test(`node-redis RESP${RESP}: a crashed consumer's entries are claimed and acknowledged`, async () => {
    const stream = `orders:node-redis:${RESP}`;
    const group = 'billing';
    const ids = [];
    for (const n of [1, 2, 3]) {
      ids.push(await admin.xAdd(stream, '*', { order: String(n), amount: String(10 * n) }));
    }
    assert.equal(await admin.xGroupCreate(stream, group, '0'), 'OK');

    const alice = await createClient({ url, RESP }).connect();
    const streams = await alice.xReadGroup(group, 'alice', { key: stream, id: '>' }, { COUNT: 10 });
    assert.equal(streams.length, 1);
    assert.equal(streams[0].name, stream);
    assert.deepEqual(streams[0].messages.map((m) => m.id), ids);
    assert.deepEqual({ ...streams[0].messages[2].message }, { order: '3', amount: '30' });
    assert.equal(await alice.xAck(stream, group, ids[0]), 1);
    alice.destroy(); // the crash: the connection drops with two entries unacknowledged

    const bob = await createClient({ url, RESP }).connect();
    const early = await bob.xAutoClaim(stream, group, 'bob', 30000, '0-0');
    assert.equal(early.nextId, '0-0');
    assert.deepEqual(early.messages, []);

    await admin.sendCommand(['RESPLITE.CLOCK', 'ADVANCE', '30001']);

    const claim = await bob.xAutoClaim(stream, group, 'bob', 30000, '0-0', { COUNT: 10 });
    assert.equal(claim.nextId, '0-0');
    assert.deepEqual(claim.messages.map((m) => m.id), ids.slice(1));
    assert.deepEqual({ ...claim.messages[0].message }, { order: '2', amount: '20' });
    assert.deepEqual(claim.deletedMessages, []);

    const summary = await bob.xPending(stream, group);
    assert.equal(summary.pending, 2);
    assert.deepEqual(summary.consumers, [{ name: 'bob', deliveriesCounter: 2 }]);
    const detail = await bob.xPendingRange(stream, group, '-', '+', 10);
    assert.deepEqual(detail.map((p) => [p.id, p.consumer, p.deliveriesCounter]),
      [[ids[1], 'bob', 2], [ids[2], 'bob', 2]]);

    assert.equal(await bob.xAck(stream, group, ids.slice(1)), 2);
    assert.equal((await bob.xPending(stream, group)).pending, 0);
    await bob.close();
  });
}
