/**
 * The console's one script as the API (from source) and `npm run build` bundle it: the page's modules inside, and
 * left to the browser exactly the packages index.html's import map names, since nothing else can resolve there.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { bundleConsoleScript } from '../../../client/api/routes/console';

const CONSOLE = join(__dirname, '..', '..', '..', 'client', 'console');

describe('the console bundle', () => {
  it("holds the console's modules and imports only what index.html's import map names", async () => {
    const script = (await bundleConsoleScript(join(CONSOLE, 'app.ts'))).toString('utf8');
    const page = readFileSync(join(CONSOLE, 'index.html'), 'utf8');
    const importMap = JSON.parse(/<script type="importmap">([\s\S]*?)<\/script>/.exec(page)![1]!) as {
      imports: Record<string, string>;
    };
    const imported = new Set([...script.matchAll(/^import .* from "([^"]+)";$/gm)].map((m) => m[1]));
    expect([...imported].sort()).toEqual(Object.keys(importMap.imports).sort());
    expect(page).toContain('<script type="module" src="/console/app.js"></script>');
    // Every page is in it, and none of the TypeScript.
    for (const title of [
      'Review queue',
      'Transfers',
      'Address book',
      'Keys',
      'Audit log',
      'Sign in to the Travel Rule console',
    ])
      expect(script).toContain(title);
    expect(script).not.toMatch(/\binterface\s+\w+\s*\{|: Session\b/);
    expect(script).not.toContain('sourceMappingURL');
  });

  it("carries its source map only when asked (from source, for the browser's tools)", async () => {
    const script = (await bundleConsoleScript(join(CONSOLE, 'app.ts'), { sourcemap: true })).toString('utf8');
    expect(script).toMatch(/\/\/# sourceMappingURL=data:application\/json;base64,/);
  });
});
