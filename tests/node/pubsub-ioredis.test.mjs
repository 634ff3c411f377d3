// Pub/Sub through ioredis: a subscriber connection with message and pmessage events, PUBLISH
// counts, and keyspace events driven by RESPLITE.CLOCK ADVANCE instead of a sleep.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import Redis from 'ioredis';

const url = process.env.RESPLITE_URL;
assert.ok(url, 'RESPLITE_URL must name the resplite server under test');

let admin;

before(async () => {
  admin = new Redis(url);
  await admin.call('RESPLITE.CLOCK', 'FREEZE');
});

after(async () => {
  await admin.config('SET', 'notify-keyspace-events', '');
  await admin.call('RESPLITE.CLOCK', 'RESUME');
  await admin.quit();
});

function next(emitter, event) {
  return new Promise((resolve) => emitter.once(event, (...args) => resolve(args)));
}

test('ioredis: subscribe, psubscribe and publish', async () => {
  const sub = new Redis(url);
  assert.equal(await sub.subscribe('jobs:ioredis'), 1);
  assert.equal(await sub.psubscribe('jobs:*'), 2);
  const message = next(sub, 'message');
  const pmessage = next(sub, 'pmessage');
  assert.equal(await admin.publish('jobs:ioredis', 'run'), 2);
  assert.deepEqual(await message, ['jobs:ioredis', 'run']);
  assert.deepEqual(await pmessage, ['jobs:*', 'jobs:ioredis', 'run']);
  assert.deepEqual(await admin.pubsub('NUMSUB', 'jobs:ioredis'), ['jobs:ioredis', 1]);
  await sub.quit();
});

test('ioredis: keyspace events follow RESPLITE.CLOCK ADVANCE', async () => {
  await admin.config('SET', 'notify-keyspace-events', 'KEA');
  const sub = new Redis(url);
  await sub.psubscribe('__keyspace@0__:cart:ioredis');
  const events = [];
  sub.on('pmessage', (_pattern, _channel, event) => events.push(event));
  await admin.set('cart:ioredis', '1', 'PX', 5000);
  await admin.call('RESPLITE.CLOCK', 'ADVANCE', '5001');  // a key lives through its own millisecond
  const started = Date.now();
  while (events.length < 3 && Date.now() - started < 5000) {
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  assert.deepEqual(events, ['set', 'expire', 'expired']);
  await sub.quit();
});
