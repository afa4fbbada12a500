/** PCI addresses as DOCA writes them: `DDDD:BB:DD.F`, or `BB:DD.F` with domain 0000. */

const FULL = /^([0-9a-f]{4}):([0-9a-f]{2}):([0-9a-f]{2})\.([0-7])$/i;
const SHORT = /^([0-9a-f]{2}):([0-9a-f]{2})\.([0-7])$/i;

/**
 * A parsed PCI address; `toString()` gives DOCA's 12-character form (`doca_devinfo_get_pci_addr_str`),
 * `equals()` compares as `doca_devinfo_is_equal_pci_addr` does.
 *
 * @example
 * ```ts
 * const addr = PciAddress.tryParse('B1:00.0');
 * console.log(String(addr), addr?.bdf, addr?.equals('0000:b1:00.0')); // '0000:b1:00.0' 'b1:00.0' true
 * ```
 */
export class PciAddress {
  private constructor(
    readonly domain: number,
    readonly bus: number,
    readonly device: number,
    readonly func: number,
  ) {}

  /** Parses `DDDD:BB:DD.F` or `BB:DD.F` (hex, any case); returns undefined when the text is not one. */
  static tryParse(text: string): PciAddress | undefined {
    const m = FULL.exec(text) ?? SHORT.exec(text);
    if (!m) return undefined;
    const parts = m.slice(1).map((p) => parseInt(p, 16));
    const [domain, bus, device, func] = parts.length === 4 ? parts : [0, ...parts];
    if (device! > 0x1f) return undefined;
    return new PciAddress(domain!, bus!, device!, func!);
  }

  /** The BDF form `BB:DD.F` (`DOCA_DEVINFO_PCI_BDF_SIZE`). */
  get bdf(): string {
    const h = (n: number, w: number) => n.toString(16).padStart(w, '0');
    return `${h(this.bus, 2)}:${h(this.device, 2)}.${this.func}`;
  }

  /** DOCA's full form `DDDD:BB:DD.F`, lower-case hex (what `doca_devinfo_get_pci_addr_str` gives). */
  toString(): string {
    return `${this.domain.toString(16).padStart(4, '0')}:${this.bdf}`;
  }

  /** `doca_devinfo_is_equal_pci_addr`: same function, whichever form `other` was written in. */
  equals(other: PciAddress | string): boolean {
    const o = typeof other === 'string' ? PciAddress.tryParse(other) : other;
    return o !== undefined && o.toString() === this.toString();
  }
}
