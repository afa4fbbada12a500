/**
 * A real browser for tests of `softdpu view`: Debian's Chromium (`apt-get install chromium`; .ci/run
 * installs it when it can), driven by playwright-core, headless, with a fresh profile and none of its
 * background traffic (this machine has no network). Missing Chromium fails the test, naming the fix:
 * a browser test that skips silently would prove nothing.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';

export const CHROMIUM = process.env.SOFTDPU_CHROMIUM ?? '/usr/bin/chromium';
/** Screenshots and other things a test leaves to look at: test-artifacts/ at the repository's root. */
export const ARTIFACTS = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'test-artifacts');

const FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

/** A page in a new headless Chromium, closed (with its profile removed) when the test ends. */
export async function openPage(t: TestContext, viewport = { width: 1400, height: 1000 }): Promise<Page> {
  assert.ok(
    existsSync(CHROMIUM),
    `Chromium is not installed at ${CHROMIUM}: this test drives a real browser. Install Debian's package ` +
      `(apt-get install -y chromium; .ci/run does it when apt-get is there) or set SOFTDPU_CHROMIUM to a Chromium binary.`,
  );
  const { chromium } = await import('playwright-core');
  const profile = mkdtempSync('/tmp/sdpu-chromium-');
  const context = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, args: FLAGS, viewport, timeout: 20_000 }).catch((err: unknown) => {
    rmSync(profile, { recursive: true, force: true });
    throw err;
  });
  // The browser first: it writes to its profile until it has exited.
  t.after(async () => {
    await context.close().catch(() => {});
    rmSync(profile, { recursive: true, force: true });
  });
  const page = context.pages()[0] ?? (await context.newPage());
  const problems: string[] = [];
  page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(`console error: ${m.text()}`);
  });
  (page as Page & { problems: string[] }).problems = problems;
  return page;
}

/** What went wrong in the page (uncaught errors, console errors) so far. */
export function pageProblems(page: Page): string[] {
  return (page as Page & { problems?: string[] }).problems ?? [];
}

/** Saves a full-page screenshot under test-artifacts/ and returns its path. */
export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(ARTIFACTS, { recursive: true });
  const path = join(ARTIFACTS, name);
  await page.screenshot({ path, fullPage: true });
  return path;
}
