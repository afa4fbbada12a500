/**
 * The API reference (`npm run docs`, typedoc.config.mjs): TypeDoc builds it from the doc comments of the
 * package's public exports without a single warning (validation makes broken links, undocumented exports
 * and referenced-but-unexported symbols warnings, and warnings fail the build), every public class has an
 * example and names the `doca_*` object it models. Built into a temporary directory, never build/docs, so
 * that runs in parallel do not collide.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { type TestContext, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { runCommand } from './helpers/child.js';
import { tempFabricDir } from './helpers/fabric.js';

const repo = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
/** TypeDoc type-checks src/ (TypeScript 6) and renders it: about 10 s alone, more beside other tests. */
const WATCHDOG_MS = 100_000;

/** TypeDoc with `args`, from the repository, bounded by WATCHDOG_MS; stdout and stderr together. */
async function typedoc(t: TestContext, args: string[]): Promise<{ code: number | null; signal: NodeJS.Signals | null; output: string }> {
  const bin = join(repo, 'node_modules', 'typedoc', 'bin', 'typedoc');
  const ran = await runCommand(t, process.execPath, [bin, ...args], repo, { ...process.env, NO_COLOR: '1' }, WATCHDOG_MS);
  return { code: ran.code, signal: ran.signal, output: ran.stdout + ran.stderr };
}

/** The parts of TypeDoc's JSON output this test reads. */
interface JsonComment {
  summary: { text: string }[];
  blockTags?: { tag: string; content: { text: string }[] }[];
}
interface JsonReflection {
  name: string;
  kind: number;
  comment?: JsonComment;
  children?: JsonReflection[];
}
const CLASS = 128;

const commentText = (c: JsonComment | undefined): string =>
  c ? [...c.summary, ...(c.blockTags ?? []).flatMap((b) => [{ text: `${b.tag} ` }, ...b.content])].map((p) => p.text).join('') : '';

test('npm run docs: the API reference builds with no warning, and every public class has an example and its doca_* name', { timeout: 120_000 }, async (t) => {
  const tmp = tempFabricDir(t, 'softdpu-docs-');
  const html = join(tmp, 'html');
  const json = join(tmp, 'api.json');
  // The options `npm run docs` uses, with another output directory and the JSON model beside the site.
  const ran = await typedoc(t, ['--options', 'typedoc.config.mjs', '--out', html, '--json', json]);
  assert.deepEqual([ran.code, ran.signal], [0, null], ran.output);
  assert.doesNotMatch(ran.output, /\[(warning|error)\]/, 'TypeDoc warned (validation warnings are errors here)');

  // The site: ComchServer's page names the DOCA object it models.
  const classes = join(html, 'classes');
  const page = readdirSync(classes).find((f) => /(^|\.)ComchServer\.html$/.test(f));
  assert.ok(page, `no ComchServer page among ${readdirSync(classes).join(', ')}`);
  const text = readFileSync(join(classes, page), 'utf8');
  assert.match(text, /doca_comch_server/);
  assert.ok(existsSync(join(html, 'index.html')), `no index.html in ${html}`);

  // Both entry points are there, and every class of the API has an @example and names its doca_* object.
  const project = JSON.parse(readFileSync(json, 'utf8')) as JsonReflection;
  const modules = (project.children ?? []).map((m) => m.name).sort();
  assert.deepEqual(modules, ['softdpu', 'softdpu/dpa-dev']);
  const missing: string[] = [];
  let count = 0;
  for (const mod of project.children ?? []) {
    for (const child of mod.children ?? []) {
      if (child.kind !== CLASS) continue;
      count++;
      const comment = commentText(child.comment);
      if (!child.comment?.blockTags?.some((b) => b.tag === '@example')) missing.push(`${child.name}: no @example`);
      if (!/doca_\w+/.test(comment)) missing.push(`${child.name}: names no doca_* call or object`);
    }
  }
  assert.ok(count >= 30, `only ${count} classes in the API reference`);
  assert.deepEqual(missing, []);
});
