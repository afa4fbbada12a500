/** Matchers for `assert.throws` / `assert.rejects` on DOCA errors. */
import { DocaError, type DocaErrorName, type DocaErrorShortName } from '../../src/core/error.js';

/** Matches a DocaError with the code `name` (e.g. 'DOCA_ERROR_BAD_STATE') whose message matches `pattern`, if given. */
export const code =
  (name: DocaErrorName | DocaErrorShortName, pattern?: RegExp) =>
  (err: unknown): boolean =>
    DocaError.is(err, name) && (!pattern || pattern.test(err.message));
