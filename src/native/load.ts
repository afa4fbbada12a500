/**
 * The addon, loaded once per thread on first import: the prebuild for this platform, else a local
 * build (locate.ts says why in that order). Importing this module throws locate.ts's one-line
 * AddonLoadError when nothing loads.
 */
import { type LoadedAddon, loadAddon } from './locate.js';
import type { Native } from './native.js';

/** Which binary was loaded, from where, and what was passed over (`softdpu doctor` prints it). */
export const addon: LoadedAddon = loadAddon();

export const native: Native = addon.native;
