// ioredis's Cluster client against resplite's in-process cluster (resplite.serve(cluster=3)):
// it discovers the nodes with CLUSTER SLOTS, sends each command to the node of its key's slot,
// and runs a consumer-group workload over streams spread across the nodes by hash tags.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import Redis from 'ioredis';

const nodes = (process.env.RESPLITE_CLUSTER_NODES || '').split(',').filter(Boolean);
assert.ok(nodes.length >= 3, 'RESPLITE_CLUSTER_NODES must list the cluster nodes (host:port)');

let cluster;

before(async () => {
  cluster = new Redis.Cluster(nodes.map((hp) => {
    const [host, port] = hp.split(':');
    return { host, port: Number(port) };
  }));
  await cluster.ping();
});

after(async () => {
  await cluster.quit();
});

test('ioredis Cluster: producers and a consumer group on streams of every node', async () => {
  const streams = [0, 1, 2, 3, 4, 5].map((n) => `{jobs-${n}}:stream`);
  const slots = await Promise.all(streams.map((s) => cluster.call('CLUSTER', 'KEYSLOT', s)));
  const owners = new Set(slots.map((slot) => (slot <= 5460 ? 0 : slot <= 10922 ? 1 : 2)));
  assert.equal(owners.size, 3, 'the streams live on all three nodes');

  const produced = {};
  for (const stream of streams) {
    await cluster.xgroup('CREATE', stream, 'workers', '0', 'MKSTREAM');
    produced[stream] = [];
    for (let i = 0; i < 15; i++) {
      produced[stream].push(await cluster.xadd(stream, '*', 'n', String(i)));
    }
  }
  for (const stream of streams) {
    const seen = [];
    for (;;) {
      const reply = await cluster.xreadgroup(
        'GROUP', 'workers', 'w1', 'COUNT', 4, 'STREAMS', stream, '>');
      if (!reply) break;
      const ids = reply[0][1].map(([id]) => id);
      seen.push(...ids);
      assert.equal(await cluster.xack(stream, 'workers', ...ids), ids.length);
    }
    assert.deepEqual(seen, produced[stream]);
    const [pending] = await cluster.xpending(stream, 'workers');
    assert.equal(pending, 0);
  }
});

test('ioredis Cluster: a multi-key command across slots is refused', async () => {
  await assert.rejects(cluster.call('MSET', '{a}x', '1', '{b}y', '2'), /CROSSSLOT/);
  assert.equal(await cluster.call('MSET', '{a}x', '1', '{a}y', '2'), 'OK');
  assert.deepEqual(await cluster.mget('{a}x', '{a}y'), ['1', '2']);
});
