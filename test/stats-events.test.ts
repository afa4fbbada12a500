/** The stats segment's event ring past 2^31 events: the writer stays inside it, observers see the latest. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { StatsObserver } from '../src/fabric/stats-reader.js';
import { StatEvent, STATS_EVENTS, STATS_MAGIC, StatsWriter } from '../src/fabric/stats.js';
import { selfThread } from '../src/fabric/liveness.js';
import { tempFabricDir } from './helpers/fabric.js';

test('event numbers crossing 2^31 and 2^32: each event lands in the ring, the header is untouched, observers list the latest', (t) => {
  const dir = tempFabricDir(t);
  const writer = new StatsWriter(dir);
  t.after(() => writer.segment.close());
  const observer = new StatsObserver(dir);
  t.after(() => observer.close());
  for (const start of [0x7fffffff - 2, 0xffffffff - 2]) {
    Atomics.store(writer.i32, 96 / 4, start | 0); // the shared i32 that counts events
    const texts = Array.from({ length: 6 }, (_, i) => `event ${start + i}`);
    for (const text of texts) writer.event(StatEvent.STATE, -1, text);
    assert.equal(Atomics.load(writer.i32, 64 / 4), STATS_MAGIC, 'the header is intact');
    const me = observer.snapshot().threads.find((th) => th.tid === selfThread.tid);
    assert.ok(me, 'the observer reads the segment');
    const seen = me.events.map((e) => e.text);
    assert.ok(seen.length <= STATS_EVENTS);
    assert.deepEqual(seen.slice(-texts.length), texts, `the latest events, in order, from ${start}`);
  }
});
