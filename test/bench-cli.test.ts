/**
 * `softdpu bench`: the whole quick run gives every scenario a softdpu figure and each of its baselines'
 * (--json), --plot draws the sweeps as well-formed SVG with every series named, --filter measures only
 * what it selects, and an installed package (no dist/bench) says where the benchmarks are. The benchmark
 * suite busy-polls both cores: scripts/run-tests.mjs runs this file alone, after the others.
 */
import assert from 'node:assert/strict';
import { cpSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { type TestContext, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { type Ran, runCommand } from './helpers/child.js';
import { tempFabricDir } from './helpers/fabric.js';

const dist = join(dirname(fileURLToPath(import.meta.url)), '..');
const cli = join(dist, 'src', 'cli', 'main.js');

interface Figure {
  [key: string]: number | string | undefined;
}
interface Scenario {
  id: string;
  bench: string;
  metric: string;
  count: number | null;
  size_bytes: number | null;
  sweep: { id: string; title: string } | null;
  softdpu: Figure;
  baselines: Record<string, Figure & { label: string }>;
  ratios: Record<string, Record<string, number>>;
  targets: { text: string; value: number; met: boolean; of?: string; metric?: string }[];
}
interface Result {
  schema: string;
  quick: boolean;
  benches: Record<string, { scenarios: number; seconds: number }>;
  failed: string[];
  scenarios: Scenario[];
}

/** A temp directory of this test, removed afterwards; the benchmarks make theirs under it (TMPDIR). */
const tempDir = (t: TestContext) => tempFabricDir(t, 'sdpu-bench-cli-');

/**
 * Runs `softdpu ARGS...` to its end, at the lowest priority (its peers inherit it): the runner runs this
 * file alone, but busy-polling benchmarks must not starve whatever else shares the machine (another test
 * run, say, whose samples and peers wait with timeouts). The CLI and every peer it started (its process
 * group) are killed when the test ends.
 */
function softdpu(t: TestContext, args: string[], env: Record<string, string>, script = cli): Promise<Ran> {
  return runCommand(t, 'nice', ['-n', '19', process.execPath, script, ...args], process.cwd(), { ...process.env, ...env }, 600_000);
}

/**
 * A small XML reader, enough to prove the SVG well-formed: every tag closed in order, attributes quoted,
 * text escaped. Returns each element's name and attributes, and the text of <text> elements.
 */
function readXml(src: string): { root: string; rootAttrs: Record<string, string>; elements: { name: string; attrs: Record<string, string> }[]; texts: string[] } {
  const token = /<!--[\s\S]*?-->|<(\/?)([A-Za-z][\w:.-]*)((?:\s+[\w:.-]+="[^"<]*")*)\s*(\/?)>|([^<]+)/y;
  const stack: string[] = [];
  const elements: { name: string; attrs: Record<string, string> }[] = [];
  const texts: string[] = [];
  let root = '';
  let pos = 0;
  while (pos < src.length) {
    token.lastIndex = pos;
    const m = token.exec(src);
    assert.ok(m, `not well-formed XML at ${pos}: ${JSON.stringify(src.slice(pos, pos + 60))}`);
    pos = token.lastIndex;
    const [, close, name, attrText, selfClose, text] = m;
    if (text !== undefined) {
      assert.ok(stack.length || !text.trim(), `text outside the root: ${JSON.stringify(text.slice(0, 40))}`);
      assert.doesNotMatch(text, /&(?!(amp|lt|gt|quot|apos|#\d+|#x[0-9a-f]+);)/i, `unescaped & in ${JSON.stringify(text)}`);
      if (stack.at(-1) === 'text') texts.push(text.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&amp;/g, '&'));
    } else if (name !== undefined) {
      if (close) {
        assert.equal(stack.pop(), name, `</${name}> closes another element`);
        continue;
      }
      if (!root) root = name;
      else assert.ok(stack.length, `a second root element <${name}>`);
      const attrs = Object.fromEntries([...attrText!.matchAll(/([\w:.-]+)="([^"]*)"/g)].map((a) => [a[1]!, a[2]!]));
      elements.push({ name, attrs });
      if (!selfClose) stack.push(name);
    }
  }
  assert.deepEqual(stack, [], 'every element is closed');
  return { root, rootAttrs: elements[0]?.attrs ?? {}, elements, texts };
}

test('softdpu bench --quick: every scenario has a softdpu figure and its baselines; --plot x.svg draws them', { timeout: 600_000 }, async (t) => {
  const dir = tempDir(t);
  const [json, svg] = [join(dir, 'bench.json'), join(dir, 'bench.svg')];
  const run = await softdpu(t, ['bench', '--quick', '--json', json, '--plot', svg], { TMPDIR: dir });
  assert.equal(run.code, 0, `softdpu bench exited with ${run.code}\n${run.stderr.slice(-4000)}\n${run.stdout.slice(-4000)}`);
  const result = JSON.parse(readFileSync(json, 'utf8')) as Result;
  assert.equal(result.schema, 'softdpu-bench/1');
  assert.deepEqual(result.failed, [], 'no benchmark failed');
  assert.equal(result.quick, true);
  // Every benchmark measured (a table each on stdout) and recorded scenarios.
  for (const [name, b] of Object.entries(result.benches)) {
    assert.ok(b.scenarios > 0, `benchmark ${name} recorded no scenario: measure through scenario() (bench/lib.ts)`);
    assert.ok(result.scenarios.some((s) => s.bench === name), `benchmark ${name} has no entry in scenarios`);
  }
  for (const name of ['fabric', 'comch', 'fastpath', 'sync-event', 'idle', 'scale', 'threads', 'faults', 'dpa', 'observe', 'c', 'alloc', 'copy']) assert.ok(result.benches[name], `benchmark ${name} ran`);
  assert.equal(new Set(result.scenarios.map((s) => s.id)).size, result.scenarios.length, 'scenario ids are unique');
  // Idle CPU can be 0 in a quiet second, and allocation 0 on a path that allocates nothing; every other
  // figure is a time or a rate.
  const valid = (metric: string, v: unknown) => typeof v === 'number' && Number.isFinite(v) && (metric === 'cpu_pct' || metric === 'heap_bytes_per_msg' ? v >= 0 : v > 0);
  let baselines = 0;
  for (const s of result.scenarios) {
    assert.ok(valid(s.metric, s.softdpu[s.metric]), `${s.id}: softdpu's ${s.metric} is ${s.softdpu[s.metric]}`);
    if (s.metric === 'p50_us') assert.ok((s.softdpu.p99_us as number) >= (s.softdpu.p50_us as number), `${s.id}: p99 >= p50`);
    if (s.softdpu.p99_9_us !== undefined) assert.ok((s.softdpu.p99_9_us as number) >= (s.softdpu.p99_us as number), `${s.id}: p99.9 >= p99`);
    for (const [key, b] of Object.entries(s.baselines)) {
      baselines++;
      assert.ok(b.label, `${s.id}: baseline ${key} has a label`);
      assert.ok(valid(s.metric, b[s.metric]), `${s.id}: baseline ${key}'s ${s.metric} is ${b[s.metric]}`);
      if (s.metric !== 'cpu_pct') assert.ok(Number.isFinite(s.ratios[key]?.[s.metric]), `${s.id}: the ratio to ${key}`);
    }
    for (const target of s.targets) {
      assert.equal(typeof target.met, 'boolean', `${s.id}: ${target.text}`);
      assert.ok(Number.isFinite(target.value), `${s.id}: ${target.text} has a value`);
      if (target.of !== undefined) assert.ok(s.baselines[target.of], `${s.id}: ${target.text} compares with one of its baselines`);
    }
  }
  assert.ok(baselines >= 50, `${baselines} baseline figures`);
  // The message-size sweeps: control-path and fast-path round trips, fast-path bandwidth.
  const sizes = (sweep: string) => result.scenarios.filter((s) => s.sweep?.id === sweep).map((s) => s.size_bytes);
  assert.deepEqual(sizes('comch_rtt_asleep'), [64, 256, 1024, 4080]);
  assert.deepEqual(sizes('fastpath_rtt_asleep'), [64, 1024, 4096, 16384, 65536]);
  assert.deepEqual(sizes('fastpath_bandwidth'), [64, 1024, 4096, 16384, 65536, 1 << 20]);
  const byId = new Map(result.scenarios.map((s) => [s.id, s]));
  assert.deepEqual(Object.keys(byId.get('comch/rtt_asleep_1024')!.baselines), ['socket_callbacks', 'c_futex_shm']);
  assert.deepEqual(Object.keys(byId.get('fastpath/bandwidth_4096')!.baselines), ['c_shm_ring', 'socket_one_write_per_msg', 'zmq_ipc', 'buffer_copy_one_process']);
  assert.ok(byId.get('dpa/rtt_poll')!.targets.some((x) => x.text === 'p50 <= 5.0x SAB spin'));
  assert.ok(byId.get('dpa/launch')!.targets.some((x) => x.text === 'p99 <= 10.0x p50'), 'a target relative to softdpu\'s own figure');
  assert.ok(byId.get('sync-event/rtt_async_asleep')!.targets.some((x) => x.text === 'p50 <= 1.0x socket, callbacks'));
  // Sleeping round trips: every contender made the same trips and reports the steady-state tail (p99.9),
  // the warm-up (first trip, mean of the tenth dropped) and both processes' CPU; all judged against the socket.
  const sleeping = [...['64', '256', '1024', '4080', 'promises'].map((x) => `comch/rtt_asleep_${x}`), ...['64', '1024', '4096', '16384', '65536'].map((x) => `fastpath/rtt_asleep_${x}`), 'sync-event/rtt_async_asleep', 'sync-event/rtt_promises_asleep'];
  for (const id of sleeping) {
    const s = byId.get(id)!;
    assert.ok(s, `${id} ran`);
    for (const [who, f] of [['softdpu', s.softdpu], ...Object.entries(s.baselines)] as [string, Figure][]) {
      for (const k of ['p99_9_us', 'first_us', 'warmup_mean_us', 'cpu_pinger_us_per_msg', 'cpu_echoer_us_per_msg']) assert.ok(typeof f[k] === 'number' && (f[k] as number) > 0, `${id}: ${who}'s ${k} is ${f[k]}`);
    }
    const socket = Object.keys(s.baselines).find((k) => k.startsWith('socket'))!;
    assert.deepEqual(s.targets.filter((x) => x.of === socket).map((x) => x.text.split(' ')[0]), ['p50', 'p99', 'p99.9', 'CPU'], `${id}: judged against ${socket}`);
  }
  assert.equal(byId.get('comch/rtt_asleep_64')!.count, byId.get('fastpath/rtt_asleep_64')!.count, 'the sleeping round trips make as many trips');
  assert.match(run.stdout, /^ {6}warm-up: first trip \/ mean of \d+ dropped /m);
  // Allocation per message on every busy path, in the process doing the work.
  const alloc = result.scenarios.filter((s) => s.bench === 'alloc');
  assert.deepEqual(alloc.map((s) => s.id.slice('alloc/'.length)), ['ctrl_send_64', 'ctrl_send_resubmit_64', 'ctrl_recv_64', 'ctrl_rtt_asleep_pinger_64', 'fastpath_send_64', 'fastpath_send_resubmit_64', 'fastpath_post_recv_64', 'sync_event_creator', 'sync_event_importer', 'sync_event_tasks_creator', 'sync_event_tasks_importer', 'sync_event_spin_importer', 'msgq_cpu_rtt', 'msgq_cpu_send']);
  for (const s of alloc) {
    for (const k of ['gcs_per_msg', 'gc_pause_us_per_msg']) assert.ok(typeof s.softdpu[k] === 'number' && (s.softdpu[k] as number) >= 0, `${s.id}: ${k} is ${s.softdpu[k]}`);
    assert.equal(s.targets[0]?.metric, 'heap_bytes_per_msg', `${s.id}: judged on its allocation`);
  }
  // Tables on stdout, the progress on stderr (not a terminal here: a line per step).
  assert.match(run.stdout, /^comch control path, cross-process/m);
  assert.match(run.stderr, /^softdpu bench \d+:\d\d \[3\/13\] fastpath > bandwidth_65536$/m);

  const doc = readXml(readFileSync(svg, 'utf8'));
  assert.equal(doc.root, 'svg');
  assert.equal(doc.rootAttrs.xmlns, 'http://www.w3.org/2000/svg');
  for (const e of doc.elements) {
    for (const k of ['x', 'y', 'x1', 'x2', 'y1', 'y2', 'cx', 'cy', 'width', 'height']) if (e.attrs[k] !== undefined) assert.ok(Number.isFinite(Number(e.attrs[k])), `<${e.name} ${k}="${e.attrs[k]}">`);
    if (e.attrs.points !== undefined) assert.ok(e.attrs.points.split(/[ ,]/).every((v) => Number.isFinite(Number(v))), `<${e.name} points="${e.attrs.points}">`);
  }
  const charts = doc.elements.filter((e) => e.name === 'g' && e.attrs.class === 'chart').map((e) => e.attrs.id);
  assert.deepEqual(charts, ['comch_rtt_asleep', 'fastpath_rtt_asleep', 'fastpath_bandwidth']);
  for (const series of ['softdpu', 'socket, callbacks', 'C futex, shared buffers', 'C two-process ring', 'socket, one write per message', 'zeromq ipc://', 'Buffer.copy, one process, cache-hot']) {
    assert.ok(doc.texts.includes(series), `the legend names ${series}`);
  }
  assert.ok(doc.texts.includes('target: p50 <= 1.0x socket, callbacks (shaded: met)'));
  assert.ok(doc.texts.includes('target: bandwidth >= 0.8x C two-process ring (shaded: met)'));
  assert.ok(doc.texts.some((x) => /^Targets: \d+ of \d+ met in this run$/.test(x)));
  assert.ok(doc.texts.includes('dpa/rtt_poll: p50 <= 5.0x SAB spin'));
});

test('softdpu bench --filter measures only the scenarios it selects; --plot x.html embeds the SVG', { timeout: 120_000 }, async (t) => {
  const dir = tempDir(t);
  const [json, html] = [join(dir, 'f.json'), join(dir, 'f.html')];
  const run = await softdpu(t, ['bench', 'fabric', 'fastpath', '--quick', '--filter', 'copy_4096|rtt_asleep_1024$', '--json', json, '--plot', html], { TMPDIR: dir });
  assert.equal(run.code, 0, run.stderr);
  const result = JSON.parse(readFileSync(json, 'utf8')) as Result;
  assert.deepEqual(result.scenarios.map((s) => s.id), ['fabric/copy_4096', 'fastpath/rtt_asleep_1024']);
  assert.deepEqual(Object.keys(result.benches), ['fabric', 'fastpath']);
  const page = readFileSync(html, 'utf8');
  assert.match(page, /^<!doctype html>/);
  assert.match(page, /<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
  assert.match(page, /<td>fastpath\/rtt_asleep_1024<\/td>/);
  assert.doesNotMatch(page, /<script|https?:\/\/(?!www\.w3\.org\/2000\/svg)/, 'the page loads nothing');
  assert.deepEqual(readdirSync(dir).sort(), ['f.html', 'f.json'], 'the benchmarks removed their temp directories');

  const usage = await softdpu(t, ['bench', 'nope'], {});
  assert.equal(usage.code, 2);
  assert.match(usage.stderr, /unknown benchmark "nope" \(there are: fabric, comch, /);
});

test('softdpu bench c --quick: the C library against its C references, every row measured (the fast path measured or skipped, saying why)', { timeout: 600_000 }, async (t) => {
  const dir = tempDir(t);
  const json = join(dir, 'c.json');
  const run = await softdpu(t, ['bench', 'c', '--quick', '--json', json], { TMPDIR: dir });
  assert.equal(run.code, 0, `softdpu bench c exited with ${run.code}\n${run.stderr.slice(-4000)}\n${run.stdout.slice(-4000)}`);
  const result = JSON.parse(readFileSync(json, 'utf8')) as Result & { benches: Record<string, { details: { fastpath: { skipped?: string } } }> };
  const ids = result.scenarios.map((s) => s.id);
  const rows = ['rtt_busy', 'rtt_asleep', 'rtt_busy_c_ts', 'rtt_busy_ts_c', 'rtt_asleep_c_ts', 'rtt_asleep_ts_c', 'rate', 'se_rtt_busy', 'se_rtt_yield'];
  const skipped = result.benches.c!.details.fastpath.skipped;
  assert.deepEqual(ids, [...rows, ...(skipped ? [] : ['fastpath_65536', 'fastpath_1048576'])].map((id) => `c/${id}`));
  for (const s of result.scenarios) {
    const metric = s.metric;
    assert.ok(typeof s.softdpu[metric] === 'number' && (s.softdpu[metric] as number) > 0, `${s.id}: softdpu's ${metric} is ${s.softdpu[metric]}`);
    for (const [key, b] of Object.entries(s.baselines)) assert.ok(typeof b[metric] === 'number' && (b[metric] as number) > 0, `${s.id}: ${key}'s ${metric} is ${b[metric]}`);
  }
  const byId = new Map(result.scenarios.map((s) => [s.id, s]));
  // The round trips asleep carry both processes' CPU, for softdpu and for the reference.
  for (const f of [byId.get('c/rtt_asleep')!.softdpu, byId.get('c/rtt_asleep')!.baselines.c_unix!]) assert.ok((f.cpu_pinger_us_per_msg as number) > 0 && (f.cpu_echoer_us_per_msg as number) > 0);
  assert.deepEqual(byId.get('c/rtt_asleep')!.targets.map((x) => x.text), ['p50 <= 1.0x C Unix socket, blocking']);
  assert.deepEqual(byId.get('c/rtt_busy')!.targets.map((x) => x.text), ['p50 <= 3.0x C shared-memory spin']);
  assert.match(run.stdout, /^C library \(capi\/\), cross-process/m);
  assert.match(run.stdout, /softdpu \(C\)/);
  if (skipped) assert.match(run.stdout, /fast path 64 KiB and 1 MiB, C -> C: skipped: the C library has no fast path yet \(doca_comch_producer_\* answers NOT_SUPPORTED\); \S+: DOCA_ERROR_NOT_SUPPORTED$/m);
  else assert.deepEqual(byId.get('c/fastpath_65536')!.targets.map((x) => x.text), ['bandwidth >= 0.8x C two-process ring']);
  assert.deepEqual(readdirSync(dir).sort(), ['c.json'], 'the benchmark removed its temp directory (the install tree, the programs, the fabric)');
});

test('a benchmark that fails after it measured prints the table of what it measured, then says it failed', { timeout: 120_000 }, async (t) => {
  // A tree like the checkout's, whose fabric benchmark throws where it would print its table.
  const dir = tempDir(t);
  const tree = join(dir, 'tree');
  const repo = join(dist, '..');
  for (const part of ['src', 'bench']) cpSync(join(dist, part), join(tree, 'dist', part), { recursive: true });
  mkdirSync(join(tree, 'src', 'native'), { recursive: true });
  for (const link of ['node_modules', 'package.json', 'bench', join('src', 'native', 'build')]) symlinkSync(join(repo, link), join(tree, link));
  const file = join(tree, 'dist', 'bench', 'fabric.bench.js');
  const source = readFileSync(file, 'utf8');
  assert.equal(source.split('printScenarios(').length, 2, 'the fabric benchmark prints its table in one place');
  writeFileSync(file, source.replace(/\n(\s*)printScenarios\(/, "\n$1throw new Error('injected: fails where it would print its table');\n$1printScenarios("));
  const run = await softdpu(t, ['bench', 'fabric', '--quick', '--filter', 'copy_4096'], { TMPDIR: dir }, join(tree, 'dist', 'src', 'cli', 'main.js'));
  assert.equal(run.code, 1, run.stderr);
  assert.match(run.stdout, /^fabric: the scenarios measured before it failed/m);
  assert.match(run.stdout, /copy.*4 KiB.*GB\/s/, 'the row it measured');
  assert.match(run.stdout, /\(fabric: FAILED after [\d.]+ s: injected: fails where it would print its table\)/);
  assert.ok(run.stdout.indexOf('the scenarios measured before') < run.stdout.indexOf('FAILED after'), 'the table comes first');
  assert.match(run.stderr, /softdpu bench: fabric failed/);
});

test('softdpu bench without dist/bench (an installed package) says where the benchmarks are, exit 2', { timeout: 60_000 }, async (t) => {
  const dir = tempDir(t);
  mkdirSync(join(dir, 'dist'));
  cpSync(join(dist, 'src'), join(dir, 'dist', 'src'), { recursive: true });
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module' }));
  const run = await softdpu(t, ['bench', '--quick'], {}, join(dir, 'dist', 'src', 'cli', 'main.js'));
  assert.equal(run.code, 2);
  assert.equal(run.stdout, '');
  assert.match(run.stderr, /^softdpu bench: the benchmarks ship with the source repository, not the npm package: .*npm run bench.*\n$/);
});
