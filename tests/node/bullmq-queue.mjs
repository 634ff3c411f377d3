// A BullMQ queue and worker against resplite: almost every BullMQ operation is a Lua script
// (EVALSHA with cmsgpack-packed options), so this drives the scripting engine the way a
// production job queue does. A job is added and processed, a job that fails once is retried
// and completes, and a delayed job becomes due when time is moved on: the server's clock
// with RESPLITE.CLOCK ADVANCE and, by the same amount, the worker's Date.now (BullMQ passes
// its own timestamps to its scripts).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import IORedis from 'ioredis';
import { Queue, Worker, QueueEvents } from 'bullmq';

const url = process.env.RESPLITE_URL;
assert.ok(url, 'RESPLITE_URL must name the resplite server under test');

const realNow = Date.now;
let offset = 0;
Date.now = () => realNow() + offset;

let admin;

async function advance(ms) {
  offset += ms;
  await admin.call('RESPLITE.CLOCK', 'ADVANCE', String(ms));
}

// Options rather than clients: BullMQ then opens its connections and closes them itself.
function connection() {
  const { hostname, port } = new URL(url);
  return { host: hostname, port: Number(port), maxRetriesPerRequest: null };
}

function completed(worker, count) {
  const done = [];
  return new Promise((resolve, reject) => {
    worker.on('completed', (job, value) => {
      done.push([job.name, value, job.attemptsMade]);
      if (done.length === count) resolve(done);
    });
    worker.on('error', reject);
  });
}

before(async () => {
  admin = new IORedis(url);
  await admin.call('RESPLITE.CLOCK', 'FREEZE');
});

after(async () => {
  Date.now = realNow;
  await admin.call('RESPLITE.CLOCK', 'RESUME');
  await admin.quit();
});

test('bullmq: a job is added, processed and its result stored', async () => {
  const queue = new Queue('plain', { connection: connection() });
  const worker = new Worker('plain', async (job) => job.data.a + job.data.b,
    { connection: connection() });
  const finished = completed(worker, 1);
  const job = await queue.add('sum', { a: 2, b: 3 });
  assert.deepEqual(await finished, [['sum', 5, 1]]);
  const stored = await queue.getJob(job.id);
  assert.equal(stored.returnvalue, 5);
  assert.equal(await stored.getState(), 'completed');
  const counts = await queue.getJobCounts('completed', 'failed', 'waiting');
  assert.deepEqual([counts.completed, counts.failed, counts.waiting], [1, 0, 0]);
  await worker.close();
  await queue.close();
});

test('bullmq: a job that fails is retried and then completes', async () => {
  const queue = new Queue('retry', { connection: connection() });
  let calls = 0;
  const worker = new Worker('retry', async () => {
    calls += 1;
    if (calls === 1) throw new Error('first attempt fails');
    return 'ok';
  }, { connection: connection() });
  const failures = [];
  worker.on('failed', (job, err) => failures.push([job.attemptsMade, err.message]));
  const finished = completed(worker, 1);
  await queue.add('flaky', {}, { attempts: 3 });
  assert.deepEqual(await finished, [['flaky', 'ok', 2]]);
  assert.deepEqual(failures, [[1, 'first attempt fails']]);
  await worker.close();
  await queue.close();
});

test('bullmq: a delayed job runs once the clock has moved past its delay', async () => {
  const queue = new Queue('later', { connection: connection() });
  const events = new QueueEvents('later', { connection: connection() });
  await events.waitUntilReady();
  const worker = new Worker('later', async (job) => `ran ${job.data.n}`,
    { connection: connection() });
  const finished = completed(worker, 1);
  const job = await queue.add('reminder', { n: 1 }, { delay: 60_000 });
  assert.equal(await job.getState(), 'delayed');
  await advance(60_001);
  assert.deepEqual(await finished, [['reminder', 'ran 1', 1]]);
  assert.equal(await job.getState(), 'completed');
  await worker.close();
  await events.close();
  await queue.close();
});
