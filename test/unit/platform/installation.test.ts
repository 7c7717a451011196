import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { installationNames } from '../../../scripts/installation';

describe('installationNames (npm start without DATABASE_URL)', () => {
  it('gives a new data directory databases of its own, and keeps them across starts', () => {
    const a = mkdtempSync(join(tmpdir(), 'tro-install-'));
    const b = mkdtempSync(join(tmpdir(), 'tro-install-'));
    const first = installationNames(a);
    expect(first.database).toMatch(/^travel_rule_[0-9a-f]{8}$/);
    expect(first.temporalDatabase).toBe(`${first.database}_temporal`);
    expect(installationNames(a)).toEqual(first);
    // A second clone on the same machine shares none of them.
    expect(installationNames(b).database).not.toBe(first.database);
  });

  it('keeps the names a data directory from before used', () => {
    const old = mkdtempSync(join(tmpdir(), 'tro-install-'));
    writeFileSync(join(old, 'demo.json'), '{}');
    expect(installationNames(old)).toEqual({ database: 'travel_rule', temporalDatabase: 'travel_rule_temporal' });
  });
});
