/**
 * Process identity from /proc/<pid>/stat (fabric/liveness.ts), read into one reused buffer and parsed
 * as bytes: the same start time (field 22) and zombie verdict as splitting the file's text, for every
 * process on the machine, for a thread, and for a command name with spaces and parentheses; and the
 * cadence's death verdict reaches every answer about that process before its watchers are told.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { once } from 'node:events';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { isAlive, LIVENESS_INTERVAL_MS, LivenessAnswer, livenessPasses, processIdentity, selfThread, watchProcess } from '../src/fabric/liveness.js';
import { until } from './helpers/wait.js';

/** Field 3 (state) and 22 (start) by splitting the text after the last ')': what the parser must agree with. */
function fieldsOf(path: string): { state: string; start: number } | undefined {
  let text: string;
  try {
    text = readFileSync(path, 'latin1');
  } catch {
    return undefined;
  }
  const f = text.slice(text.lastIndexOf(')') + 2).split(' ');
  return { state: f[0]!, start: Number(f[19]) };
}

test('processIdentity agrees with the stat file of every process, and says a zombie is gone', { timeout: 30_000 }, () => {
  let compared = 0;
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const want = fieldsOf(`/proc/${name}/stat`);
    if (!want) continue;
    const got = processIdentity(Number(name));
    if (want.state === 'Z' || want.state === 'X') assert.equal(got, undefined, `pid ${name} is a zombie`);
    else if (got) {
      assert.equal(got.start, want.start, `pid ${name}'s start time`);
      compared++;
    }
  }
  assert.ok(compared > 3, `compared ${compared} processes`);
  assert.equal(selfThread.tstart, fieldsOf(`/proc/${process.pid}/task/${selfThread.tid}/stat`)!.start);
});

test('a command name with spaces and parentheses does not move the fields', { timeout: 30_000 }, async (t) => {
  const child = spawn(process.execPath, ['-e', "process.title = 'a) (b c) )'; process.stdout.write('ready\\n'); setInterval(() => {}, 1000)"], { stdio: ['ignore', 'pipe', 'inherit'] });
  t.after(() => child.kill('SIGKILL'));
  await once(child.stdout!, 'data');
  const comm = readFileSync(`/proc/${child.pid}/comm`, 'latin1');
  const want = fieldsOf(`/proc/${child.pid}/stat`)!;
  const got = processIdentity(child.pid!);
  assert.ok(got, 'the child is alive');
  assert.equal(got.start, want.start, `start time with the name ${JSON.stringify(comm.trim())}`);
  assert.equal(isAlive(got), true);
  child.kill('SIGKILL');
  await once(child, 'exit');
  assert.equal(isAlive(got), false, 'gone once killed and reaped');
});

test('a watcher the cadence tells of a death hears "dead" from a LivenessAnswer about that process, however fresh the answer', { timeout: 30_000 }, async (t) => {
  const child = spawn(process.execPath, ['-e', "process.stdout.write('ready\\n'); setInterval(() => {}, 1000)"], { stdio: ['ignore', 'pipe', 'inherit'] });
  t.after(() => child.kill('SIGKILL'));
  await once(child.stdout!, 'data');
  const owner = processIdentity(child.pid!)!;
  // An imported event's validity check (fabric/exports.ts) asks such an answer on every use; its
  // watcher polls the event when the cadence says the exporter died, and fails its waits only if the
  // answer agrees: one that still said "alive" left them pending for ever (nothing rings again).
  const awake = setInterval(() => {}, 50); // the cadence's timer is unreferenced: this one keeps the test's loop going
  t.after(() => clearInterval(awake));
  let answer: LivenessAnswer | undefined;
  const heard = new Promise<boolean>((resolve) => t.after(watchProcess(owner, () => resolve(answer!.recent()))));
  const first = livenessPasses();
  await until(() => livenessPasses() > first, 'a liveness pass');
  // Stays: it places the answer's look and the death just before the next pass, so that the answer is
  // younger than its 20 ms when the pass finds the process dead. A slower machine only moves them
  // apart, which cannot make this fail wrongly (an older answer looks at /proc again anyway).
  await sleep(LIVENESS_INTERVAL_MS - 15);
  answer = new LivenessAnswer(owner);
  assert.equal(answer.recent(), true, 'a look at /proc: alive');
  child.kill('SIGKILL');
  await once(child, 'exit');
  assert.equal(await heard, false, 'the answer the watcher asked says the process is gone');
});
