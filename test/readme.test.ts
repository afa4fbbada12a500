/**
 * The README, followed in order as a newcomer does: every shell block that runs the command
 * (`npx softdpu ...`) or the examples (`node examples/...`), line by line, on a private fabric (the
 * default one, `$SOFTDPU_FABRIC`, and each other `--fabric` the README names, mapped to directories of
 * this test). Every command must succeed, and no step may break a later one (a fault plan left in force,
 * a server left running). Blocks that install, build, test or benchmark (npm ...) are not run here.
 *
 * How a line runs, as the README means it: `A & B` starts A in the background; a `*_server` sample is
 * the DPU side "in one terminal" and runs in the background too; `softdpu top` without `--once` and
 * `softdpu view` are live and are stopped (SIGTERM) at the end of their block, once they printed; every
 * other background process must end by itself, with 0, by then.
 *
 * What the README says a command shows is checked where a newcomer would look: `softdpu top --once
 * --json` run right after a sample pair lists that pair, exited, by its samples' names.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { it, type TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { FabricSnapshot } from '../src/fabric/stats-reader.js';
import { type Child, cliPath, spawnChild } from './helpers/child.js';
import { tempFabricDir } from './helpers/fabric.js';

const repo = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
/** Bound on one command (a sample pair is a few seconds): far beyond, so that only a hang trips it. */
const COMMAND_MS = 60_000;

/** The README's shell blocks, with their line numbers. */
function shellBlocks(text: string): { line: number; lines: string[] }[] {
  const blocks: { line: number; lines: string[] }[] = [];
  const all = text.split('\n');
  for (let i = 0; i < all.length; i++) {
    if (all[i] !== '```sh') continue;
    const start = i + 1;
    while (++i < all.length && all[i] !== '```');
    blocks.push({ line: start + 1, lines: all.slice(start, i) });
  }
  return blocks;
}

/** Words of a command line, as sh splits them (single and double quotes); a `#` comment dropped. */
function words(line: string): string[] {
  const out: string[] = [];
  let word: string | undefined;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (c === "'" || c === '"') {
      const end = line.indexOf(c, i + 1);
      assert.ok(end > i, `unterminated quote in ${line}`);
      word = (word ?? '') + line.slice(i + 1, end);
      i = end;
    } else if (c === ' ') {
      if (word !== undefined) out.push(word);
      word = undefined;
    } else if (c === '#' && word === undefined) {
      break;
    } else {
      word = (word ?? '') + c;
    }
  }
  if (word !== undefined) out.push(word);
  return out;
}

interface Running {
  child: Child;
  what: string;
  live: boolean;
}

function start(t: TestContext, argv: string[], env: Record<string, string>, where: string): Running {
  const [cmd, ...args] = argv;
  const what = `${where}: ${argv.join(' ')}`;
  if (cmd === 'npx' && args[0] === 'softdpu') {
    const rest = args.slice(1);
    const live = (rest[0] === 'top' && !rest.includes('--once')) || rest[0] === 'view';
    return { child: spawnChild(t, 'softdpu', rest, { script: cliPath, env }), what, live };
  }
  assert.equal(cmd, 'node', `${what}: the README runs only npx softdpu and node here`);
  return { child: spawnChild(t, 'node', args.slice(1), { script: join(repo, args[0]!), env }), what, live: false };
}

async function ended(r: Running): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const bound = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${r.what}: still running after ${COMMAND_MS} ms`)), COMMAND_MS)));
  try {
    const exit = await Promise.race([r.child.exited, bound]);
    assert.deepEqual(exit, { code: 0, signal: null }, `${r.what} failed:\n${r.child.stderr.join('').slice(-3000)}\n${r.child.lines.slice(-10).join('\n')}`);
  } finally {
    clearTimeout(timer);
  }
}

it('the README can be followed in order: every command it shows succeeds, and none breaks a later one', { timeout: 600_000 }, async (t) => {
  const fabric = tempFabricDir(t);
  const others = new Map<string, string>();
  const env = { SOFTDPU_FABRIC: fabric };
  const readme = readFileSync(join(repo, 'README.md'), 'utf8');
  const blocks = shellBlocks(readme).filter((b) => b.lines.some((l) => /^(npx softdpu|node examples\/)/.test(l)));
  assert.ok(blocks.length >= 4, `the README's command blocks: ${blocks.length}`);
  let ran = 0;
  let snapshots = 0;
  for (const block of blocks) {
    const background: Running[] = [];
    for (const [k, raw] of block.lines.entries()) {
      const where = `README.md:${block.line + k}`;
      const parts = raw.split(' & ');
      for (const [p, part] of parts.entries()) {
        const argv = words(part.replace(/ &\s*(#.*)?$/, ''));
        if (argv.length === 0) continue;
        // Every other fabric the README names gets a private directory of this test.
        const i = argv.indexOf('--fabric');
        if (i >= 0) {
          const named = argv[i + 1]!;
          if (!others.has(named)) others.set(named, join(tempFabricDir(t), 'fabric'));
          argv[i + 1] = others.get(named)!;
        }
        const r = start(t, argv, env, where);
        ran++;
        const inBackground = p < parts.length - 1 || /&\s*(#.*)?$/.test(part) || r.live || argv.some((a) => /_server$/.test(a));
        if (inBackground) background.push(r);
        else await ended(r);
        if (!inBackground && argv.includes('top') && argv.includes('--json')) {
          // Right after the pair above it: the pair is shown though both processes have exited.
          const titles = (JSON.parse(r.child.lines.join('\n')) as FabricSnapshot).threads.filter((th) => !th.alive).map((th) => th.title);
          for (const name of ['comch_ctrl_path_server', 'comch_ctrl_path_client']) {
            assert.ok(titles.some((title) => title.startsWith(`softdpu sample ${name}`)), `${where}: top --once --json shows the ${name} process that exited: ${JSON.stringify(titles)}`);
          }
          snapshots++;
        }
      }
    }
    for (const r of background) {
      if (!r.live) continue;
      await r.child.waitFor(/./, COMMAND_MS); // it drew, or said where it serves
      r.child.kill('SIGTERM');
      await r.child.exited;
    }
    for (const r of background.filter((b) => !b.live)) await ended(r);
  }
  assert.equal(snapshots, 1, 'the README shows one top --once --json after a pair');
  t.diagnostic(`${ran} commands from ${blocks.length} blocks`);
});
