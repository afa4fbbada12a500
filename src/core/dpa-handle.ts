/**
 * The u64 handles DPA code works with (`doca_dpa_dev_*_t`): bits 63..48 the tag of the table that
 * issued the handle (a DPA's object table, or the process's table of maps usable from the DPA), 47..40
 * the object kind, 39..24 the index in that table, 23..0 the entry's generation. A handle is resolved
 * only if all four match the entry it names, so a handle from another table or of a destroyed object is
 * refused, never followed. The kinds are in dpa/layout.ts; maps (core/dpa-maps.ts) are kind 13.
 */

/** A handle for entry `index` of `kind` at `generation`, issued by the table tagged `tag`. */
export function makeHandle(tag: number, kind: number, index: number, generation: number): bigint {
  return (BigInt(tag & 0xffff) << 48n) | (BigInt(kind & 0xff) << 40n) | (BigInt(index & 0xffff) << 24n) | BigInt(generation & 0xffffff);
}

export interface HandleParts {
  tag: number;
  kind: number;
  index: number;
  generation: number;
}

/** The fields of a handle, or undefined for anything that is not a non-zero u64. */
export function splitHandle(handle: unknown): HandleParts | undefined {
  if (typeof handle !== 'bigint' || handle <= 0n || handle >= 1n << 64n) return undefined;
  const hi = Number(handle >> 24n);
  return { tag: Math.floor(hi / 2 ** 24) & 0xffff, kind: Math.floor(hi / 2 ** 16) & 0xff, index: hi & 0xffff, generation: Number(handle & 0xffffffn) };
}

const used = new Set<number>();

/** A tag no other table of this process uses (random, so another process's handles rarely match). */
export function newHandleTag(): number {
  for (;;) {
    const tag = 1 + Math.floor(Math.random() * 0xffff);
    if (!used.has(tag)) {
      used.add(tag);
      return tag;
    }
  }
}

/** Gives a tag back (its table is gone). */
export function releaseHandleTag(tag: number): void {
  used.delete(tag);
}

/** `0x...` for messages. */
export const handleHex = (h: unknown): string => (typeof h === 'bigint' ? `0x${h.toString(16)}` : String(h));
