/**
 * Property tests (fast-check) under node:test: one seed per test file, printed with every property and
 * in every failure, so a failing run can be replayed exactly:
 *
 *   SOFTDPU_FC_SEED=<seed> node --test dist/test/<file>.test.js
 *
 * Also here: what every parser property checks of a refusal (a DocaError with an allowed code, nothing
 * else), of a synchronous call's time, and of the shared mappings a batch of imports left behind.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import type { TestContext } from 'node:test';
import fc from 'fast-check';
import { DocaError, type DocaErrorShortName } from '../../src/core/error.js';

function initialSeed(): number {
  const given = process.env.SOFTDPU_FC_SEED;
  if (given === undefined || given === '') return (Date.now() ^ (Math.random() * 0x7fffffff)) | 0;
  const seed = Number(given);
  if (!Number.isSafeInteger(seed)) throw new Error(`SOFTDPU_FC_SEED=${JSON.stringify(given)} is not an integer`);
  return seed;
}

/** The seed of every property in this test file. */
export const seed = initialSeed();

/**
 * Bound of a property's whole run: it only detects a hang (cases that should take a few seconds in all,
 * on a loaded 2-CPU machine may take several times that). Property tests set their own timeout above it.
 */
export const PROPERTY_BUDGET_MS = 120_000;

/**
 * Runs `property` `numRuns` times from the file's seed. A property still running (shrinking included)
 * after `budgetMs` fails rather than passing with fewer cases than asked for.
 */
export async function checkProperty<T>(t: TestContext, property: fc.IRawProperty<T>, numRuns: number, budgetMs = PROPERTY_BUDGET_MS): Promise<void> {
  t.diagnostic(`fast-check: ${numRuns} cases, seed ${seed} (replay: SOFTDPU_FC_SEED=${seed})`);
  try {
    await fc.assert(property, { seed, numRuns, includeErrorInReport: true, plugins: [fc.interruptAfterTimeLimit(budgetMs, { failOnInterrupt: true })] });
  } catch (err) {
    throw new Error(`property failed; replay with SOFTDPU_FC_SEED=${seed}\n${(err as Error).message}`, { cause: err });
  }
}

/** Asserts `err` is a DocaError whose code is one of `allowed` (short names), and returns its short code. */
export function assertDocaError(err: unknown, allowed: readonly DocaErrorShortName[], what: string): DocaErrorShortName {
  if (!(err instanceof DocaError)) {
    throw new assert.AssertionError({ message: `${what}: threw ${err instanceof Error ? `${err.constructor.name}: ${err.message}` : String(err)}, not a DocaError`, actual: err });
  }
  const short = err.code.replace(/^DOCA_ERROR_/, '') as DocaErrorShortName;
  assert.ok(allowed.includes(short), `${what}: ${err.code} is not one of ${allowed.join(', ')} (${err.message})`);
  return short;
}

/**
 * How long one synchronous import may take: they read a few /proc files and map a segment, nothing that
 * waits. Far beyond what a descheduled call takes on a loaded machine; it catches a call that waits out
 * a timeout of seconds.
 */
export const SYNC_CALL_BOUND_MS = 5000;

/**
 * Calls `fn` and returns its result, or the DocaError it threw (any other exception is a failure);
 * either way it must have returned within {@link SYNC_CALL_BOUND_MS}.
 */
export function outcome<T>(fn: () => T, allowed: readonly DocaErrorShortName[], what: string): { value: T } | { error: DocaErrorShortName } {
  const started = performance.now();
  let result: { value: T } | { error: DocaErrorShortName };
  try {
    result = { value: fn() };
  } catch (err) {
    result = { error: assertDocaError(err, allowed, what) };
  }
  const took = performance.now() - started;
  assert.ok(took <= SYNC_CALL_BOUND_MS, `${what}: took ${took.toFixed(0)} ms`);
  return result;
}

/** Shared segments mapped in this process right now (memfd labels `softdpu.<kind>.<pid>`, protocol.md). */
export function softdpuMappings(): number {
  return readFileSync('/proc/self/maps', 'utf8')
    .split('\n')
    .filter((line) => line.includes('memfd:softdpu')).length;
}

/** Splits `bytes` at the given cut points (any numbers: taken modulo the length, sorted, deduplicated). */
export function chunked(bytes: Uint8Array, cuts: readonly number[]): Buffer[] {
  const at = [...new Set(cuts.map((c) => (bytes.length ? c % (bytes.length + 1) : 0)))].sort((a, b) => a - b);
  const chunks: Buffer[] = [];
  let from = 0;
  for (const to of [...at, bytes.length]) {
    if (to > from) chunks.push(Buffer.from(bytes.subarray(from, to)));
    from = Math.max(from, to);
  }
  return chunks;
}
