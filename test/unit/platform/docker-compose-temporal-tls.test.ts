import { execFileSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { connect, createServer, type TLSSocket } from 'node:tls';
import type { AddressInfo } from 'node:net';
import { parse } from 'yaml';
import { loadTemporalConnectionConfig, temporalConnectOptions } from '../../../lib/temporal/connection-config';

const root = resolve(__dirname, '../../..');
const CLIENT_AUTH = '1.3.6.1.5.5.7.3.2';
const SERVER_AUTH = '1.3.6.1.5.5.7.3.1';

interface Service {
  environment?: Record<string, string>;
  volumes?: string[];
  healthcheck?: { test: string[] };
  command?: string[];
}
const compose = parse(readFileSync(join(root, 'docker-compose.yml'), 'utf8'), { merge: true }) as {
  services: Record<string, Service>;
};

/** A service's bind mounts: container path → host path. */
const mounts = (service: Service) =>
  new Map((service.volumes ?? []).map((v) => v.split(':')).map(([host, container]) => [container!, host!]));

describe('docker-compose: Temporal with mutual TLS, and the processes configured for it (issue 25, item 7h)', () => {
  // The certificates as scripts/temporal-tls-certs.sh makes them for the compose deployment.
  const dir = mkdtempSync(join(tmpdir(), 'temporal-tls-'));
  execFileSync('sh', [join(root, 'scripts/temporal-tls-certs.sh'), dir], { stdio: 'ignore' });
  /** Where a container path of `service` is on this machine: its mount's host file, in the generated directory. */
  const onHost = (service: Service, containerPath: string) => {
    const host = mounts(service).get(containerPath);
    expect(host).toMatch(/^\.\/\.data\/temporal-tls\/[a-z]+\.(pem|key)$/);
    return join(dir, host!.replace('./.data/temporal-tls/', ''));
  };

  it("the frontend requires a client certificate of the deployment's CA, and mounts its own certificate, not the CA key", () => {
    const temporal = compose.services.temporal!;
    const env = temporal.environment!;
    expect(env.TEMPORAL_TLS_REQUIRE_CLIENT_AUTH).toBe('true');
    for (const name of [
      'TEMPORAL_TLS_FRONTEND_CERT',
      'TEMPORAL_TLS_FRONTEND_KEY',
      'TEMPORAL_TLS_CLIENT1_CA_CERT',
      'TEMPORAL_TLS_SERVER_CERT',
      'TEMPORAL_TLS_SERVER_KEY',
      'TEMPORAL_TLS_SERVER_CA_CERT',
    ]) {
      expect(onHost(temporal, env[name]!)).toBeTruthy();
    }
    expect(temporal.healthcheck!.test).toEqual(
      expect.arrayContaining(['--tls-cert-path', '--tls-ca-path', '--tls-server-name']),
    );
    for (const service of Object.values(compose.services))
      expect([...mounts(service).values()].some((h) => h.endsWith('ca.key'))).toBe(false);
  });

  it('the API, the worker, the UI and the setup job present the client certificate', () => {
    for (const name of ['api', 'worker']) {
      const service = compose.services[name]!;
      const env = service.environment!;
      const config = loadTemporalConnectionConfig(env, env.TEMPORAL_ADDRESS!);
      expect(config.tls).toEqual({
        clientCertFile: '/temporal-tls/client.pem',
        clientKeyFile: '/temporal-tls/client.key',
        caFile: '/temporal-tls/ca.pem',
        serverName: 'temporal',
      });
      for (const path of [config.tls!.clientCertFile!, config.tls!.clientKeyFile!, config.tls!.caFile!])
        onHost(service, path);
    }
    const ui = compose.services['temporal-ui']!;
    for (const name of ['TEMPORAL_TLS_CA', 'TEMPORAL_TLS_CERT', 'TEMPORAL_TLS_KEY']) onHost(ui, ui.environment![name]!);
    const setup = compose.services['temporal-setup']!;
    expect(setup.command!.join('\n')).toMatch(
      /--tls-cert-path \/temporal-tls\/client\.pem --tls-key-path \/temporal-tls\/client\.key/,
    );
    onHost(setup, '/temporal-tls/client.pem');
  });

  it("the generated certificates, read through the processes' configuration, complete a mutual TLS handshake; no certificate, no connection", async () => {
    const temporal = compose.services.temporal!;
    const server = createServer(
      {
        cert: readFileSync(onHost(temporal, temporal.environment!.TEMPORAL_TLS_FRONTEND_CERT!)),
        key: readFileSync(onHost(temporal, temporal.environment!.TEMPORAL_TLS_FRONTEND_KEY!)),
        ca: readFileSync(onHost(temporal, temporal.environment!.TEMPORAL_TLS_CLIENT1_CA_CERT!)),
        requestCert: true,
        rejectUnauthorized: true,
      },
      (socket) => socket.end('ok'),
    );
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as AddressInfo).port;
    try {
      const api = compose.services.api!;
      const c = loadTemporalConnectionConfig(api.environment!, api.environment!.TEMPORAL_ADDRESS!).tls!;
      const options = temporalConnectOptions({
        tls: {
          ...c,
          clientCertFile: onHost(api, c.clientCertFile!),
          clientKeyFile: onHost(api, c.clientKeyFile!),
          caFile: onHost(api, c.caFile!),
        },
      }).tls!;
      const ca = new X509Certificate(Buffer.from(options.serverRootCACertificate!));
      const client = new X509Certificate(Buffer.from(options.clientCertPair!.crt));
      expect(client.verify(ca.publicKey)).toBe(true);
      expect(client.keyUsage).toContain(CLIENT_AUTH);
      const serverCert = new X509Certificate(
        readFileSync(onHost(temporal, temporal.environment!.TEMPORAL_TLS_FRONTEND_CERT!)),
      );
      expect(serverCert.subjectAltName).toContain('DNS:temporal');
      // The server's certificate is its client certificate between its own services too.
      expect(serverCert.keyUsage).toEqual(expect.arrayContaining([SERVER_AUTH, CLIENT_AUTH]));

      const handshake = (withClientCert: boolean) =>
        new Promise<string>((done, fail) => {
          const socket: TLSSocket = connect({
            host: '127.0.0.1',
            port,
            servername: options.serverNameOverride,
            ca: Buffer.from(options.serverRootCACertificate!),
            ...(withClientCert
              ? { cert: Buffer.from(options.clientCertPair!.crt), key: Buffer.from(options.clientCertPair!.key) }
              : {}),
          });
          let data = '';
          socket.on('data', (d: Buffer) => (data += d.toString()));
          socket.on('end', () => done(data));
          socket.on('error', fail);
        });
      expect(await handshake(true)).toBe('ok');
      await expect(handshake(false)).rejects.toThrow(/certificate required|alert|socket hang up|ECONNRESET/i);
    } finally {
      await new Promise((r) => server.close(r));
    }
  });
});
