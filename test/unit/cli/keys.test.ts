import { runCli } from '../../harness/cli';
import { registerKeyCommands } from '../../../client/cli/keys';
import { parseDidKeyRecord } from '../../../lib/crypto';

describe('tro keys create', () => {
  it('prints a new JsonDIDKey record, as the network CLI keys:create does', async () => {
    const out = [
      await runCli(registerKeyCommands, ['keys', 'create']),
      await runCli(registerKeyCommands, ['keys', 'create']),
    ];
    const [a, b] = out.map((s) => JSON.parse(s) as unknown);
    const record = parseDidKeyRecord(a);
    expect(record).toEqual(a);
    expect(Object.keys(record)).toEqual(['did', 'controllerKeyId', 'keys', 'services', 'provider']);
    expect(record.keys[0]).toMatchObject({ type: 'Ed25519', kms: 'local', meta: { algorithms: ['Ed25519', 'EdDSA'] } });
    expect(record.keys[0].privateKeyHex).toMatch(/^[0-9a-f]{128}$/);
    expect(parseDidKeyRecord(b).did).not.toBe(record.did);
  });
});
