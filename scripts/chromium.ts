/**
 * The browser the console's tests drive: Chromium from Debian's packages at /usr/bin/chromium (playwright-core's own
 * browser downloads cannot reach their CDN here). `npm test` runs this first: when the browser is missing and this
 * is root on a Debian-like system it is installed with apt-get, otherwise the message says how.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

export const CHROMIUM_PATH = '/usr/bin/chromium';

export function ensureChromium(log: (line: string) => void = (l) => process.stderr.write(`${l}\n`)): void {
  if (existsSync(CHROMIUM_PATH)) return;
  const root = typeof process.getuid === 'function' && process.getuid() === 0;
  if (!root || !existsSync('/usr/bin/apt-get')) {
    throw new Error(
      `${CHROMIUM_PATH} is missing: install Debian's Chromium (sudo apt-get update && sudo apt-get install -y chromium), then run npm test again`,
    );
  }
  log('npm test: installing Chromium for the console tests (apt-get install chromium, once per machine)…');
  for (const args of [['update'], ['install', '-y', '--no-install-recommends', 'chromium']]) {
    const r = spawnSync('apt-get', args, {
      stdio: ['ignore', 'ignore', 'inherit'],
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    });
    if (r.status !== 0)
      throw new Error(`apt-get ${args.join(' ')} failed (exit ${r.status}); install chromium by hand`);
  }
  if (!existsSync(CHROMIUM_PATH)) throw new Error(`apt-get installed chromium but ${CHROMIUM_PATH} is still missing`);
}

if (require.main === module) {
  try {
    ensureChromium();
  } catch (e) {
    process.stderr.write(`${(e as Error).message}\n`);
    process.exit(1);
  }
}
