/**
 * A first-fit allocator of byte ranges, kept by the owner of a DPA: its heap (`doca_dpa_mem_alloc`)
 * and the arena of its control segment (completion rings, wait lists). Ranges are 64-byte aligned, so
 * no two allocations share a cache line, and freed neighbours merge.
 */
export class Arena {
  /** Free ranges, sorted by offset: [offset, length]. */
  private readonly holes: [number, number][];
  private readonly used = new Map<number, number>();

  constructor(
    readonly base: number,
    readonly size: number,
  ) {
    this.holes = size > 0 ? [[base, size]] : [];
  }

  /** The offset of `length` fresh bytes, or undefined when no hole is large enough. */
  alloc(length: number): number | undefined {
    const want = Math.max(64, Math.ceil(length / 64) * 64);
    const i = this.holes.findIndex(([, len]) => len >= want);
    if (i < 0) return undefined;
    const hole = this.holes[i]!;
    const offset = hole[0];
    if (hole[1] === want) this.holes.splice(i, 1);
    else this.holes[i] = [offset + want, hole[1] - want];
    this.used.set(offset, want);
    return offset;
  }

  /** Returns a range from `alloc`; false if `offset` is not the start of one. */
  free(offset: number): boolean {
    const length = this.used.get(offset);
    if (length === undefined) return false;
    this.used.delete(offset);
    let i = this.holes.findIndex(([o]) => o > offset);
    if (i < 0) i = this.holes.length;
    this.holes.splice(i, 0, [offset, length]);
    const next = this.holes[i + 1];
    if (next && offset + length === next[0]) {
      this.holes[i] = [offset, length + next[1]];
      this.holes.splice(i + 1, 1);
    }
    const prev = this.holes[i - 1];
    if (prev && prev[0] + prev[1] === offset) {
      prev[1] += this.holes[i]![1];
      this.holes.splice(i, 1);
    }
    return true;
  }
}
