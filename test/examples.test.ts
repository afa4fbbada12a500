/** The README's example: examples/echo-dpu.mjs and echo-host.mjs as two processes importing 'softdpu'. */
import assert from 'node:assert/strict';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { spawnChild } from './helpers/child.js';
import { tempFabricDir } from './helpers/fabric.js';

const examples = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'examples');

test('the comch echo example runs as written, DPU side and host side in their own processes', { timeout: 60_000 }, async (t) => {
  const env = { SOFTDPU_FABRIC: tempFabricDir(t) };
  const dpu = spawnChild(t, 'echo-dpu', [], { script: join(examples, 'echo-dpu.mjs'), env });
  const host = spawnChild(t, 'echo-host', [], { script: join(examples, 'echo-host.mjs'), env });
  assert.deepEqual(await host.exited, { code: 0, signal: null }, host.stderr.join(''));
  assert.deepEqual(await dpu.exited, { code: 0, signal: null }, dpu.stderr.join(''));
  assert.deepEqual(host.lines, ['echoed: hello', 'echoed: bye']);
});
