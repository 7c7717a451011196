import { loadSandboxConfig } from '../../../sandbox/config';

describe('loadSandboxConfig', () => {
  it('reads the address-book upload settings from the environment', () => {
    const c = loadSandboxConfig({ SANDBOX_UPLOAD_MAX_BYTES: '1048576', SANDBOX_UPLOAD_URL_TTL_SECONDS: '60' });
    expect(c.addressBook).toMatchObject({ maxUploadBytes: 1048576, uploadUrlTtlSeconds: 60 });
    // The spool: a private directory under the data dir, not a temporary directory shared with the machine's users.
    expect(loadSandboxConfig({}).addressBook).toEqual({ spoolDir: '.data/sandbox/address-uploads' });
    expect(loadSandboxConfig({ DATA_DIR: '/srv/tro' }).addressBook).toEqual({
      spoolDir: '/srv/tro/sandbox/address-uploads',
    });
    expect(loadSandboxConfig({ SANDBOX_UPLOAD_DIR: '/var/spool/tro' }).addressBook).toEqual({
      spoolDir: '/var/spool/tro',
    });
  });
});
