/**
 * `npm run bench:crypto`: encrypts and decrypts one 40-field IVMS101 record with our code and with the network's SDK
 * (`@notabene/pii-sdk` 1.17.2) in the same process, end-to-end (2 recipients) and hybrid (3), and prints records/s and
 * the ratio ours/SDK. The SDK runs as its `generatePIIField`/`getPIIObject` do, minus their HTTP calls: flattenPII,
 * then encryptPII (or decryptPII) field by field, then unflattenPII. Decryption is timed as the beneficiary, the
 * common case (the SDK tries entries in order, so the last recipient is its slowest reader).
 *
 * "warm" figures reuse the same counterparties, as a VASP does in steady state (our caches of prepared keys and static
 * secrets are hot); "first contact" figures use a counterparty never seen before on every record. The three are
 * measured in interleaved slices so that a busy machine slows them alike; run time is bounded (about 45 s).
 */
import { cpus, totalmem } from 'node:os';
import PIIsdk from '@notabene/pii-sdk';
import { createDidKeyRecord, Keyring, type DidKeyRecord } from '../lib/crypto';
import { decryptIvms101, encryptIvms101, type FlatEntry } from '../lib/ivms101';
import record from '../test/fixtures/pii-sdk/ivms101-40-fields.json';

/** Rounds of interleaved slices per operation: under a fluctuating machine load, SDK and ours see the same load. */
const ROUNDS = 8;
const SLICE_MS = { sdk: 600, ours: 250, firstContact: 150 };
/** Enough never-seen counterparties for every first-contact slice. */
const FIRST_CONTACT_POOL = 160;

const sdk = new PIIsdk({});

interface Row {
  operation: string;
  sdk: number;
  ours: number;
  oursFirstContact: number;
}

class Meter {
  calls = 0;
  ms = 0;

  /** Runs `run` for about `sliceMs` (at least once, unless `available` says no), adding to the totals. */
  async slice(sliceMs: number, run: () => unknown, available: () => boolean = () => true): Promise<void> {
    const start = performance.now();
    for (let n = 0; available() && (n === 0 || performance.now() - start < sliceMs); n++) {
      await run();
      this.calls++;
    }
    this.ms += performance.now() - start;
  }

  get perSecond(): number {
    return (this.calls * 1000) / this.ms;
  }
}

/** Interleaves SDK, ours (warm) and ours (first contact) slice by slice, after one warm-up call of each. */
async function compare(
  operation: string,
  sdkRun: () => unknown,
  oursRun: () => unknown,
  firstContactRuns: Array<() => unknown>,
): Promise<Row> {
  process.stderr.write('.');
  await sdkRun();
  await oursRun();
  const meters = { sdk: new Meter(), ours: new Meter(), firstContact: new Meter() };
  let next = 0;
  for (let round = 0; round < ROUNDS; round++) {
    await meters.sdk.slice(SLICE_MS.sdk, sdkRun);
    await meters.ours.slice(SLICE_MS.ours, oursRun);
    await meters.firstContact.slice(
      SLICE_MS.firstContact,
      () => firstContactRuns[next++]!(),
      () => next < firstContactRuns.length,
    );
  }
  return {
    operation,
    sdk: meters.sdk.perSecond,
    ours: meters.ours.perSecond,
    oursFirstContact: meters.firstContact.perSecond,
  };
}

async function sdkEncrypt(sender: DidKeyRecord, recipientDIDkeys: string[]): Promise<FlatEntry[]> {
  const entries: FlatEntry[] = sdk.flattenPII(record);
  for (const entry of entries) {
    entry.value = await sdk.encryptPII({
      senderDIDKey: sender.did,
      recipientDIDkeys,
      body: entry.value,
      keypair: sender,
    });
  }
  return entries;
}

async function sdkDecrypt(entries: FlatEntry[], keypair: DidKeyRecord): Promise<unknown> {
  const plain: FlatEntry[] = [];
  for (const { key, value } of entries)
    plain.push({ key, value: await sdk.decryptPII({ encryptedMessage: value, keypair }) });
  return sdk.unflattenPII(plain);
}

async function benchMode(label: string, hybrid: boolean): Promise<Row[]> {
  const [sender, escrow, beneficiary] = [createDidKeyRecord(), createDidKeyRecord(), createDidKeyRecord()];
  const others = (counterparty: DidKeyRecord) => (hybrid ? [escrow.did, counterparty.did] : [counterparty.did]);
  const keyring = Keyring.from([beneficiary]);

  const sdkEntries = await sdkEncrypt(sender, others(beneficiary));
  const ourEntries = encryptIvms101(record, sender, others(beneficiary));
  // Both implementations must read both outputs, or the figures mean nothing.
  check(decryptIvms101(sdkEntries, keyring).record, 'ours reading the SDK');
  check(await sdkDecrypt(ourEntries, beneficiary), 'the SDK reading ours');

  const strangers = Array.from({ length: FIRST_CONTACT_POOL }, () => createDidKeyRecord());
  const fromStrangers = strangers.map((stranger) => encryptIvms101(record, stranger, others(beneficiary)));

  return [
    await compare(
      `encrypt, ${label}`,
      () => sdkEncrypt(sender, others(beneficiary)),
      () => encryptIvms101(record, sender, others(beneficiary)),
      strangers.map((stranger) => () => encryptIvms101(record, sender, others(stranger))),
    ),
    await compare(
      `decrypt as beneficiary, ${label}`,
      () => sdkDecrypt(sdkEntries, beneficiary),
      () => decryptIvms101(sdkEntries, keyring),
      fromStrangers.map((entries) => () => decryptIvms101(entries, keyring)),
    ),
  ];
}

function check(decrypted: unknown, what: string): void {
  if (JSON.stringify(decrypted) !== JSON.stringify(record)) throw new Error(`round trip failed: ${what}`);
}

async function main(): Promise<void> {
  const started = performance.now();
  const rows = [...(await benchMode('2 recipients', false)), ...(await benchMode('hybrid, 3 recipients', true))];
  const seconds = (performance.now() - started) / 1000;

  const fmt = (n: number) => (n >= 100 ? n.toFixed(0) : n.toFixed(1));
  const lines = [
    '| operation (40-field record) | SDK records/s | ours records/s (warm) | ours/SDK | ours records/s (first contact) | ours/SDK |',
    '|---|---:|---:|---:|---:|---:|',
    ...rows.map(
      (r) =>
        `| ${r.operation} | ${fmt(r.sdk)} | ${fmt(r.ours)} | ${(r.ours / r.sdk).toFixed(0)}× | ${fmt(r.oursFirstContact)} | ${(r.oursFirstContact / r.sdk).toFixed(0)}× |`,
    ),
  ];
  const cpu = cpus();
  process.stdout.write(
    [
      `machine: ${cpu.length} × ${cpu[0]?.model ?? 'unknown CPU'}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, ` +
        `Node ${process.version}, ${process.platform}`,
      `date: ${new Date().toISOString()}`,
      '',
      ...lines,
      '',
      `total run time ${seconds.toFixed(1)} s`,
      '',
    ].join('\n'),
  );
  const slowest = Math.min(...rows.map((r) => r.ours / r.sdk));
  if (slowest < 20) process.stdout.write(`WARNING: below the 20× target (${slowest.toFixed(1)}×)\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
