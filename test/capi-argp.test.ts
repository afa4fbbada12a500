/**
 * doca_argp, doca_log and a generated stub in a C program built with meson against `softdpu sdk`'s
 * trees, as a DOCA project builds (test/fixtures/capi/argp-log: a sample-like main): its usage, its
 * flags from the command line and from a JSON file in DOCA's layout, DOCA's general flags, the usage
 * errors (exit code 2), the log levels, the side the tree selects, a call the library does not
 * implement (DOCA_ERROR_NOT_SUPPORTED and one log line), all without LD_LIBRARY_PATH; then the same
 * program and library under AddressSanitizer, leaks included.
 */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import type { Ran } from './helpers/child.js';
import { assertRan, capiFixtures, ccBuild, mesonBuild, repoRoot, runProgram, writeSdk } from './helpers/capi.js';

const PROGRAM = 'doca_argp_log';
const SOURCE = join(capiFixtures, 'argp-log');

/** DOCA's layout of a flags file, with the comments DOCA's own files carry. */
const FLAGS_JSON = `/*
 * A flags file as DOCA's applications ship them.
 */
{
	"doca_general_flags": {
		// -l - the application's log level
		"log-level": 60
	},
	"doca_program_flags": {
		"pci-addr": "b1:00.0",
		"count": 7,
		"verbose": true,
		"name": ["x", "y"]
	}
}
`;

/** The line the program prints once argp is done: its configuration. */
function configLine(r: Ran): string | undefined {
  return r.stdout.split('\n').find((l) => l.startsWith('pci-addr='));
}

/** The application log lines of a level ('DBG'), from stdout or stderr. */
function logLines(text: string, tag: string): string[] {
  return text.split('\n').filter((l) => l.includes(`][APP][${tag}][ARGP_LOG::MAIN] `));
}

test('a DOCA program built with meson against the tree parses flags with doca_argp and logs with doca_log', { timeout: 180_000 }, async (t) => {
  const tree = await writeSdk(t, { cflags: '-Werror' });
  const host = join(await mesonBuild(t, tree, 'host', SOURCE, 'build-host'), PROGRAM);
  const dpu = join(await mesonBuild(t, tree, 'dpu', SOURCE, 'build-dpu'), PROGRAM);
  const run = (args: string[], path = host) => runProgram(t, path, args, tree.scratch);

  await t.test('-h prints the usage on stdout and exits 0; DOCA_LOG_REGISTER registered its source before main', async () => {
    const r = assertRan(await run(['-h']), '-h');
    const usage = r.stdout.slice(r.stdout.indexOf('Usage:'));
    assert.match(usage, /^Usage: doca_argp_log \[DOCA Flags\] \[Program Flags\]\n\nDOCA Flags:\n/);
    for (const row of [/^ {2}-h, --help +print this help$/m, /^ {2}-v, --version +/m, /^ {2}-l, --log-level <level> +application log level: 10=DISABLE .* 70=TRACE$/m, /^ {6}--sdk-log-level <level> +/m, /^ {2}-j, --json <path> +/m]) {
      assert.match(usage, row);
    }
    assert.match(usage, /\nProgram Flags:\n {2}-p, --pci-addr <value> +DOCA device PCI address \(required\)\n {2}-c, --count <number> +how many times\n {6}--verbose +say more\n {2}-n, --name <value> +a name \(repeatable\)\n$/);
    assert.equal(logLines(r.stderr, 'INF').filter((l) => l.endsWith('] logging before main')).length, 1, 'a constructor logged through the registered source');
  });

  await t.test('-v prints softdpu\'s version line and exits 0', async () => {
    const r = assertRan(await run(['-v']), '-v');
    const pkg = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { version: string };
    assert.ok(r.stdout.split('\n').includes(`softdpu ${pkg.version} (DOCA 3.0 API)`), r.stdout);
  });

  await t.test('short, long, integer, boolean and repeated flags reach their callbacks; the tree picks the side', async () => {
    const r = assertRan(await run(['-p', '03:00.0', '--count=5', '--verbose', '-n', 'a', '--name', 'b']), 'flags');
    assert.equal(configLine(r), 'pci-addr=03:00.0 count=5 verbose=1 names=a,b log-level=50 sdk-log-level=50 side=host');
    const d = assertRan(await run(['-p', '03:00.0'], dpu), 'flags (dpu)');
    assert.match(configLine(d) ?? '', / side=dpu$/);
  });

  await t.test('the log level: INFO by default, -l 60 adds DEBUG, -l 30 keeps ERROR and CRIT; stdout up to INFO, stderr from WARNING', async () => {
    const plain = assertRan(await run(['-p', '1']), 'default level');
    assert.equal(logLines(plain.stdout, 'INF').filter((l) => l.endsWith('] an info line')).length, 1);
    assert.deepEqual(logLines(plain.stdout, 'DBG'), []);
    for (const [tag, text] of [['CRIT', 'a critical line'], ['ERR', 'an error line'], ['WARN', 'a warning line']]) {
      assert.equal(logLines(plain.stderr, tag!).filter((l) => l.endsWith(`] ${text}`)).length, 1, `${tag} on stderr`);
    }
    const debug = assertRan(await run(['-p', '1', '-l', '60']), '-l 60');
    assert.match(configLine(debug) ?? '', / log-level=60 /);
    assert.equal(logLines(debug.stdout, 'DBG').filter((l) => l.endsWith('] a debug line')).length, 1);
    const quiet = assertRan(await run(['-p', '1', '--log-level', 'error']), '--log-level error');
    assert.deepEqual([logLines(quiet.stdout, 'INF').filter((l) => l.endsWith('] an info line')), logLines(quiet.stderr, 'WARN')], [[], []]);
    assert.equal(logLines(quiet.stderr, 'ERR').length, 1);
    assert.equal(logLines(quiet.stderr, 'CRIT').length, 1);
  });

  await t.test('a call the library does not implement answers NOT_SUPPORTED and says so once, on the SDK log', async () => {
    const r = assertRan(await run(['-p', '1']), 'stub');
    assert.ok(r.stdout.split('\n').includes('doca_comch_msgq_create: DOCA_ERROR_NOT_SUPPORTED, DOCA_ERROR_NOT_SUPPORTED, msgq NULL'), r.stdout);
    const lines = r.stderr.split('\n').filter((l) => l.includes('doca_comch_msgq_create'));
    assert.equal(lines.length, 1, r.stderr);
    assert.match(lines[0]!, /^\[\d\d:\d\d:\d\d:\d{3}\]\[\d+\]\[DOCA\]\[WARN\]\[comch_msgq\] doca_comch_msgq_create is not implemented by softdpu's C library: it returns DOCA_ERROR_NOT_SUPPORTED \(docs\/c\.md\)$/);
    const silenced = assertRan(await run(['-p', '1', '--sdk-log-level', '30']), '--sdk-log-level 30');
    assert.deepEqual(silenced.stderr.split('\n').filter((l) => l.includes('[DOCA]')), [], 'the SDK level filters it');
  });

  await t.test('a JSON flags file in DOCA\'s layout, comments included, sets the flags; the command line wins', async () => {
    const file = join(tree.scratch, 'flags.json');
    writeFileSync(file, FLAGS_JSON);
    const r = assertRan(await run(['-j', file, '-c', '9']), '-j');
    assert.equal(configLine(r), 'pci-addr=b1:00.0 count=9 verbose=1 names=x,y log-level=60 sdk-log-level=50 side=host');
  });

  await t.test('usage errors: one line naming what is wrong, the usage on stderr, exit code 2, no callback run', async () => {
    const cases: [string[], string][] = [
      [['-c', '5'], 'missing the mandatory flag -p, --pci-addr'],
      [['-p', '1', '--bogus'], 'unknown flag --bogus'],
      [['-p', '1', '-c', 'five'], '-c "five" is not an integer'],
      [['-p', '1', '-c', '-5'], '-c needs a value (got "-5"? write -c=-5)'],
      [['-p', '1', '--verbose=yes'], '--verbose takes no value (got "yes")'],
      [['-p', '1', '-p', '2'], '-p is given more than once'],
      [['-p', '1', 'extra'], 'unexpected argument "extra" (every value follows its flag)'],
      [['-p', '1', '-l', 'loud'], '-l "loud" is not a log level (10=DISABLE 20=CRITICAL 30=ERROR 40=WARNING 50=INFO 60=DEBUG 70=TRACE, or their names)'],
      [['-p', '0000:03:00.0.0'], '-p: the program refused the value (DOCA_ERROR_INVALID_VALUE)'],
    ];
    for (const [args, message] of cases) {
      const r = assertRan(await run(args), args.join(' '), 2);
      assert.ok(r.stderr.includes(`doca_argp_log: ${message}\n\nUsage: doca_argp_log [DOCA Flags] [Program Flags]\n`), `${args.join(' ')}:\n${r.stderr}`);
      assert.equal(configLine(r), undefined, `${args.join(' ')}: the program did not go on`);
    }
  });

  await t.test('a JSON file that cannot be read or says something wrong fails doca_argp_start (exit 1, the program\'s)', async () => {
    const bad = join(tree.scratch, 'bad.json');
    const cases: [string | undefined, string][] = [
      [undefined, `cannot read the JSON flags file ${join(tree.scratch, 'none.json')}: No such file or directory`],
      ['{"doca_program_flags": {"pci-addr": "1", "bogus": 1}}', `JSON flags file ${bad} line 1: unknown flag "bogus"`],
      ['{\n  "pci-addr": "1",\n  "count": "many"\n}', `JSON flags file ${bad} line 3: "count" "many" is not an integer`],
      ['{"pci-addr": "1", "json": "x.json"}', `JSON flags file ${bad} line 1: "json" is for the command line only`],
      ['{"pci-addr": "1",\n "count": 1,,}', `JSON flags file ${bad} is not JSON: line 2: expected a member's name in quotes`],
    ];
    for (const [text, message] of cases) {
      if (text !== undefined) writeFileSync(bad, text);
      const r = assertRan(await run(['-j', text === undefined ? join(tree.scratch, 'none.json') : bad]), message, 1);
      assert.ok(r.stderr.includes(`doca_argp_log: ${message}\n`), `${message}:\n${r.stderr}`);
      assert.equal(logLines(r.stderr, 'ERR').filter((l) => l.includes('] Failed to parse sample input: ')).length, 1);
      assert.equal(configLine(r), undefined);
    }
  });
});

test('the same program and library run clean under AddressSanitizer and UBSan, leaks included', { timeout: 180_000 }, async (t) => {
  const sanitize = '-fsanitize=address,undefined,float-cast-overflow -fno-omit-frame-pointer -fno-sanitize-recover=all';
  const tree = await writeSdk(t, { cflags: `${sanitize} -Werror` });
  const host = join(await mesonBuild(t, tree, 'host', SOURCE, 'build-asan', ['-Db_sanitize=address,undefined']), PROGRAM);
  const file = join(tree.scratch, 'flags.json');
  writeFileSync(file, FLAGS_JSON);
  const env = { ASAN_OPTIONS: 'detect_leaks=1:abort_on_error=0', UBSAN_OPTIONS: 'halt_on_error=1:print_stacktrace=1' };
  const cases: [string[], number][] = [
    [['-h'], 0],
    [['-v'], 0],
    [['-j', file, '-n', 'z', '-l', '60'], 0],
    [['-c', '5'], 2],
    [['-p', '1', '--bogus'], 2],
    [['-j', join(tree.scratch, 'none.json')], 1],
  ];
  for (const [args, code] of cases) {
    const r = assertRan(await runProgram(t, host, args, tree.scratch, env), `${args.join(' ')} under ASan`, code);
    assert.doesNotMatch(r.stderr, /Sanitizer|runtime error/, `${args.join(' ')}: ${r.stderr}`);
  }
  const log = await ccBuild(t, tree, 'host', join(capiFixtures, 'log.c'), 'log', sanitize.split(' '));
  const r = assertRan(await runProgram(t, log, [], tree.scratch, env), 'log.c under ASan');
  assert.ok(r.stdout.includes('log: ok') && !/Sanitizer|runtime error/.test(r.stderr), r.stderr);
});
