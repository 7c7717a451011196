import { readFileSync } from 'node:fs';
import type { TLSConfig } from '@temporalio/client';
import { ConfigError } from '../errors';
import { isLoopbackHost } from '../loopback';

/**
 * How the processes reach the Temporal frontend beyond its address: TLS (server verification with a private CA, a
 * client certificate for mTLS, the name to check) and an API key (Temporal Cloud's). File paths are kept here and
 * read when connecting, so a rotated certificate is picked up at the next start.
 */
export interface TemporalConnectionConfig {
  /** Absent: plaintext gRPC, as the development server speaks it. */
  tls?: TemporalTlsConfig;
  /** TEMPORAL_API_KEY: sent as `Authorization: Bearer <key>` on every call. */
  apiKey?: string;
}

export interface TemporalTlsConfig {
  /** TEMPORAL_TLS_CERT_FILE and TEMPORAL_TLS_KEY_FILE: the client certificate and its key (PEM) for mTLS. */
  clientCertFile?: string;
  clientKeyFile?: string;
  /** TEMPORAL_TLS_CA_FILE: the CA (PEM) that signed the server's certificate; unset: the system's trusted CAs. */
  caFile?: string;
  /** TEMPORAL_TLS_SERVER_NAME: the name checked against the server's certificate, when it differs from the address's host. */
  serverName?: string;
}

type Env = Record<string, string | undefined>;

const flag = (raw: string | undefined): boolean | undefined => {
  const v = raw?.trim().toLowerCase();
  if (v === undefined || v === '') return undefined;
  if (['1', 'true', 'on', 'yes'].includes(v)) return true;
  if (['0', 'false', 'off', 'no'].includes(v)) return false;
  throw new ConfigError(
    'TEMPORAL_TLS',
    `"${raw}" is not on or off`,
    'Set TEMPORAL_TLS=1 for TLS (implied by any TEMPORAL_TLS_* file or TEMPORAL_API_KEY), or 0 for plaintext on loopback',
  );
};

/**
 * TEMPORAL_TLS, TEMPORAL_TLS_CERT_FILE, TEMPORAL_TLS_KEY_FILE, TEMPORAL_TLS_CA_FILE, TEMPORAL_TLS_SERVER_NAME and
 * TEMPORAL_API_KEY. Any TLS file, a server name or an API key turns TLS on (a key must not cross the network in
 * clear); TEMPORAL_TLS=1 turns it on with the system's CAs alone.
 */
export function loadTemporalConnectionConfig(env: Env, address: string): TemporalConnectionConfig {
  const value = (name: string) => env[name]?.trim() || undefined;
  const clientCertFile = value('TEMPORAL_TLS_CERT_FILE');
  const clientKeyFile = value('TEMPORAL_TLS_KEY_FILE');
  const caFile = value('TEMPORAL_TLS_CA_FILE');
  const serverName = value('TEMPORAL_TLS_SERVER_NAME');
  const apiKey = value('TEMPORAL_API_KEY');
  const explicit = flag(env.TEMPORAL_TLS);

  if (clientCertFile && !clientKeyFile)
    throw new ConfigError(
      'TEMPORAL_TLS_KEY_FILE',
      'is unset while TEMPORAL_TLS_CERT_FILE is set',
      'Set both (the client certificate and its private key, PEM) for mTLS, or neither',
    );
  if (clientKeyFile && !clientCertFile)
    throw new ConfigError(
      'TEMPORAL_TLS_CERT_FILE',
      'is unset while TEMPORAL_TLS_KEY_FILE is set',
      'Set both (the client certificate and its private key, PEM) for mTLS, or neither',
    );
  const tlsSettings = [
    clientCertFile && 'TEMPORAL_TLS_CERT_FILE',
    caFile && 'TEMPORAL_TLS_CA_FILE',
    serverName && 'TEMPORAL_TLS_SERVER_NAME',
  ].filter(Boolean);
  if (explicit === false && tlsSettings.length > 0) {
    throw new ConfigError(
      'TEMPORAL_TLS',
      `is off while ${tlsSettings.join(', ')} ${tlsSettings.length > 1 ? 'are' : 'is'} set`,
      'Unset TEMPORAL_TLS (the files turn TLS on) or the TLS settings',
    );
  }
  const host = address.replace(/:\d+$/, '');
  if (explicit === false && apiKey && !isLoopbackHost(host)) {
    throw new ConfigError(
      'TEMPORAL_TLS',
      `is off while TEMPORAL_API_KEY is set and ${address} is not on loopback`,
      'An API key must not travel in clear: unset TEMPORAL_TLS (the key turns TLS on)',
    );
  }
  const on = explicit ?? (tlsSettings.length > 0 || apiKey !== undefined);
  return {
    ...(on ? { tls: { clientCertFile, clientKeyFile, caFile, serverName } } : {}),
    ...(apiKey ? { apiKey } : {}),
  };
}

function readPem(name: string, path: string): Buffer {
  try {
    return readFileSync(path);
  } catch (e) {
    throw new ConfigError(
      name,
      `cannot read ${path} (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`,
      `Point ${name} at a readable PEM file`,
    );
  }
}

/** The options of `Connection.connect` / `NativeConnection.connect` for these settings, with the files read. */
export function temporalConnectOptions(config: TemporalConnectionConfig): { tls?: TLSConfig; apiKey?: string } {
  const out: { tls?: TLSConfig; apiKey?: string } = {};
  if (config.tls) {
    const t = config.tls;
    out.tls = {
      ...(t.serverName ? { serverNameOverride: t.serverName } : {}),
      ...(t.caFile ? { serverRootCACertificate: readPem('TEMPORAL_TLS_CA_FILE', t.caFile) } : {}),
      ...(t.clientCertFile && t.clientKeyFile
        ? {
            clientCertPair: {
              crt: readPem('TEMPORAL_TLS_CERT_FILE', t.clientCertFile),
              key: readPem('TEMPORAL_TLS_KEY_FILE', t.clientKeyFile),
            },
          }
        : {}),
    };
  }
  if (config.apiKey) out.apiKey = config.apiKey;
  return out;
}
