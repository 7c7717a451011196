import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { registerKeyCommands } from '../../client/cli/keys';
import { runCli } from '../harness/cli';
import {
  groupSeed,
  startOrchestrator,
  startSandbox,
  type RunningOrchestrator,
  type RunningSandbox,
} from '../harness/platform';

/** An address of this machine that is not loopback: what a host on the network looks like to the CLI. */
const networkAddress =
  Object.values(networkInterfaces())
    .flat()
    .find((i) => i && i.family === 'IPv4' && !i.internal)?.address ?? 'tro-api.invalid';

describe('the CLI reads its credential from the environment or a file, and never sends it over plain HTTP off loopback (issue 25, item 7g)', () => {
  const g = groupSeed();
  const dir = mkdtempSync(join(tmpdir(), 'tro-cli-'));
  let sb: RunningSandbox;
  let orch: RunningOrchestrator;
  let tokenFile: string;
  // A plain-HTTP listener on every address, standing for an API reached across a network: it records what arrives.
  let elsewhere: Server;
  const received: IncomingHttpHeaders[] = [];
  let elsewhereUrl: string;

  beforeAll(async () => {
    sb = await startSandbox(g.seed);
    orch = await startOrchestrator(sb.networkConfig(g.gatewayUser), {
      group: { gatewayDid: g.gateway, subsidiaryDids: [g.subA] },
    });
    tokenFile = join(dir, 'token');
    writeFileSync(tokenFile, `${orch.apiKeys.viewer}\n`, { mode: 0o600 });
    elsewhere = createServer((req, res) => {
      received.push(req.headers);
      res.setHeader('content-type', 'application/json');
      res.end('{"keys":[]}');
    });
    await new Promise<void>((r) => elsewhere.listen(0, '0.0.0.0', r));
    elsewhereUrl = `http://${networkAddress}:${(elsewhere.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((r) => elsewhere?.close(r));
    await orch?.close();
    await sb?.close();
  });

  const keysList = (...args: string[]) => runCli(registerKeyCommands, ['keys', 'list', g.subA, '--json', ...args]);

  it('takes the credential from --token-file, or the file API_TOKEN_FILE names', async () => {
    expect(JSON.parse(await keysList('--api', orch.apiUrl, '--token-file', tokenFile))).toMatchObject({
      vaspDID: g.subA,
      keys: expect.any(Array),
    });
    const saved = {
      API_TOKEN_FILE: process.env.API_TOKEN_FILE,
      API_TOKEN: process.env.API_TOKEN,
      PUBLIC_API_URL: process.env.PUBLIC_API_URL,
    };
    Object.assign(process.env, { API_TOKEN_FILE: tokenFile, PUBLIC_API_URL: orch.apiUrl });
    delete process.env.API_TOKEN;
    try {
      expect(JSON.parse(await keysList())).toMatchObject({ vaspDID: g.subA });
    } finally {
      for (const [k, v] of Object.entries(saved)) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
    }
    await expect(keysList('--api', orch.apiUrl, '--token-file', join(dir, 'missing'))).rejects.toThrow(
      /^--token-file: cannot read .*missing \(ENOENT\)/,
    );
  });

  it('keeps --token for old scripts, with a warning on stderr', async () => {
    const warnings: string[] = [];
    const spy = jest.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
      warnings.push(String(chunk));
      return true;
    });
    try {
      expect(JSON.parse(await keysList('--api', orch.apiUrl, '--token', orch.apiKeys.viewer))).toMatchObject({
        vaspDID: g.subA,
      });
    } finally {
      spy.mockRestore();
    }
    expect(warnings.join('')).toMatch(
      /^warning: --token shows the credential in the process list and the shell history/,
    );
  });

  it('refuses to send a credential over plain HTTP to a host not on loopback: nothing reaches it', async () => {
    await expect(keysList('--api', elsewhereUrl, '--token-file', tokenFile)).rejects.toThrow(
      new RegExp(
        `^--api: is plain http to ${networkAddress.replace(/\./g, '\\.')}:\\d+, which is not on loopback: the credential would cross the network in clear`,
      ),
    );
    const spy = jest.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      await expect(keysList('--api', elsewhereUrl, '--token', orch.apiKeys.viewer)).rejects.toThrow(
        /is plain http to .* not on loopback/,
      );
    } finally {
      spy.mockRestore();
    }
    expect(received).toEqual([]);
  });
});
