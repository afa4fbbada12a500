/**
 * docs/doca-mapping.md cannot drift from the code: every `doca_*` name a doc comment under src/ names is
 * in the table, and every DOCA call the table maps to softdpu is named by some doc comment under src/
 * (a DOCA name is one grep away, both ways).
 *
 * The table abbreviates: in one cell, `` `doca_mmap_create` / `_destroy` `` is doca_mmap_create and
 * doca_mmap_destroy, and `` `doca_x_set_y` / `_get_` `` is doca_x_set_y and doca_x_get_y. An abbreviation
 * is spelled against the last name before it, replacing its last parts (or, ending in `_`, one middle
 * part), so it may stand for several names: it counts when one of them is named. Braces list
 * alternatives: `doca_comch_{server,client}_as_ctx` is doca_comch_server_as_ctx and
 * doca_comch_client_as_ctx. Doc comments are read the same way. A name written with a wildcard
 * (`doca_comch_cap_*`) or ending in `_` names a family, not a call, and is not checked; nor is a file
 * (`doca_comch.h`, `libdoca_comch.so`). A row whose softdpu cell is `—` is a call softdpu does not model:
 * it is in the table, and no doc comment need name it.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

/** The repository: this file runs as dist/test/doca-mapping.test.js. */
const repo = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
/** A DOCA name, braces and all; what follows it says whether it is a wildcard or a file. */
const NAME = /\bdoca_(?:[a-z0-9_]|\{[a-z0-9_,]*\})+/g;
/**
 * An abbreviation in a table cell or a doc comment: a code span that starts with `_`, or a snake_case
 * one after a slash (`` `doca_mmap_set_user_data` / `get_user_data` `` in a doc comment).
 */
const ABBREVIATION = /`(_[a-z0-9_]+)`|\/ `(?!doca_)([a-z0-9]+_[a-z0-9_]+)`/g;
/** The softdpu cell of a call softdpu does not model. */
const UNMODELLED = '—';

/** An abbreviation, and what it may stand for: spelled out against each name before it (none: not a DOCA name's). */
interface Abbreviation {
  tail: string;
  after: string;
  spells: string[];
}

/** The names `text` writes out, and its abbreviations. */
interface Names {
  full: string[];
  abbreviations: Abbreviation[];
}

/** `doca_comch_{server,client}_x` -> doca_comch_server_x, doca_comch_client_x. */
function expand(name: string): string[] {
  const group = /\{([a-z0-9_,]*)\}/.exec(name);
  if (!group) return [name];
  return group[1]!.split(',').flatMap((alt) => expand(name.slice(0, group.index) + alt + name.slice(group.index + group[0].length)));
}

/** What an abbreviation `tail` after `base` may stand for: `_destroy` replaces a last part, `_get_` a middle part. */
function spell(base: string, tail: string): string[] {
  const out: string[] = [];
  const last = tail.replace(/_$/, '');
  for (let i = base.indexOf('_', 5); i > 0; i = base.indexOf('_', i + 1)) out.push(base.slice(0, i) + last);
  if (tail.endsWith('_')) for (const part of base.matchAll(/_(?=[a-z0-9]+_)/g)) out.push(base.slice(0, part.index) + base.slice(part.index).replace(/^_[a-z0-9]+_/, tail));
  return out;
}

/** The DOCA names in `text` (a table cell or a doc comment), and its abbreviations, each spelled against the last name before it. */
function names(text: string): Names {
  const tokens = [
    ...[...text.matchAll(NAME)].map((m) => ({ at: m.index, name: m[0], after: text.slice(m.index + m[0].length) })),
    ...[...text.matchAll(ABBREVIATION)].map((m) => ({ at: m.index, tail: m[1] ?? `_${m[2]!}` })),
  ].sort((a, b) => a.at - b.at);
  const found: Names = { full: [], abbreviations: [] };
  let bases: string[] = [];
  for (const token of tokens) {
    if ('tail' in token) {
      found.abbreviations.push({ tail: token.tail, after: bases.join(', '), spells: bases.flatMap((base) => spell(base, token.tail)) });
      continue;
    }
    if (/^\.(h|so)\b/.test(token.after)) continue; // a file: doca_comch.h, doca_common.so
    bases = expand(token.name).map((n) => n.replace(/_+$/, ''));
    if (token.after.startsWith('*') || token.name.endsWith('_')) continue; // a family: doca_comch_cap_*, the doca_dpa_dev_ calls
    found.full.push(...bases);
  }
  return found;
}

const spelled = (n: Names): string[] => n.abbreviations.flatMap((a) => a.spells);

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? sources(p) : p.endsWith('.ts') ? [p] : [];
  });
}

/** Every `doca_*` name the doc comments under src/ write out, with where one of them names it, and the names their abbreviations may spell. */
function commentNames(): { full: Map<string, string>; spelled: Set<string> } {
  const full = new Map<string, string>();
  const spelledOut = new Set<string>();
  for (const file of sources(join(repo, 'src'))) {
    const text = readFileSync(file, 'utf8');
    for (const comment of text.matchAll(/\/\*\*[\s\S]*?\*\//g)) {
      const line = text.slice(0, comment.index).split('\n').length;
      const found = names(comment[0]);
      for (const n of found.full) if (!full.has(n)) full.set(n, `${file.slice(repo.length + 1)}:${line}`);
      for (const n of spelled(found)) spelledOut.add(n);
    }
  }
  return { full, spelled: spelledOut };
}

/** The table's rows: the names of the DOCA column, and whether softdpu (TypeScript) models them. */
function tableRows(): { line: number; names: Names; modelled: boolean }[] {
  const lines = readFileSync(join(repo, 'docs', 'doca-mapping.md'), 'utf8').split('\n');
  const separator = (s: string | undefined): boolean => /^\|(\s*:?-+:?\s*\|)+\s*$/.test(s ?? '');
  const rows: { line: number; names: Names; modelled: boolean }[] = [];
  lines.forEach((text, i) => {
    if (!text.startsWith('|') || separator(text) || separator(lines[i + 1])) return; // not a row, a header
    const cells = text.split(/(?<!\\)\|/).slice(1, -1).map((c) => c.trim());
    rows.push({ line: i + 1, names: names(cells[0] ?? ''), modelled: (cells[1] ?? '') !== UNMODELLED });
  });
  return rows;
}

test('the names a table cell or a doc comment stands for', () => {
  const spells = (text: string): string[] => spelled(names(text));
  assert.deepEqual(names('`doca_mmap_create` / `_destroy`').full, ['doca_mmap_create']);
  assert.ok(spells('`doca_mmap_create` / `_destroy`').includes('doca_mmap_destroy'));
  assert.ok(spells('`doca_buf_inventory_buf_get_by_addr` / `_by_data` / `_buf_dup`').includes('doca_buf_inventory_buf_dup'));
  assert.ok(spells('`doca_comch_server_set_max_msg_size` / `_get_`').includes('doca_comch_server_get_max_msg_size'));
  assert.ok(spells('`doca_log_level_set_global_lower_limit` / `_get_`').includes('doca_log_level_get_global_lower_limit'));
  assert.ok(spells('`doca_mmap_set_user_data` / `get_user_data`').includes('doca_mmap_get_user_data'));
  assert.deepEqual(names('`doca_comch_{server,client}_as_ctx`').full, ['doca_comch_server_as_ctx', 'doca_comch_client_as_ctx']);
  assert.ok(spells('`doca_comch_{server,client}_set_imm` / `_get_`').includes('doca_comch_client_get_imm'));
  assert.deepEqual(names('`doca_comch_cap_*`, `doca_sync_event_task_*_as_doca_task`, the `doca_dpa_dev_` calls').full, []);
  assert.deepEqual(names('doca_comch.h, `doca_{common,comch}.so.2`, libdoca_common.so, `struct doca_dpa_app`, `enum doca_pe_event_mode`').full, ['doca_dpa_app', 'doca_pe_event_mode']);
  assert.deepEqual(names("samples' `open_doca_device_with_pci`, `DOCA_LOG_REGISTER`").full, []);
  assert.deepEqual(names('samples `comch_ctrl_path_server` / `_client`').abbreviations[0]!.spells, []);
});

test('the table and the doc comments are read (a test that finds nothing proves nothing)', () => {
  const rows = tableRows();
  assert.ok(rows.filter((r) => r.names.full.length > 0).length > 150, 'rows with DOCA names in docs/doca-mapping.md');
  assert.ok(rows.filter((r) => !r.modelled).length >= 3, 'rows of calls softdpu does not model');
  assert.ok(commentNames().full.size > 400, 'DOCA names in the doc comments under src/');
});

test('every doca_* name in a doc comment under src/ is in docs/doca-mapping.md', () => {
  const table = new Set(tableRows().flatMap((r) => [...r.names.full, ...spelled(r.names)]));
  const missing = [...commentNames().full].filter(([n]) => !table.has(n)).map(([n, where]) => `${n} (${where})`);
  assert.deepEqual(missing, [], `named in a doc comment, missing from the table:\n${missing.join('\n')}`);
});

test('every DOCA call docs/doca-mapping.md maps to softdpu is named by a doc comment under src/', () => {
  const comments = commentNames();
  const named = (n: string): boolean => comments.full.has(n) || comments.spelled.has(n);
  const missing = tableRows()
    .filter((r) => r.modelled)
    .flatMap((r) => [
      ...r.names.full.filter((n) => !named(n)).map((n) => `${n} (docs/doca-mapping.md:${r.line})`),
      // An abbreviation names a call when one of its spellings is named (none: it abbreviates no DOCA name, as in the samples' rows).
      ...r.names.abbreviations.filter((a) => a.spells.length > 0 && !a.spells.some(named)).map((a) => `\`${a.tail}\` after ${a.after} (docs/doca-mapping.md:${r.line})`),
    ]);
  assert.deepEqual(missing, [], `mapped in the table, named by no doc comment:\n${missing.join('\n')}`);
});
