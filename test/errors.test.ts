/** DocaError: DOCA's 31 codes, names, descriptions, and instanceof across copies of the package. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DOCA_ERRORS, DocaError, DocaErrorCode, docaErrorGetDescr, docaErrorGetName } from '../src/core/error.js';

test('all 31 codes from DOCA_SUCCESS (0) to DOCA_ERROR_SKIPPED (30) with DOCA descriptions', () => {
  assert.equal(DOCA_ERRORS.length, 31);
  assert.equal(DocaErrorCode.DOCA_SUCCESS, 0);
  assert.equal(DocaErrorCode.DOCA_ERROR_AGAIN, 5);
  assert.equal(DocaErrorCode.DOCA_ERROR_BAD_STATE, 18);
  assert.equal(DocaErrorCode.DOCA_ERROR_IN_PROGRESS, 26);
  assert.equal(DocaErrorCode.DOCA_ERROR_SKIPPED, 30);
  assert.equal(docaErrorGetName(7), 'DOCA_ERROR_NO_MEMORY');
  assert.equal(docaErrorGetDescr(5), 'Resource temporarily unavailable, try again');
  assert.equal(docaErrorGetName(31), 'unrecognized error code');
  assert.equal(docaErrorGetDescr(-1), 'unrecognized error code');
});

test('a DocaError carries the code name, value, description, call and the wrong value in its message', () => {
  const err = new DocaError('INVALID_VALUE', 'doca_comch_server_create', 'name of 129 bytes exceeds max_name_len 128');
  assert.equal(err.code, 'DOCA_ERROR_INVALID_VALUE');
  assert.equal(err.value, 6);
  assert.equal(err.description, 'Invalid input');
  assert.equal(err.call, 'doca_comch_server_create');
  assert.equal(err.name, 'DocaError');
  assert.equal(err.message, 'doca_comch_server_create: name of 129 bytes exceeds max_name_len 128 (DOCA_ERROR_INVALID_VALUE: Invalid input)');
  assert.ok(err instanceof Error);
  assert.ok(DocaError.is(err, 'INVALID_VALUE') && DocaError.is(err, 'DOCA_ERROR_INVALID_VALUE') && !DocaError.is(err, 'AGAIN'));
  assert.throws(() => new DocaError('NOPE' as never, 'x', 'y'), TypeError);
});

test('instanceof DocaError holds for an error made by a second copy of the module', async () => {
  const copy = (await import(`../src/core/error.js?copy=${Date.now()}`)) as typeof import('../src/core/error.js');
  assert.notEqual(copy.DocaError, DocaError);
  const foreign = new copy.DocaError('AGAIN', 'doca_task_submit', 'no posted buffer');
  assert.ok(foreign instanceof DocaError);
  assert.ok(new DocaError('AGAIN', 'x', 'y') instanceof copy.DocaError);
  assert.ok(!(new Error('plain') instanceof DocaError));
});
