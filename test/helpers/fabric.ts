/** Every test gets its own fabric directory, removed (with whatever is left in it) afterwards. */
import { mkdtempSync, rmSync } from 'node:fs';
import type { TestContext } from 'node:test';

/**
 * A fresh private directory under /tmp (short, so socket paths fit in sun_path), removed when the test
 * ends: a fabric directory, or (`prefix`) any scratch space a test needs.
 */
export function tempFabricDir(t: TestContext, prefix = 'sdpu-t-'): string {
  const dir = mkdtempSync(`/tmp/${prefix}`);
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}
