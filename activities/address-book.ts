import type { Pool } from 'pg';
import type { AddressBookConfig } from '../address-book/config';
import type { DeltaSummary } from '../address-book/types';
import type { Logger } from '../lib/logger';
import { withHeartbeat } from '../lib/heartbeat';
import { heartbeat } from './context';
import { assertRunId } from '../address-book/store/staging';
import type { NetworkClient } from '../network/client';
import { DEFAULT_TRANSIENT_RETRY } from '../network/retry';
import { applyRemovals, awaitNetworkCount, registerAdds } from '../address-book/changes';
import type { AddressBookDeps } from '../address-book/deps';
import { computeDelta, computeHead } from '../address-book/diff';
import { listInto } from '../address-book/listing';
import { beginRun, buildMirror, finishRun } from '../address-book/run';
import { uploadChunk } from '../address-book/upload';
import { verifyRun } from '../address-book/verify';

export interface AddressBookActivityDeps {
  pool: Pool;
  network: NetworkClient;
  logger: Logger;
  /** The worker's settings (config/index.ts, `addressBook`). */
  addressBook: AddressBookConfig;
  /** A workflow's status by Temporal, to release a run lock whose workflow is gone (address-book/deps.ts). */
  workflowStatus?: (workflowId: string) => Promise<string>;
}

/**
 * The reconciliation's activities (workflows/address-book-reconcile.ts), each over the steps in address-book/. A run
 * id comes from workflow input and names the run's staging tables: anything but a UUID is refused here, before any
 * statement runs, with a ValidationError (not retried).
 */
export function addressBookActivities(deps: AddressBookActivityDeps) {
  const cfg = deps.addressBook;
  // Reconciliation can wait: it takes from the group's network budget only above the reserve. Its steps make thousands
  // of calls and resume from checkpoints, so each idempotent call rides out transient failures itself (heartbeating
  // while it waits) instead of ending the attempt: only a permanent refusal, or an outage longer than the policy,
  // reaches Temporal's retry.
  let network: NetworkClient | undefined;
  const run =
    <I extends { runId: string }, R>(step: (d: AddressBookDeps, input: I) => Promise<R>) =>
    async (input: I): Promise<R> => {
      // The run id first: a bad one is refused before anything else is touched.
      assertRunId(input?.runId);
      network ??= deps.network.at('low').retrying({
        ...DEFAULT_TRANSIENT_RETRY,
        onRetry: ({ what, attempt, waitMs }) => heartbeat({ retrying: what, attempt, waitMs }),
      });
      return step(
        {
          pool: deps.pool,
          network,
          logger: deps.logger,
          settings: cfg,
          workflowStatus: deps.workflowStatus,
          heartbeat,
        },
        input,
      );
    };
  return {
    /** Records the run and takes the VASP's run lock (see address-book/run.ts). */
    abBeginRun: run((d, input: Parameters<typeof beginRun>[1]) =>
      withHeartbeat(d.heartbeat, 'starting', () => beginRun(d, input)),
    ),

    /** The network's listing at the start of the run, into staging. */
    abListNetwork: run((d, input: { runId: string; vaspDid: string }) =>
      listInto(d, input.runId, input.vaspDid, 'before'),
    ),

    /** The whole diff (see address-book/diff.ts). Running it again after it completed changes nothing. */
    abComputeDelta: run((d, input: { runId: string; vaspDid: string }): Promise<DeltaSummary> =>
      withHeartbeat(d.heartbeat, 'diff', () => computeDelta(d, input)),
    ),

    /** A first sync's head, committed so its uploads can start while abComputeDelta computes the rest. Idempotent. */
    abComputeHead: run((d, input: { runId: string; vaspDid: string }) =>
      withHeartbeat(d.heartbeat, 'diff', () => computeHead(d, input)),
    ),

    /** Builds a full run's mirror: started beside the removals and uploads, awaited before the end. */
    abBuildMirror: run((d, input: { runId: string }) =>
      withHeartbeat(d.heartbeat, 'mirror', () => buildMirror(d, input)),
    ),

    /** Deletes what the registry no longer has; resumes after the last batch. */
    abApplyRemovals: run(applyRemovals),

    /** Waits (bounded) until the network's count reaches the expected one, or settles. */
    abAwaitNetworkCount: run(awaitNetworkCount),

    /** A small delta: one `registerCustomer` per row. */
    abRegisterAdds: run(registerAdds),

    /** Uploads one chunk, exactly once. */
    abUploadChunk: run(uploadChunk),

    /** Checks the result, by the count or the whole listing. */
    abVerify: run(verifyRun),

    /** Stores the run's report, releases the VASP's run lock and drops the run's staging. */
    abFinishRun: run(finishRun),
  };
}
