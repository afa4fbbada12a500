/** DOCA logging: levels, application and SDK limits, backends; nothing on stdout. */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import {
  logBackendCreateWithBuf,
  logBackendCreateWithFile,
  logBackendCreateWithFileSdk,
  LogLevel,
  logLevelGetGlobalSdkLimit,
  logLevelSetGlobalLowerLimit,
  logLevelSetGlobalSdkLimit,
  logRegisterSource,
  parseLogLevel,
  sdkLogSource,
} from '../src/core/log.js';
import { spawnChild } from './helpers/child.js';
import { tempFabricDir } from './helpers/fabric.js';

test('levels are DOCA numbers, 10 (DISABLE) to 70 (TRACE), and parse from numbers or names', () => {
  assert.deepEqual(Object.values(LogLevel), [10, 20, 30, 40, 50, 60, 70]);
  assert.equal(parseLogLevel('50'), LogLevel.INFO);
  assert.equal(parseLogLevel('warning'), LogLevel.WARNING);
  assert.equal(parseLogLevel('ERR'), LogLevel.ERROR);
  assert.throws(() => parseLogLevel('55'), RangeError);
  assert.throws(() => parseLogLevel('loud'), /"loud"/);
});

test('a buffer backend gets application lines within its limits; an SDK backend gets only SDK lines', () => {
  const app: string[] = [];
  const sdkLines: string[] = [];
  const appBackend = logBackendCreateWithBuf((l) => app.push(l));
  const sdkBackend = logBackendCreateWithBuf((l) => sdkLines.push(l), { sdk: true });
  appBackend.setLevelLowerLimit(LogLevel.WARNING);
  sdkBackend.setSdkLevel(LogLevel.DEBUG);
  const source = logRegisterSource('unit');
  const lib = sdkLogSource('unit-sdk');
  source.err('e1');
  source.warn('w1');
  source.info('i1');
  lib.dbg('d1');
  lib.trc('t1');
  assert.equal(app.length, 2);
  assert.match(app[0]!, /^\[\d\d:\d\d:\d\d:\d{3}\]\[\d+\]\[APP\]\[ERR\]\[unit\] e1\n$/);
  assert.match(app[1]!, /\[WARN\]\[unit\] w1/);
  assert.deepEqual(sdkLines.map((l) => l.replace(/^.*\]\[DOCA\]/, '')), ['[DBG][unit-sdk] d1\n']);
  appBackend.setLevelUpperLimit(LogLevel.WARNING);
  source.crit('c1');
  assert.equal(app.length, 2, 'above the upper limit (more severe) is filtered');
  logLevelSetGlobalLowerLimit(LogLevel.ERROR);
  source.warn('w2');
  assert.equal(app.length, 2, 'the global lower limit caps every backend');
  logLevelSetGlobalLowerLimit(LogLevel.INFO);
  const before = logLevelGetGlobalSdkLimit();
  logLevelSetGlobalSdkLimit(LogLevel.DISABLE);
  lib.err('e2');
  assert.equal(sdkLines.length, 1, 'DISABLE silences the SDK');
  logLevelSetGlobalSdkLimit(before);
  appBackend.destroy();
  sdkBackend.destroy();
  source.err('gone');
  assert.equal(app.length, 2);
});

test('the global lower limit sets every backend, made before or after it (a sample\'s -l 60 shows DEBUG lines)', () => {
  const early: string[] = [];
  const earlyBackend = logBackendCreateWithBuf((l) => early.push(l));
  const source = logRegisterSource('global');
  source.dbg('hidden');
  assert.deepEqual(early, [], 'a backend starts at INFO');
  logLevelSetGlobalLowerLimit(LogLevel.DEBUG);
  const late: string[] = [];
  const lateBackend = logBackendCreateWithBuf((l) => late.push(l));
  source.dbg('shown');
  source.trc('still hidden');
  assert.deepEqual([early, late].map((lines) => lines.map((l) => l.replace(/^.*\]\[APP\]/, ''))), [['[DBG][global] shown\n'], ['[DBG][global] shown\n']]);
  earlyBackend.setLevelLowerLimit(LogLevel.ERROR);
  source.warn('w');
  assert.equal(early.length, 1, 'a backend\'s own limit still applies after the global one');
  assert.equal(late.length, 2);
  logLevelSetGlobalLowerLimit(LogLevel.INFO);
  earlyBackend.destroy();
  lateBackend.destroy();
});

test('file backends append lines; a throwing callback backend never breaks logging', (t) => {
  const dir = tempFabricDir(t);
  const appFile = join(dir, 'app.log');
  const sdkFile = join(dir, 'sdk.log');
  const a = logBackendCreateWithFile(appFile);
  const s = logBackendCreateWithFileSdk(sdkFile);
  s.setSdkLevel(LogLevel.INFO);
  const broken = logBackendCreateWithBuf(() => {
    throw new Error('sink down');
  });
  logRegisterSource('filetest').info('to the app file');
  sdkLogSource('filetest').info('to the sdk file');
  a.destroy();
  s.destroy();
  broken.destroy();
  assert.match(readFileSync(appFile, 'utf8'), /\[APP\]\[INF\]\[filetest\] to the app file\n$/);
  assert.match(readFileSync(sdkFile, 'utf8'), /\[DOCA\]\[INF\]\[filetest\] to the sdk file\n$/);
});

test('with no backend created, app lines up to INFO and SDK lines up to WARNING go to stderr, none to stdout', { timeout: 60_000 }, async (t) => {
  const child = spawnChild(t, 'logger');
  await child.exited;
  assert.deepEqual(child.lines, [], 'nothing on stdout');
  const err = child.stderr.join('');
  for (const line of ['[APP][CRIT][fixture] crit line', '[APP][INF][fixture] info line', '[DOCA][WARN][fixture-sdk] warn line']) assert.ok(err.includes(line), line);
  assert.ok(!err.includes('dbg line'));
  assert.ok(!err.includes('[DOCA][INF]'));
});
