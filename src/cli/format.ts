/**
 * How `softdpu top` and `softdpu view` write numbers, in one place: the terminal imports it, and the
 * view's page loads the same compiled module (dist/src/cli/format.js, served as /format.js), so the two
 * cannot drift. It imports nothing, so that a browser can load it as it is.
 */

/** 1234567 -> '1.23M'; small numbers as they are (fractions with one decimal below 10). */
export function si(n: number): string {
  const abs = Math.abs(n);
  if (abs < 1000) return Number.isInteger(n) ? String(n) : n.toFixed(abs < 10 ? 1 : 0);
  const units = ['k', 'M', 'G', 'T'];
  let v = n;
  let u = -1;
  while (Math.abs(v) >= 1000 && u < units.length - 1) {
    v /= 1000;
    u++;
  }
  return `${v.toFixed(Math.abs(v) < 10 ? 2 : Math.abs(v) < 100 ? 1 : 0)}${units[u]}`;
}

/** 1536 -> '1.5 KiB'; a rate below 10 B keeps one decimal ('2.5 B'). */
export function bytes(n: number): string {
  if (n < 1024) return `${Number.isInteger(n) || n >= 10 ? Math.round(n) : n.toFixed(1)} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let v = n / 1024;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return `${v.toFixed(v < 10 ? 1 : 0)} ${units[u]}`;
}

/** A counter's value as a person reads it: bytes as bytes, a sync event's value exactly (a number the program set, not an amount), the rest in SI. */
export function counterText(name: string, value: number, kind?: string): string {
  if (kind === 'sync_event' && name === 'value') return String(value);
  return name.endsWith('bytes') ? bytes(value) : si(value);
}
