/** Every test gets its own fabric directory, removed (with whatever is left in it) afterwards. */
import { mkdtempSync, rmSync } from 'node:fs';
import type { TestContext } from 'node:test';

/** A fresh private fabric directory under /tmp (short, so socket paths fit in sun_path). */
export function tempFabricDir(t: TestContext): string {
  const dir = mkdtempSync('/tmp/sdpu-t-');
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}
