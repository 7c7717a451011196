/**
 * Simulated counterparty VASPs: sandbox-only routes (SANDBOX_TEST_ROUTES=1 and the operator token, sandbox/auth/test-routes.ts;
 * only for VASPs the seed marks simulated)
 * and the background simulator. The mechanism and the routes' shapes are documented in behaviours.ts (as beneficiary)
 * and deposits.ts (as the originator of notified deposits).
 */
import type { FastifyInstance } from 'fastify';
import type { Pool, PoolClient } from 'pg';
import { Type } from 'typebox';
import { Did, documented, Uuid } from '../openapi';
import { withTransaction } from '../../db/transaction';
import { createDidKeyRecord } from '../../lib/crypto';
import type { SandboxContext } from '../context';
import { addFieldValues, simpleVasp } from '../directory/profiles';
import { badRequest, notFound } from '../errors';
import { OPERATOR_DID } from '../operator';
import { notSimulated, testRoutesOn } from '../auth/test-routes';
import { transactionService } from '../transactions';
import { isUuid } from '../transactions/model';
import { DEFAULT_BEHAVIOUR, parseBehaviour, type Behaviour } from './behaviours';
import { parseDepositAnswer, type DepositAnswer } from './deposits';
import { CounterpartySimulator, onTransactionChange } from './simulator';
import {
  deleteCounterparty,
  depositOriginatorFor,
  insertCounterparty,
  readCounterparty,
  readReceived,
  replaceKey,
  updateCounterparty,
  vaspSimulatedForShare,
  type CounterpartyRow as Row,
} from './store';

export { BEHAVIOURS, parseBehaviour, behaviourFor, stepsOf, type Behaviour, type BehaviourName } from './behaviours';
export { CounterpartySimulator } from './simulator';
export { isSimulated } from './store';

const invalid = (message: string) => badRequest('ValidationError', message);
const DID = /^did:[a-zA-Z0-9]*:.+$/;
const MAX_ADDRESSES = 10_000;

const Behaviour = Type.Union([
  Type.String({ description: 'accept, ack, reject, decline, notReady, silent, late:<N>[:<behaviour>]' }),
  Type.Object({ behaviour: Type.String(), afterSeconds: Type.Number({ minimum: 0 }) }),
]);
const BehaviourMap = Type.Record(Type.String({ minLength: 1, maxLength: 512 }), Behaviour, {
  maxProperties: MAX_ADDRESSES,
});
const DepositAnswerSchema = Type.Union([
  Type.Number({ minimum: 0, description: 'Seconds after the report' }),
  Type.Literal('never'),
  Type.Object({
    afterSeconds: Type.Union([Type.Number({ minimum: 0 }), Type.Null()]),
    originatorName: Type.Optional(Type.Tuple([Type.String(), Type.String()])),
  }),
]);
const DepositMap = Type.Record(Type.String({ minLength: 1, maxLength: 512 }), DepositAnswerSchema, {
  maxProperties: MAX_ADDRESSES,
});
const VaspParams = Type.Object({ vaspDID: Did });
const ConfigureBody = Type.Object({
  default: Type.Optional(Behaviour),
  behaviours: Type.Optional(BehaviourMap),
  publishKey: Type.Optional(Type.Boolean()),
});

function parseMap(value: unknown, field: string): Record<string, Behaviour> {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw invalid(`${field}: must be an object {<address>: <behaviour>}`);
  const entries = Object.entries(value as Record<string, unknown>);
  if (entries.length > MAX_ADDRESSES) throw invalid(`${field}: at most ${MAX_ADDRESSES} addresses`);
  return Object.fromEntries(
    entries.map(([address, b]) => {
      if (!address || address.length > 512) throw invalid(`${field}: addresses must be 1 to 512 characters`);
      const parsed = parseBehaviour(b);
      if (typeof parsed === 'string') throw invalid(`${field}.${address}: ${parsed}`);
      return [address, parsed];
    }),
  );
}

function parseDeposits(value: unknown): Record<string, DepositAnswer> {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw invalid('body: must be an object {<destination>: <seconds> | "never" | {afterSeconds, originatorName?}}');
  const entries = Object.entries(value as Record<string, unknown>);
  if (entries.length > MAX_ADDRESSES) throw invalid(`body: at most ${MAX_ADDRESSES} destinations`);
  return Object.fromEntries(
    entries.map(([destination, a]) => {
      if (!destination || destination.length > 512) throw invalid('body: destinations must be 1 to 512 characters');
      const parsed = parseDepositAnswer(a);
      if (typeof parsed === 'string') throw invalid(`${destination}: ${parsed}`);
      return [destination, parsed];
    }),
  );
}

/**
 * The keyRotation fault: the simulated counterparty publishes a new did:key as its pii_didkey, keeping the earlier
 * one for data already encrypted to it. Nothing happens for a VASP that is not simulated here.
 */
export async function rotateSimulatedKey(pool: Pool, vaspDid: string): Promise<boolean> {
  return withTransaction(pool, async (client) => {
    const key = createDidKeyRecord();
    const rotated = await replaceKey(client, vaspDid, key.did, key.keys[0].privateKeyHex);
    if (rotated)
      await addFieldValues(client, vaspDid, [{ fieldName: 'pii_didkey', values: [{ value: key.did }] }], OPERATOR_DID);
    return rotated;
  });
}

export async function counterpartyRoutes(app: FastifyInstance, ctx: SandboxContext): Promise<void> {
  const transactions = transactionService(ctx);
  transactions.onChange(onTransactionChange);
  // A notified deposit to a destination a simulated originator claims names that VASP as its originator.
  transactions.onDeposit(
    async (client, { destination }) => (await depositOriginatorFor(client, destination))?.vasp_did,
  );
  const simulator = new CounterpartySimulator(ctx.pool, transactions, ctx.logger);

  const view = async (vaspDID: string, row: Row, db: Pool | PoolClient = ctx.pool) => {
    const published = (await simpleVasp(db, vaspDID, ['pii_didkey']))?.pii_didkey;
    return {
      vaspDID,
      pii_didkey: row.did_key,
      published: published === row.did_key,
      default: row.default_behaviour,
      behaviours: row.behaviours,
      deposits: row.deposits,
    };
  };

  /** Creates or updates the simulated VASP; a new one gets a did:key, published as its pii_didkey. */
  async function configure(
    vaspDID: string,
    patch: {
      default?: Behaviour;
      behaviours?: Record<string, Behaviour>;
      deposits?: Record<string, DepositAnswer>;
      publishKey?: boolean;
    },
  ) {
    if (!DID.test(vaspDID)) throw invalid('vaspDID: must be a DID');
    return withTransaction(ctx.pool, async (client) => {
      const simulated = await vaspSimulatedForShare(client, vaspDID);
      if (simulated === undefined) throw notFound(`VASP ${vaspDID} not found`);
      if (!simulated) throw notSimulated('vaspDID', vaspDID);
      let row: Row;
      if (await readCounterparty(client, vaspDID, true)) {
        row = await updateCounterparty(client, vaspDID, patch);
      } else {
        const key = createDidKeyRecord();
        row = await insertCounterparty(client, {
          vaspDid: vaspDID,
          did: key.did,
          privateKeyHex: key.keys[0].privateKeyHex,
          default: patch.default ?? DEFAULT_BEHAVIOUR,
          behaviours: patch.behaviours ?? {},
          deposits: patch.deposits,
        });
      }
      // Publish the simulation key, unless the VASP already publishes another key (it keeps that key unless
      // `publishKey: true`; data encrypted to it then does not decrypt here).
      const published = (await simpleVasp(client, vaspDID, ['pii_didkey']))?.pii_didkey;
      if (published !== row.did_key && (published === null || published === undefined || patch.publishKey === true)) {
        await addFieldValues(
          client,
          vaspDID,
          [{ fieldName: 'pii_didkey', values: [{ value: row.did_key }] }],
          OPERATOR_DID,
        );
      }
      return view(vaspDID, row, client);
    });
  }

  await app.register(async (scope) => {
    scope.addHook('onReady', async () => simulator.start());
    scope.addHook('onClose', async () => simulator.stop());
    // The simulator runs either way (seeded simulated VASPs answer transfers); only its controls are test routes.
    if (!testRoutesOn(ctx.config)) return;

    scope.put(
      '/sandbox/counterparties/:vaspDID',
      documented({ params: VaspParams, body: ConfigureBody }),
      async (request) => {
        const { vaspDID } = request.params as { vaspDID: string };
        const body = (request.body === undefined ? {} : request.body) as Record<string, unknown>;
        if (typeof body !== 'object' || body === null || Array.isArray(body))
          throw invalid('body: must be {default?, behaviours?}');
        let fallback: Behaviour | undefined;
        if (body.default !== undefined) {
          const parsed = parseBehaviour(body.default);
          if (typeof parsed === 'string') throw invalid(`default: ${parsed}`);
          fallback = parsed;
        }
        if (body.publishKey !== undefined && typeof body.publishKey !== 'boolean')
          throw invalid('publishKey: must be a boolean');
        return configure(vaspDID, {
          default: fallback,
          behaviours: body.behaviours === undefined ? undefined : parseMap(body.behaviours, 'behaviours'),
          publishKey: body.publishKey as boolean | undefined,
        });
      },
    );

    scope.put(
      '/sandbox/counterparties/:vaspDID/behaviours',
      documented({ params: VaspParams, body: BehaviourMap }),
      async (request) => {
        const { vaspDID } = request.params as { vaspDID: string };
        return configure(vaspDID, { behaviours: parseMap(request.body === undefined ? {} : request.body, 'body') });
      },
    );

    scope.put(
      '/sandbox/counterparties/:vaspDID/deposits',
      documented({
        params: VaspParams,
        body: DepositMap,
        description: 'As the originator of notified deposits: per destination, answer after N seconds or "never"',
      }),
      async (request) => {
        const { vaspDID } = request.params as { vaspDID: string };
        return configure(vaspDID, { deposits: parseDeposits(request.body === undefined ? {} : request.body) });
      },
    );

    scope.get('/sandbox/counterparties/:vaspDID', documented({ params: VaspParams }), async (request) => {
      const { vaspDID } = request.params as { vaspDID: string };
      if (!DID.test(vaspDID)) throw invalid('vaspDID: must be a DID');
      const row = await readCounterparty(ctx.pool, vaspDID);
      if (!row) throw notFound(`VASP ${vaspDID} is not a simulated counterparty`);
      return view(vaspDID, row);
    });

    scope.delete('/sandbox/counterparties/:vaspDID', documented({ params: VaspParams }), async (request) => {
      const { vaspDID } = request.params as { vaspDID: string };
      if (!DID.test(vaspDID)) throw invalid('vaspDID: must be a DID');
      return { isDeleted: await deleteCounterparty(ctx.pool, vaspDID) };
    });

    scope.get(
      '/sandbox/counterparties/:vaspDID/received/:txId',
      documented({ params: Type.Object({ vaspDID: Did, txId: Uuid }) }),
      async (request) => {
        const { vaspDID, txId } = request.params as { vaspDID: string; txId: string };
        if (!isUuid(txId)) throw invalid('txId: must be a transaction id (UUID)');
        const r = await readReceived(ctx.pool, vaspDID, txId);
        if (!r) throw notFound(`VASP ${vaspDID} has not received transaction ${txId}`);
        return {
          vaspDID,
          transactionId: txId,
          mode: r.mode,
          decrypted: r.decrypted,
          fields: r.fields,
          ...(r.error && { error: r.error }),
          receivedAt: r.received_at.toISOString(),
        };
      },
    );
  });
}
