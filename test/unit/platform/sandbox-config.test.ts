import { loadSandboxConfig } from '../../../sandbox/config';

describe('loadSandboxConfig', () => {
  it('reads the address-book upload settings from the environment', () => {
    const c = loadSandboxConfig({ SANDBOX_UPLOAD_MAX_BYTES: '1048576', SANDBOX_UPLOAD_URL_TTL_SECONDS: '60' });
    expect(c.addressBook).toMatchObject({ maxUploadBytes: 1048576, uploadUrlTtlSeconds: 60 });
    expect(loadSandboxConfig({}).addressBook).toEqual({});
  });
});
