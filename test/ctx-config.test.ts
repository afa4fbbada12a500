/** Configuration is allowed only while IDLE, with the error code each library uses. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DocaError } from '../src/core/error.js';
import { ProgressEngine } from '../src/core/pe.js';
import { EchoCtx } from './helpers/echo-ctx.js';

for (const confError of ['BAD_STATE', 'NOT_PERMITTED'] as const) {
  test(`configuration after start fails with ${confError} and changes nothing; after stop it works again`, () => {
    const pe = ProgressEngine.create();
    const ctx = new EchoCtx(confError);
    ctx.taskEchoSetConf(() => {}, () => {}, 2);
    pe.connectCtx(ctx);
    ctx.start();
    for (const configure of [() => ctx.setSomething(), () => ctx.taskEchoSetConf(() => {}, () => {}, 5)]) {
      assert.throws(configure, (err: unknown) => err instanceof DocaError && err.code === `DOCA_ERROR_${confError}` && /RUNNING; configuration is allowed only while IDLE/.test(err.message));
    }
    ctx.taskEchoAllocInit(1);
    ctx.taskEchoAllocInit(2);
    assert.throws(() => ctx.taskEchoAllocInit(3), (err: unknown) => DocaError.is(err, 'NO_MEMORY'), 'the refused set_conf kept the pool at 2');
  });
}

test('set_conf validates its arguments with INVALID_VALUE naming the value', () => {
  const ctx = new EchoCtx();
  for (const n of [0, -1, 1.5, 1025]) {
    assert.throws(() => ctx.taskEchoSetConf(() => {}, () => {}, n), (err: unknown) => DocaError.is(err, 'INVALID_VALUE') && (err as Error).message.includes(`num_tasks ${n}`));
  }
  assert.throws(() => ctx.taskEchoSetConf(undefined as never, () => {}, 1), (err: unknown) => DocaError.is(err, 'INVALID_VALUE'));
  const pe = ProgressEngine.create();
  pe.connectCtx(ctx);
  ctx.start();
  ctx.stop();
  ctx.setSomething();
});
