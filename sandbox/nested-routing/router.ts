import { BackgroundLoop } from '../background-loop';
import type { Pool, PoolClient } from 'pg';
import { addressQueryHeaders } from '../../lib/address-webhook-signature';
import type { Logger } from '../../lib/logger';
import { findOwners } from '../address-book';
import { registerOne } from '../address-book/store';
import { getVaspSettings } from '../directory/profiles';
import { gatewayOf, subsidiariesOf, vaspName } from '../directory/store';
import { holdDeliveries, releaseDeliveries } from '../webhooks/store';
import { OPERATOR_DID } from '../operator';
import { type TransactionEvent, type TransactionService } from '../transactions';
import { lookupAsset } from '../transactions/model';
import {
  addressQueryWebhook,
  claimDueRoutingTask,
  finishRoutingTask,
  queueRoutingTask,
  retryRoutingTask,
} from './store';

/**
 * Nested-VASP routing, as the network describes it. A message whose beneficiary is a gateway is resolved, in order:
 * 1. the subsidiaries' address books (when the gateway's `autoredirect` is on),
 * 2. the subsidiaries' address webhooks (also only with `autoredirect`): the first that answers `{owns: true}` gets it,
 * 3. otherwise it stays at the gateway, whose notification webhook has already been told, for `txRedirect`/`txConfirm`.
 * What the gateway's notification webhook says about the message is held until these steps are done, so the
 * gateway's own systems act only where the network could not. A redirected message is confirmed (SENT → ACK) when the
 * gateway's `autoconfirm` is on. Confirming a message at a
 * subsidiary registers its destination address to that subsidiary, so the next message to it is redirected at step 1.
 */
export const ADDRESS_WEBHOOK_TIMEOUT_MS = 2000;

/** The asset a lookup of the transaction's destination matches, as tx/create looks it up (transactions/model.ts). */
const assetText = (a: unknown) => (typeof a === 'string' ? lookupAsset(a) : '');

export class NestedRouter {
  private readonly loop: BackgroundLoop;

  constructor(
    private readonly pool: Pool,
    private readonly transactions: TransactionService,
    logger: Logger,
    intervalMs = 100,
  ) {
    this.loop = new BackgroundLoop('routing round', intervalMs, () => this.drain(), logger);
  }

  /** Registered on the transaction service: runs inside the database transaction that stores the change. */
  readonly onChange = async (client: PoolClient, event: TransactionEvent): Promise<void> => {
    const { tx, change } = event;
    const beneficiary = tx.beneficiaryVASPdid;
    if (!beneficiary) return;
    if (
      (change === 'create' || change === 'update') &&
      tx.status === 'SENT' &&
      (await subsidiariesOf(client, beneficiary)).length > 0
    ) {
      const queued = await queueRoutingTask(client, tx.id, beneficiary);
      // The notification webhook is the gateway's last resort: hold what the gateway is told
      // about this message until the automatic paths have had their turn; release() lets it go.
      if (queued) await holdDeliveries(client, tx.id, beneficiary);
    }
    if (change === 'confirm' && tx.status === 'ACK' && (await gatewayOf(client, beneficiary))) {
      const destination = tx.transactionBlockchainInfo?.destination;
      if (destination) {
        await registerOne(client, beneficiary, {
          asset: assetText(tx.transactionAsset),
          address: destination,
          customerRef: `confirmed:${tx.id}`,
        });
      }
    }
  };

  start(): void {
    this.loop.start();
  }

  stop(): Promise<void> {
    return this.loop.stop();
  }

  /** Resolves due tasks one at a time; a task that fails (a database hiccup) is retried with backoff. */
  async drain(): Promise<void> {
    for (;;) {
      const task = await claimDueRoutingTask(this.pool);
      if (!task || this.loop.isStopped) return;
      try {
        const outcome = await this.route(task.transaction_id, task.gateway_did);
        await finishRoutingTask(this.pool, task.transaction_id, outcome);
        await this.release(task.transaction_id);
      } catch (e) {
        // Routing could not finish now: the gateway's notification webhook must not wait for it.
        await this.release(task.transaction_id);
        const delay = Math.min(2 ** task.attempts, 300);
        await retryRoutingTask(this.pool, task.transaction_id, delay, `error: ${(e as Error).message.slice(0, 200)}`);
      }
    }
  }

  /** Lets the held notifications about a message go out (see onChange). */
  private release(id: string): Promise<void> {
    return releaseDeliveries(this.pool, id);
  }

  private async route(id: string, gateway: string): Promise<string> {
    const row = await this.transactions.load(this.pool, id);
    const tx = row?.body;
    if (!tx || tx.beneficiaryVASPdid !== gateway || tx.status !== 'SENT') return 'nothing to do';
    const settings = await getVaspSettings(this.pool, gateway);
    if (!settings.autoredirect) return 'left at the gateway: autoredirect is off';
    const children = await subsidiariesOf(this.pool, gateway);
    const asset = assetText(tx.transactionAsset);
    const destination = tx.transactionBlockchainInfo?.destination ?? '';

    const owners = [
      ...new Set(
        (await findOwners(this.pool, asset, destination)).map((o) => o.vaspDid).filter((d) => children.includes(d)),
      ),
    ];
    if (owners.length === 1) return this.redirect(id, gateway, owners[0]!, 'address book', settings.autoconfirm);

    for (const child of children) {
      if (await this.asksOwns(child, asset, destination))
        return this.redirect(id, gateway, child, 'address webhook', settings.autoconfirm);
    }
    return owners.length > 1
      ? 'left at the gateway: several subsidiaries own the address'
      : 'left at the gateway: no subsidiary owns the address';
  }

  /** Calls a subsidiary's address webhook: `GET <url><params>&asset=&address=`, signed; anything but `{owns: true}` is no. */
  private async asksOwns(vaspDid: string, asset: string, address: string): Promise<boolean> {
    const hook = await addressQueryWebhook(this.pool, vaspDid);
    if (!hook) return false;
    const query = new URLSearchParams(hook.params.replace(/^\?/, ''));
    query.set('asset', asset);
    query.set('address', address);
    const target = new URL(hook.url);
    target.search = query.toString();
    try {
      const response = await fetch(target, {
        // The network's signature, and this project's timestamped one beside it (a receiver may require it).
        headers: addressQueryHeaders(hook.secret, 'GET', `${target.pathname}${target.search}`),
        signal: AbortSignal.timeout(ADDRESS_WEBHOOK_TIMEOUT_MS),
      });
      if (!response.ok) return false;
      const body = (await response.json()) as { owns?: unknown };
      return body.owns === true;
    } catch {
      return false;
    }
  }

  private async redirect(id: string, gateway: string, to: string, why: string, autoconfirm: boolean): Promise<string> {
    await this.transactions.applyChange(id, 'redirect', async (tx, client) => {
      if (tx.beneficiaryVASPdid !== gateway || tx.status !== 'SENT') return undefined;
      tx.beneficiaryVASPdid = to;
      const name = await vaspName(client, to);
      if (name !== undefined) tx.beneficiaryVASPname = name;
      return { issuerDid: OPERATOR_DID, actionData: `automatic (${why}): to ${to}` };
    });
    if (autoconfirm) {
      await this.transactions.applyChange(id, 'confirm', async (tx) =>
        tx.status === 'SENT' && tx.beneficiaryVASPdid === to
          ? { issuerDid: OPERATOR_DID, actionData: `automatic (${why})`, status: 'ACK' }
          : undefined,
      );
    }
    return `redirected to ${to} (${why})${autoconfirm ? ', confirmed' : ''}`;
  }
}
