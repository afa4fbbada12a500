/** Task pools: sizing, exhaustion and reuse, submit and free rules, callbacks and the promise adapter. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DocaError } from '../src/core/error.js';
import { ProgressEngine } from '../src/core/pe.js';
import { drain, EchoCtx, type EchoTask } from './helpers/echo-ctx.js';
import { code } from './helpers/errors.js';

function running(numTasks = 2) {
  const pe = ProgressEngine.create();
  const ctx = new EchoCtx();
  const done: string[] = [];
  ctx.setUserData('ctx-ud');
  ctx.taskEchoSetConf(
    (task, tud, cud) => done.push(`ok ${task.value} ${String(tud)} ${String(cud)} ${task.getStatus()}`),
    (task, tud, cud) => done.push(`err ${task.value} ${String(tud)} ${String(cud)} ${task.getStatus()}`),
    numTasks,
  );
  pe.connectCtx(ctx);
  ctx.start();
  return { pe, ctx, done };
}

test('the pool holds exactly num_tasks; one more is NO_MEMORY; freeing makes room again', () => {
  const { ctx } = running(3);
  const tasks = [ctx.taskEchoAllocInit(1), ctx.taskEchoAllocInit(2), ctx.taskEchoAllocInit(3)];
  assert.throws(() => ctx.taskEchoAllocInit(4), code('DOCA_ERROR_NO_MEMORY', /all 3 echo tasks are allocated/));
  tasks[1]!.free();
  const again = ctx.taskEchoAllocInit(5);
  assert.equal(again.value, 5);
  assert.throws(() => ctx.taskEchoAllocInit(6), code('DOCA_ERROR_NO_MEMORY'));
});

test('the pool recycles task objects, oldest freed first, each revived as a fresh allocation', async () => {
  const { pe, ctx, done } = running(3);
  const made = [ctx.taskEchoAllocInit(1), ctx.taskEchoAllocInit(2)];
  made[0]!.setUserData('old');
  made[0]!.free();
  made[1]!.free();
  // Objects are made until num_tasks exist; only then is a freed one handed out again.
  const third = ctx.taskEchoAllocInit(3);
  assert.ok(!made.includes(third), 'a new object while fewer than num_tasks were made');
  assert.throws(() => made[0]!.submit(), code('DOCA_ERROR_BAD_STATE', /was freed/), 'still detectably freed');
  const fourth = ctx.taskEchoAllocInit(4);
  assert.equal(fourth, made[0], 'then the one freed longest ago');
  assert.equal(fourth.getUserData(), undefined, 'with nothing of its last allocation');
  assert.equal(fourth.getStatus(), 'DOCA_SUCCESS');
  assert.equal(fourth.inFlight, false);
  fourth.submit();
  drain(pe);
  assert.deepEqual(done, ['ok 4 undefined ctx-ud DOCA_SUCCESS']);
  // A failed completion's error does not follow the object into its next allocation.
  fourth.value = -1;
  fourth.submit();
  drain(pe);
  assert.equal(fourth.getStatus(), 'DOCA_ERROR_INVALID_VALUE');
  fourth.free();
  third.free();
  const fifth = ctx.taskEchoAllocInit(5);
  assert.equal(fifth, made[1]);
  assert.equal(fifth.getStatus(), 'DOCA_SUCCESS');
  // A promise submission's settle does not survive a free either.
  const p = fifth.submitAsync();
  drain(pe);
  assert.equal(await p, fifth);
  fifth.free();
  const sixth = ctx.taskEchoAllocInit(6);
  assert.equal(sixth, fourth);
  sixth.submit();
  drain(pe);
  assert.equal(done.at(-1), 'ok 6 undefined ctx-ud DOCA_SUCCESS', 'the conf callback, not a stale promise');
});

test('tasks are allocated only while RUNNING, and only for a configured type', () => {
  const pe = ProgressEngine.create();
  const ctx = new EchoCtx();
  pe.connectCtx(ctx);
  assert.throws(() => ctx.taskEchoAllocInit(1), code('DOCA_ERROR_BAD_STATE', /IDLE, not RUNNING/));
  ctx.start();
  assert.throws(() => ctx.taskEchoAllocInit(1), code('DOCA_ERROR_NO_MEMORY', /no echo tasks were configured/));
});

test('callbacks run in progress() with task and context user data; resubmitting from a callback works', () => {
  const { pe, ctx, done } = running();
  const task = ctx.taskEchoAllocInit(7);
  task.setUserData('task-ud');
  task.submit();
  assert.equal(ctx.getNumInflightTasks(), 1);
  assert.equal(pe.getNumInflightTasks(), 1);
  assert.deepEqual(done, [], 'nothing runs outside progress()');
  assert.equal(pe.progress(), true);
  assert.deepEqual(done, ['ok 7 task-ud ctx-ud DOCA_SUCCESS']);
  assert.equal(ctx.getNumInflightTasks(), 0);
  task.submit();
  drain(pe);
  assert.equal(done.length, 2);
  const failing = ctx.taskEchoAllocInit(-1);
  failing.submit();
  drain(pe);
  assert.equal(done[2], 'err -1 undefined ctx-ud DOCA_ERROR_INVALID_VALUE');
  assert.match(failing.error!.message, /value -1 is negative/);
});

test('a task cannot be submitted twice or freed while submitted', () => {
  const { pe, ctx } = running();
  ctx.mode = 'hold';
  const task = ctx.taskEchoAllocInit(1);
  task.submit();
  assert.throws(() => task.submit(), code('DOCA_ERROR_BAD_STATE', /already submitted/));
  assert.throws(() => task.free(), code('DOCA_ERROR_BAD_STATE', /is submitted/));
  assert.equal(ctx.getNumInflightTasks(), 1, 'the refused calls changed nothing');
  ctx.release();
  drain(pe);
  task.free();
});

test('a freed task gives BAD_STATE on any use, and the pool is not corrupted', () => {
  const { ctx } = running(1);
  const task = ctx.taskEchoAllocInit(1);
  task.free();
  for (const use of [() => task.submit(), () => task.free(), () => task.setUserData(1)]) assert.throws(use, code('DOCA_ERROR_BAD_STATE', /was freed/));
  const next = ctx.taskEchoAllocInit(2);
  assert.throws(() => ctx.taskEchoAllocInit(3), code('DOCA_ERROR_NO_MEMORY'));
  next.free();
});

test('a refused submission leaves the task with its owner, unchanged', () => {
  const { pe, ctx, done } = running();
  const task = ctx.taskEchoAllocInit(3);
  ctx.refuseNextSubmit = new DocaError('AGAIN', 'doca_task_submit', 'no room');
  assert.throws(() => task.submit(), code('DOCA_ERROR_AGAIN'));
  assert.equal(ctx.getNumInflightTasks(), 0);
  task.submit();
  drain(pe);
  assert.deepEqual(done, ['ok 3 undefined ctx-ud DOCA_SUCCESS']);
});

test('submitAsync settles through the same completion path, without the conf callbacks', async () => {
  const { pe, ctx, done } = running();
  const task: EchoTask = ctx.taskEchoAllocInit(9);
  const settled = task.submitAsync();
  drain(pe);
  assert.equal(await settled, task);
  const bad = ctx.taskEchoAllocInit(-2);
  const rejected = bad.submitAsync();
  drain(pe);
  await assert.rejects(rejected, code('DOCA_ERROR_INVALID_VALUE'));
  assert.deepEqual(done, [], 'the conf callbacks did not run for promise submissions');
  task.free();
  bad.free();
  await assert.rejects(task.submitAsync(), code('DOCA_ERROR_BAD_STATE', /was freed/));
});
