// Pub/Sub through node-redis, under RESP2 and RESP3: SUBSCRIBE and PSUBSCRIBE listeners,
// PUBLISH counts, and an `expired` keyspace event delivered the moment RESPLITE.CLOCK ADVANCE
// moves time past a key's TTL.
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
  await admin.configSet('notify-keyspace-events', '');
  await admin.sendCommand(['RESPLITE.CLOCK', 'RESUME']);
  await admin.close();
});

function waitFor(predicate) {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const poll = () => {
      if (predicate()) return resolve();
      if (Date.now() - started > 5000) return reject(new Error('nothing arrived'));
      setTimeout(poll, 5);
    };
    poll();
  });
}

for (const RESP of [2, 3]) {
  test(`node-redis RESP${RESP}: channel and pattern listeners get published messages`, async () => {
    const sub = await createClient({ url, RESP }).connect();
    const got = [];
    await sub.subscribe(`news:${RESP}`, (message, channel) => got.push(['message', channel, message]));
    await sub.pSubscribe(`n*:${RESP}`, (message, channel) => got.push(['pmessage', channel, message]));
    assert.equal(await admin.publish(`news:${RESP}`, 'hello'), 2);
    assert.equal(await admin.publish(`nope:${RESP}`, 'x'), 1);
    await waitFor(() => got.length === 3);
    assert.deepEqual(got.slice(0, 1), [['message', `news:${RESP}`, 'hello']]);
    assert.deepEqual(got.slice(1).sort(), [
      ['pmessage', `news:${RESP}`, 'hello'], ['pmessage', `nope:${RESP}`, 'x'],
    ]);
    assert.deepEqual(await admin.pubSubNumSub(`news:${RESP}`), { [`news:${RESP}`]: 1 });
    await sub.unsubscribe();
    await sub.pUnsubscribe();
    await sub.close();
  });

  test(`node-redis RESP${RESP}: the clock moves and the expired event arrives`, async () => {
    await admin.configSet('notify-keyspace-events', 'Ex');
    const sub = await createClient({ url, RESP }).connect();
    const expired = [];
    await sub.subscribe('__keyevent@0__:expired', (key) => expired.push(key));
    await admin.set(`session:${RESP}`, 'x', { PX: 30000 });
    await admin.sendCommand(['RESPLITE.CLOCK', 'ADVANCE', '30001']);  // past the key's own millisecond
    await waitFor(() => expired.length === 1);
    assert.deepEqual(expired, [`session:${RESP}`]);
    await sub.close();
  });
}
