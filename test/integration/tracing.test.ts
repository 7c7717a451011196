import { randomBytes, randomUUID } from 'node:crypto';
import { Worker } from '@temporalio/worker';
import { NetworkClient } from '../../network/client';
import { createDataConverter } from '../../lib/temporal/data-converter';
import { createDidKeyRecord } from '../../lib/crypto';
import { startTracing, type Tracing } from '../../lib/tracing';
import {
  eventually,
  groupSeed,
  randomDid,
  startOrchestrator,
  startSandbox,
  testEnv,
  type RunningOrchestrator,
  type RunningSandbox,
} from '../harness/platform';
import { attributeOf, startOtlpCollector, type OtlpCollector, type OtlpSpan } from '../harness/otlp-collector';

/** Personal data of the transfer: none of it may leave in a span (names, attributes, events, resources). */
const ORIGINATOR_NAME = `Quillfeather${randomBytes(4).toString('hex')}`;
const BENEFICIARY_NAME = `Marrowdale${randomBytes(4).toString('hex')}`;
const DESTINATION = `0x${randomBytes(20).toString('hex')}`;
const TOWN = `Brindlewick${randomBytes(4).toString('hex')}`;

describe('tracing: one outgoing transfer is one trace from the API request to the network calls (issue 24)', () => {
  const group = groupSeed();
  const simulated = randomDid();
  group.seed.vasps.push({ did: simulated, name: 'Simulated VASP', simulated: true });
  const originatorKey = createDidKeyRecord();
  let sandbox: RunningSandbox;
  let orch: RunningOrchestrator | undefined;
  let tracing: Tracing | undefined;
  let collector: OtlpCollector;

  beforeAll(async () => {
    collector = await startOtlpCollector();
    sandbox = await startSandbox(group.seed);
    await sandbox.simulateCounterparty(encodeURIComponent(simulated), { default: 'accept' });
    const external = new NetworkClient(sandbox.networkConfig(group.externalUser));
    await external.api
      .post('tf/vasps/update', {
        json: {
          did: group.external,
          fields: [{ fieldName: 'pii_didkey', values: [{ value: createDidKeyRecord().did }] }],
        },
      })
      .json();
    // What OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:<port> starts in the API and worker processes.
    tracing = startTracing({
      otlpEndpoint: collector.endpoint,
      process: 'test',
    });
    orch = await startOrchestrator(sandbox.networkConfig(group.gatewayUser), {
      group: { gatewayDid: group.gateway, subsidiaryDids: [group.subA, group.subB] },
      agentKeys: JSON.stringify([{ vaspDID: group.subA, privateKeyHex: originatorKey.keys[0].privateKeyHex }]),
      transfers: { pollIntervalMs: 300, answerDeadlineMs: 60_000 },
      tracing,
    });
  });
  afterAll(async () => {
    await orch?.close();
    await tracing?.shutdown();
    await sandbox?.close();
    await collector?.close();
  });

  it('without an endpoint nothing is started', () => {
    expect(startTracing({ process: 'api' })).toBeUndefined();
    expect(startTracing({ otlpEndpoint: '', process: 'worker' })).toBeUndefined();
  });

  it('POST /v1/transfers → StartWorkflow → RunWorkflow → RunActivity → its network calls, in one trace, without personal data', async () => {
    const name = (primaryIdentifier: string, secondaryIdentifier: string) => ({
      naturalPerson: {
        name: [{ nameIdentifier: [{ primaryIdentifier, secondaryIdentifier, nameIdentifierType: 'LEGL' }] }],
      },
    });
    const key = randomUUID();
    const r = await fetch(`${orch!.apiUrl}/v1/transfers`, {
      method: 'POST',
      headers: orch!.headers('operator', { 'content-type': 'application/json', 'idempotency-key': key }),
      body: JSON.stringify({
        transactionAsset: 'ETH',
        transactionAmount: '1000000000000000000',
        originatorVASPdid: group.subA,
        beneficiaryVASPdid: simulated,
        transactionBlockchainInfo: { destination: DESTINATION },
        originator: {
          originatorPersons: [
            {
              naturalPerson: {
                ...name(ORIGINATOR_NAME, 'Ada').naturalPerson,
                geographicAddress: [{ addressType: 'HOME', townName: TOWN, country: 'NZ' }],
              },
            },
          ],
          accountNumber: [DESTINATION],
        },
        beneficiary: { beneficiaryPersons: [name(BENEFICIARY_NAME, 'Bo')], accountNumber: [DESTINATION] },
      }),
    });
    expect([r.status, r.status === 202 ? '' : await r.text()]).toEqual([202, '']);
    const id = key;
    // The workflow's span ends with the workflow: wait for its result, then export what is pending.
    const final = await orch!.client.workflow.getHandle(`outgoing-${id}`).result();
    expect(final).toMatchObject({ status: 'ACCEPTED' });
    await tracing!.flush();

    const spans = await eventually(async () => {
      await tracing!.flush();
      const all = collector.spans();
      return all.some((s) => s.name === 'RunWorkflow:outgoingTransfer') ? all : undefined;
    }, 20_000);
    expect(collector.exports.every((b) => b.contentType.startsWith('application/json'))).toBe(true);

    const api = spans.filter((s) => s.name === 'POST /v1/transfers');
    expect(api).toHaveLength(1);
    const traceId = api[0]!.traceId;
    const trace = spans.filter((s) => s.traceId === traceId);
    const byId = new Map(trace.map((s) => [s.spanId, s]));
    const parentName = (s: OtlpSpan) => (s.parentSpanId ? byId.get(s.parentSpanId)?.name : undefined);
    const named = (n: string | RegExp) => trace.filter((s) => (typeof n === 'string' ? s.name === n : n.test(s.name)));

    // The chain: the request starts the workflow, whose activities make the network calls.
    const start = named('StartWorkflow:outgoingTransfer');
    expect(start).toHaveLength(1);
    expect(parentName(start[0]!)).toBe('POST /v1/transfers');
    const run = named('RunWorkflow:outgoingTransfer');
    expect(run).toHaveLength(1);
    expect(parentName(run[0]!)).toBe('StartWorkflow:outgoingTransfer');
    const runActivities = named(/^RunActivity:/);
    expect(runActivities.map((s) => s.name)).toEqual(
      expect.arrayContaining(['RunActivity:sendOutgoingTransfer', 'RunActivity:finishOutgoingTransfer']),
    );
    for (const a of runActivities) expect(parentName(a)).toBe('RunWorkflow:outgoingTransfer');
    // Each network call is an event on the span it was made in, named by its route template.
    const callsIn = (s: OtlpSpan) => (s.events ?? []).filter((e) => e.name.startsWith('network '));
    const network = trace.flatMap((s) => callsIn(s).map((e) => e.name));
    expect(network).toEqual(expect.arrayContaining(['network POST /tx/create', 'network POST {pii}/put']));
    // tx/create is made inside the sending activity: an event on its RunActivity span, with the call's route and time.
    const send = named('RunActivity:sendOutgoingTransfer')[0]!;
    const createTx = callsIn(send).find((e) => e.name === 'network POST /tx/create');
    expect(createTx).toBeDefined();
    expect(attributeOf(createTx!.attributes, 'http.request.method')).toBe('POST');
    expect(attributeOf(createTx!.attributes, 'url.template')).toBe('/tx/create');
    expect(attributeOf(createTx!.attributes, 'network.duration_ms')).toBeDefined();
    // No call leaves a span of its own any more.
    expect(spans.filter((s) => s.name.startsWith('network '))).toEqual([]);
    // Route templates, never raw URLs with ids.
    const getState = spans.filter((s) => s.name.startsWith('GET /v1/transfers'));
    for (const s of getState) expect(s.name).not.toContain(id);

    // Nothing personal anywhere in what left the process: names, addresses, the amount's owner.
    const exported = collector.exports.map((b) => b.body).join('\n');
    for (const secret of [ORIGINATOR_NAME, BENEFICIARY_NAME, TOWN, DESTINATION, DESTINATION.slice(2)])
      expect(exported).not.toContain(secret);
    // The workflow sink's WorkflowInfo (memo, search attributes) is cut down to identifiers.
    const keys = new Set(spans.flatMap((s) => (s.attributes ?? []).map((a) => a.key)));
    expect([...keys].filter((k) => /memo|searchAttributes|lastResult|lastFailure/i.test(k))).toEqual([]);

    // The traced workflow's history (its start carries the trace) replays through the bundle with the interceptors.
    const history = await orch!.client.workflow.getHandle(`outgoing-${id}`).fetchHistory();
    const header = history.events?.[0]?.workflowExecutionStartedEventAttributes?.header?.fields ?? {};
    expect(Object.keys(header)).toContain('_tracer-data');
    await Worker.runReplayHistory(
      {
        workflowBundle: { codePath: testEnv().workflowBundle },
        dataConverter: createDataConverter(testEnv().keyring, { refuseUnencrypted: true }),
        sinks: tracing!.sinks,
      },
      history,
      `outgoing-${id}`,
    );
  });
});
