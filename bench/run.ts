/**
 * `npm run bench [-- NAME...] [-- --json FILE]`: runs the benchmarks (all, or those named) and prints a
 * table per benchmark, then every figure as JSON (to stdout, or to FILE).
 */
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { comchBench } from './comch.bench.js';
import { fabricBench } from './fabric.bench.js';
import { fastpathBench } from './fastpath.bench.js';
import { syncEventBench } from './sync-event.bench.js';

const benches: Record<string, () => Promise<Record<string, unknown>>> = {
  fabric: fabricBench,
  comch: comchBench,
  fastpath: fastpathBench,
  'sync-event': syncEventBench,
};

const { values, positionals } = parseArgs({ options: { json: { type: 'string' } }, allowPositionals: true });
const chosen = positionals.length ? positionals : Object.keys(benches);
for (const name of chosen) if (!benches[name]) throw new Error(`unknown benchmark ${name} (have: ${Object.keys(benches).join(', ')})`);
const results: Record<string, unknown> = { node: process.version, date: new Date().toISOString() };
for (const name of chosen) results[name] = await benches[name]!();
const json = JSON.stringify(results, null, 2);
if (values.json) writeFileSync(values.json, json + '\n');
else process.stdout.write(`\n${json}\n`);
