/**
 * The C library's public headers (capi/include) read as data, for `softdpu sdk`: every function they
 * declare, which of them the library's sources define, and, generated from that at build time (as
 * NVIDIA's nvml-mock generates its stubs from nvml.h), a stub for each of the others and the list the
 * ABI test takes the address of. Nothing generated is committed; a later stage that implements a
 * function only has to define it in capi/, and its stub disappears.
 *
 * The reader knows the C those files are written in, not all of C: comments, preprocessor lines and
 * `extern "C"` guards are dropped, then top-level statements are split at `;` or at the end of a
 * function body. A declaration is a statement whose declarator is `doca_*(...)`; a definition is one
 * followed by a body, and one that is `static` (the headers' inline helpers) is neither.
 */

/** A function a header declares (`doca_pe_create` in doca_pe.h). */
export interface CFunction {
  name: string;
  /** The header's file name, `doca_pe.h`. */
  header: string;
  /** The return type as written, `doca_error_t` or `struct doca_ctx *`. */
  returns: string;
  /** The parameters as written, one per entry (`struct doca_pe **pe`); empty for `(void)`. */
  params: string[];
  variadic: boolean;
}

/** Blanks comments and string/char literals' contents out, keeping line structure. */
function stripComments(text: string): string {
  let out = '';
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    const next = text[i + 1];
    if (c === '/' && next === '*') {
      const end = text.indexOf('*/', i + 2);
      const stop = end < 0 ? text.length : end + 2;
      out += text.slice(i, stop).replace(/[^\n]/g, ' ');
      i = stop;
    } else if (c === '/' && next === '/') {
      while (i < text.length && text[i] !== '\n') i++;
    } else if (c === '"' || c === "'") {
      out += c;
      i++;
      while (i < text.length && text[i] !== c) {
        if (text[i] === '\\') i++;
        i++;
      }
      out += c;
      i++;
    } else {
      out += c;
      i++;
    }
  }
  return out;
}

/** Drops `#ifdef __cplusplus` ... `#endif` blocks, then every preprocessor line (with its continuations). */
function stripPreprocessor(text: string): string {
  const lines = text.split('\n');
  const out: string[] = [];
  let skippingCxx = false;
  let continued = false;
  for (const line of lines) {
    const trimmed = line.trim();
    if (skippingCxx) {
      if (/^#\s*endif\b/.test(trimmed)) skippingCxx = false;
      continue;
    }
    if (continued || trimmed.startsWith('#')) {
      if (/^#\s*ifdef\s+__cplusplus\b/.test(trimmed)) skippingCxx = true;
      continued = trimmed.endsWith('\\');
      continue;
    }
    out.push(line);
  }
  return out.join('\n');
}

/** `__attribute__((...))` and DOCA's attribute macros removed. */
function stripAttributes(text: string): string {
  let out = text.replace(/\b(DOCA_STABLE|DOCA_EXPERIMENTAL|DOCA_DEPRECATED|DOCA_USED)\b/g, ' ');
  for (let at = out.indexOf('__attribute__'); at >= 0; at = out.indexOf('__attribute__')) {
    let i = out.indexOf('(', at);
    let depth = 0;
    for (; i < out.length; i++) {
      if (out[i] === '(') depth++;
      else if (out[i] === ')' && --depth === 0) break;
    }
    out = out.slice(0, at) + ' ' + out.slice(i + 1);
  }
  return out;
}

interface Statement {
  /** The statement's text up to its body or `;`. */
  head: string;
  hasBody: boolean;
}

function statements(text: string): Statement[] {
  const out: Statement[] = [];
  let start = 0;
  let depth = 0;
  let bodyAt = -1;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === '(' || c === '[' || c === '{') {
      if (c === '{' && depth === 0) bodyAt = i;
      depth++;
    } else if (c === ')' || c === ']' || c === '}') {
      depth--;
      // The end of a function's body: its head ends with the parameter list.
      if (c === '}' && depth === 0 && /\)\s*$/.test(text.slice(start, bodyAt))) {
        out.push({ head: text.slice(start, bodyAt), hasBody: true });
        start = i + 1;
        bodyAt = -1;
      }
    } else if (c === ';' && depth === 0) {
      out.push({ head: text.slice(start, bodyAt >= 0 ? bodyAt : i), hasBody: false });
      start = i + 1;
      bodyAt = -1;
    }
  }
  return out;
}

/** Splits a parameter list at its top-level commas. */
function splitParams(list: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let from = 0;
  for (let i = 0; i < list.length; i++) {
    if (list[i] === '(') depth++;
    else if (list[i] === ')') depth--;
    else if (list[i] === ',' && depth === 0) {
      out.push(list.slice(from, i));
      from = i + 1;
    }
  }
  out.push(list.slice(from));
  return out.map((p) => p.replace(/\s+/g, ' ').trim()).filter((p) => p !== '');
}

interface Parsed {
  name: string;
  returns: string;
  params: string[];
  variadic: boolean;
  isStatic: boolean;
  hasBody: boolean;
}

/** The functions a C text declares or defines, in order. */
function functionsOf(text: string): Parsed[] {
  const out: Parsed[] = [];
  for (const { head, hasBody } of statements(stripAttributes(stripPreprocessor(stripComments(text))))) {
    const flat = head.replace(/\s+/g, ' ').trim();
    if (flat.startsWith('typedef ')) continue;
    const m = /^([^()]*?)\b(doca_\w+)\s*\((.*)\)$/.exec(flat);
    if (!m) continue;
    const returns = m[1]!.trim();
    if (returns === '' || /\b(struct|union|enum)\s*$/.test(returns)) continue;
    const all = splitParams(m[3]!);
    const variadic = all[all.length - 1] === '...';
    const params = all.filter((p) => p !== '...' && p !== 'void');
    out.push({ name: m[2]!, returns: returns.replace(/\bstatic\b|\binline\b/g, '').trim(), params, variadic, isStatic: /\bstatic\b/.test(returns), hasBody });
  }
  return out;
}

/** The exported functions `header` (named `file`) declares; its static inline helpers are not among them. */
export function declaredFunctions(header: string, file: string): CFunction[] {
  return functionsOf(header)
    .filter((f) => !f.isStatic && !f.hasBody)
    .map(({ name, returns, params, variadic }) => ({ name, header: file, returns, params, variadic }));
}

/** The `doca_*` functions a source file of the library defines (not static). */
export function definedFunctions(source: string): string[] {
  return functionsOf(source)
    .filter((f) => f.hasBody && !f.isStatic)
    .map((f) => f.name);
}

/** The parameter's name: its last identifier (every parameter in the headers is named). */
function paramName(param: string, fn: CFunction): string {
  const m = /(\w+)\s*(\[[^\]]*\])?$/.exec(param);
  if (!m) throw new Error(`${fn.header}: a parameter of ${fn.name} has no name: ${JSON.stringify(param)}`);
  return m[1]!;
}

/** What a stub answers, for its log line and its return statement. */
function answer(fn: CFunction): { says: string; statement: string } {
  if (fn.returns === 'doca_error_t') return { says: 'returns DOCA_ERROR_NOT_SUPPORTED', statement: 'return DOCA_ERROR_NOT_SUPPORTED;' };
  if (fn.returns === 'void') return { says: 'does nothing', statement: '' };
  if (fn.returns.endsWith('*')) return { says: 'returns NULL', statement: `return (${fn.returns}){0};` };
  return { says: 'returns 0', statement: `return (${fn.returns}){0};` };
}

/** The C text of one stub: the declaration's signature, the one log line, DOCA's "not supported" answer. */
function stub(fn: CFunction): string {
  const { says, statement } = answer(fn);
  const params = [...fn.params, ...(fn.variadic ? ['...'] : [])];
  const source = fn.header.replace(/^doca_/, '').replace(/\.h$/, '');
  const lines = [
    `${fn.returns} ${fn.name}(${params.length ? params.join(', ') : 'void'})`,
    '{',
    '\tstatic atomic_flag once = ATOMIC_FLAG_INIT;',
    '',
    ...fn.params.map((p) => `\t(void)${paramName(p, fn)};`),
    `\tsdpu_unsupported(&once, "${source}", "${fn.name}", "${says}");`,
    ...(statement ? [`\t${statement}`] : []),
    '}',
  ];
  return lines.join('\n');
}

/** The generated stubs.c: one stub for every declared function no source defines. */
export function stubsSource(functions: readonly CFunction[], defined: ReadonlySet<string>): string {
  const headers = [...new Set(functions.map((f) => f.header))];
  return [
    '/* Generated by softdpu sdk (src/cli/sdk-headers.ts) from capi/include: not to be edited or committed. */',
    '#include <stdatomic.h>',
    '',
    ...headers.map((h) => `#include <${h}>`),
    '',
    '#include "core/internal.h"',
    '',
    functions
      .filter((f) => !defined.has(f.name))
      .map(stub)
      .join('\n\n'),
    '',
  ].join('\n');
}

/** A C header for the ABI test: `SDPU_ABI_FUNCTIONS(X)` applies X to every declared function. */
export function abiListSource(functions: readonly CFunction[]): string {
  const headers = [...new Set(functions.map((f) => f.header))];
  return [
    '/* Generated from capi/include by the ABI test (src/cli/sdk-headers.ts). */',
    ...headers.map((h) => `#include <${h}>`),
    `#define SDPU_ABI_COUNT ${functions.length}`,
    '#define SDPU_ABI_FUNCTIONS(X) \\',
    ...functions.map((f) => `\tX(${f.name}) \\`),
    '',
    '',
  ].join('\n');
}
