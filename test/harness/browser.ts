/**
 * Chromium for the console's browser tests: Debian's /usr/bin/chromium driven by playwright-core, headless, in a fresh
 * profile per suite (playwright passes it as --user-data-dir), with the background traffic a test does not want off.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';
import { CHROMIUM_PATH } from '../../scripts/chromium';

export interface TestBrowser {
  context: BrowserContext;
  /** Closes the browser and removes its profile. */
  close(): Promise<void>;
}

export async function launchBrowser(viewport: { width: number; height: number }): Promise<TestBrowser> {
  const profile = mkdtempSync(join(tmpdir(), 'tro-chromium-'));
  try {
    const context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM_PATH,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
      viewport,
    });
    return {
      context,
      close: async () => {
        await context.close();
        rmSync(profile, { recursive: true, force: true });
      },
    };
  } catch (e) {
    rmSync(profile, { recursive: true, force: true });
    throw e;
  }
}
