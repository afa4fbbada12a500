/** Every test gets its own fabric directory, removed (with whatever is left in it) afterwards. */
import { mkdtempSync, rmSync } from 'node:fs';
import type { TestContext } from 'node:test';

/**
 * A fresh private directory under /tmp (short, so socket paths fit in sun_path), removed when the test
 * ends: a fabric directory, or (`prefix`) any scratch space a test needs.
 */
export function tempFabricDir(t: TestContext, prefix = 'sdpu-t-'): string {
  const dir = mkdtempSync(`/tmp/${prefix}`);
  t.after(() => {
    // The test's processes may still be ending (this runs before their own hooks kill them): one that
    // exits meanwhile writes its epitaph into the directory (docs/observe.md), so that the last rmdir
    // finds it not empty. Then remove what is there again.
    for (let attempt = 1; ; attempt++) {
      try {
        return rmSync(dir, { recursive: true, force: true });
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOTEMPTY' || attempt === 10) throw err;
      }
    }
  });
  return dir;
}
