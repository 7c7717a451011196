import { metrics } from '../../../lib/metrics/registry';
import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Client } from '@temporalio/client';
import { Type } from 'typebox';
import type { NetworkTransaction } from '../../../network/transactions';
import type { TransferContext } from '../../../outgoing/context';
import { AuthenticationError, ConfigError, UpstreamUnavailableError, ValidationError } from '../../../lib/errors';
import { claimWebhook, recordWebhookOutcome, releaseWebhook } from '../../../webhooks/store';
import { verifyWebhookSignature } from '../../../lib/webhook-signature';
import type { GroupConfig } from '../../../config';
import type { IncomingConfig } from '../../../incoming/config';
import type { WebhookConfig } from '../../../webhooks/config';
import { needTransfers } from '../../transfers/start-outgoing';
import { passOutgoingUpdate } from '../../transfers/network-update';
import { passIncomingUpdate } from '../../incoming/network-update';
import { wakeDeposits } from '../../deposits/network-update';

export interface WebhookRouteDeps {
  temporal: Client;
  transfers?: TransferContext;
  /** With a gateway configured, messages to the group start (or signal) their incoming-transfer workflow. */
  group: GroupConfig;
  incoming: IncomingConfig;
  /** The notification webhook's signing secrets. */
  webhooks: WebhookConfig;
  taskQueue?: string;
}

type Outcome =
  'signalled' | 'late' | 'not-ours' | 'incoming' | 'known' | `${'signalled' | 'late'}+${'incoming' | 'late' | 'known'}`;

/**
 * A claim still `processing` after this long belongs to a request that died before handing the delivery on (a hand-over
 * takes well under a second, and the network waits at most 15 s for an answer): a redelivery may take it over.
 */
const CLAIM_STALE_AFTER_SECONDS = 60;

const Ack = Type.Object({
  received: Type.Boolean(),
  duplicate: Type.Boolean(),
  outcome: Type.Optional(
    Type.String({
      description:
        'signalled (outgoing), incoming (started or signalled the incoming transfer), known (the incoming transfer already has this status), late (the transfer had already finished) or not-ours; both sides joined by + for a transfer within the group',
    }),
  ),
});

/** The Transaction of a delivery: the Svix envelope `{message, payload:{transaction}}`, or the legacy bare object. */
function transactionOf(body: unknown): { message?: string; tx: NetworkTransaction } {
  const b = body as Record<string, unknown> | null;
  const payload = b?.payload as Record<string, unknown> | undefined;
  const tx = (payload?.transaction ?? (typeof b?.id === 'string' ? b : undefined)) as NetworkTransaction | undefined;
  if (!tx || typeof tx.id !== 'string' || typeof tx.status !== 'string') {
    throw new ValidationError('payload.transaction', 'is required: the Transaction with its id and status');
  }
  return { message: typeof b?.message === 'string' ? b.message : undefined, tx };
}

/** The secrets a delivery may be signed with: its endpoint's, else every configured one. */
function secretsFor(webhooks: WebhookConfig, endpoint: string | undefined): string[] {
  const { notification, notificationDefault } = webhooks;
  if (endpoint !== undefined) {
    const own = notification[endpoint] ?? notificationDefault;
    return own ? [own] : [];
  }
  return [...Object.values(notification), ...(notificationDefault ? [notificationDefault] : [])];
}

function verified(secrets: string[], headers: FastifyRequest['headers'], raw: Buffer): boolean {
  for (const secret of secrets) {
    try {
      if (verifyWebhookSignature(secret, headers, raw)) return true;
    } catch {
      /* not this secret */
    }
  }
  return false;
}

/**
 * The largest delivery accepted: a Transaction update is a few KiB, and the network's largest (a transaction with
 * every optional field filled) stays far below this. A longer body answers 413 before any of it is read past the limit.
 */
export const WEBHOOK_BODY_LIMIT = 256 * 1024;

function parseJson(raw: Buffer): unknown {
  try {
    return JSON.parse(raw.toString('utf8'));
  } catch {
    throw new ValidationError('(body)', 'is not JSON');
  }
}

/**
 * The network's notification webhook: verifies the signature with the endpoint's secret over the raw body before
 * parsing it, acknowledges a repeated delivery id without acting on it again, and passes the transaction's new status
 * to the outgoing transfer's workflow (`outgoing-<transactionRef>`, or found by transaction id) and, when the group is the
 * beneficiary, to the incoming transfer's workflow (both, for a transfer between two VASPs of the group). Others are
 * recorded and acknowledged. It answers as soon as the signals are accepted; a failure to reach Temporal answers 503
 * so the network delivers again.
 */
export function notificationWebhookRoutes(app: FastifyInstance, deps: WebhookRouteDeps) {
  void app.register(async (hooks) => {
    // The signature covers the exact bytes sent: the body stays those bytes until it has verified, so nobody without
    // the secret gets a JSON parse of their input. JSON is the only type the network sends; others answer 415 unread.
    hooks.removeAllContentTypeParsers();
    hooks.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));

    const handler = async (request: FastifyRequest) => {
      const ctx = needTransfers(deps);
      const endpoint = (request.params as { endpoint?: string }).endpoint;
      const raw = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
      const secrets = secretsFor(deps.webhooks, endpoint);
      // Our own misconfiguration, not the sender's fault: a 5xx makes the network deliver again once it is fixed.
      if (secrets.length === 0) {
        throw new ConfigError(
          'NOTIFICATION_WEBHOOK_SECRETS',
          'no signing secret is configured for this endpoint',
          "Add the endpoint's secret",
        );
      }
      if (!verified(secrets, request.headers, raw)) throw new AuthenticationError('webhook signature does not verify');

      const { message, tx } = transactionOf(parseJson(raw));
      const header = (name: string) =>
        typeof request.headers[name] === 'string' ? (request.headers[name] as string) : undefined;
      const webhookId =
        header('webhook-id') ?? header('svix-id') ?? `sha256:${createHash('sha256').update(raw).digest('hex')}`;
      const claimed = await claimWebhook(
        ctx.pool,
        {
          webhookId,
          endpoint: endpoint ?? '',
          messageType: message ?? null,
          transactionId: tx.id,
          transactionRef: tx.transactionRef ?? null,
          status: tx.status!,
          originatorVaspDid: tx.originatorVASPdid ?? null,
          beneficiaryVaspDid: tx.beneficiaryVASPdid ?? null,
        },
        CLAIM_STALE_AFTER_SECONDS,
      );
      if (!claimed) {
        metrics.webhooks.inc({ outcome: 'duplicate' });
        return { received: true, duplicate: true };
      }

      let outcome: Outcome;
      try {
        // A transfer between two VASPs of the group is both outgoing and incoming: each side's workflow gets it.
        const outgoing = await passOutgoingUpdate(deps.temporal, ctx, tx, webhookId);
        const incoming = await passIncomingUpdate({ ...deps, pool: ctx.pool }, tx);
        outcome =
          outgoing === 'not-ours'
            ? incoming
            : incoming === 'not-ours'
              ? outgoing
              : (`${outgoing}+${incoming}` as Outcome);
      } catch (e) {
        // Let the network deliver again: forget the claim.
        await releaseWebhook(ctx.pool, webhookId);
        metrics.webhooks.inc({ outcome: 'failed' });
        request.log.warn(
          { err: { message: (e as Error).message }, transactionId: tx.id },
          'webhook could not be delivered to its workflow',
        );
        throw new UpstreamUnavailableError('the webhook could not be passed on; deliver it again');
      }
      // Deposits matched to this message check now; their rechecks catch up should this fail.
      await wakeDeposits({ temporal: deps.temporal, pool: ctx.pool }, tx).catch((e: unknown) =>
        request.log.warn(
          { err: { message: (e as Error).message }, transactionId: tx.id },
          'deposits waiting on the message could not be woken',
        ),
      );
      await recordWebhookOutcome(ctx.pool, webhookId, outcome);
      metrics.webhooks.inc({ outcome });
      return { received: true, duplicate: false, outcome };
    };

    const schema = {
      tags: ['webhooks'],
      summary: 'Notification webhook of the network (Svix-signed Transaction updates)',
      response: { 200: Ack },
    };
    const config = { public: "the network signs each delivery (Svix) with the endpoint's secret" };
    const bodyLimit = WEBHOOK_BODY_LIMIT;
    hooks.post('/webhooks/notification', { config, schema, bodyLimit }, handler);
    hooks.post(
      '/webhooks/notification/:endpoint',
      { config, bodyLimit, schema: { ...schema, params: Type.Object({ endpoint: Type.String() }) } },
      handler,
    );
  });
}
