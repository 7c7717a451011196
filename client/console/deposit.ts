// One deposit the custody system reported: its facts, its data deadline with the time left, and a compliance
// officer's release or return of a deposit not decided yet.
import { useEffect } from 'preact/hooks';
import { api, canDecide, type ConsoleConfig, type DepositView, type Session } from './api';
import { ConfirmedDecision, type DecisionChoice, useDecidedRecord } from './decision-form';
import { Shortened } from './proof';
import { Amount, html, Message, QUEUE_REFRESH_MS, StatusBadge, VaspName, when } from './ui';

/** Funds still held: not yet credited, not yet sent back. The list shows these by default. */
export const HELD_STATUSES = ['HELD', 'AWAITING_DATA', 'AWAITING_PROOF', 'RETURN_REQUIRED'];
export const DEPOSIT_STATUSES = ['HELD', 'AWAITING_DATA', 'AWAITING_PROOF', 'RELEASED', 'RETURN_REQUIRED', 'RETURNED'];
/**
 * Decided: a person or the workflow released it or required its return (the custody system then confirms the return:
 * RETURNED); nothing decides it again.
 */
const FINAL = ['RELEASED', 'RETURN_REQUIRED', 'RETURNED'];
export const isFinal = (d: DepositView) => FINAL.includes(d.status);

export const depositLink = (id: string) => `#/deposit/${encodeURIComponent(id)}`;

function duration(ms: number): string {
  const min = Math.round(ms / 60_000);
  if (min < 90) return `${Math.max(min, 1)} min`;
  const h = ms / 3_600_000;
  if (h < 48) return `${Math.floor(h)} h ${Math.floor((h % 1) * 60)} min`;
  return `${Math.floor(h / 24)} d`;
}

/**
 * The data deadline and, while the deposit is undecided, the time left, or how long ago it passed, marked: a deposit
 * still undecided after its deadline waits for someone to look at it.
 */
export function Deadline({ deposit }: { deposit: DepositView }) {
  const at = html`<span class="deadline-at">${when(deposit.dataDeadlineAt)}</span>`;
  if (isFinal(deposit)) return at;
  const ms = Date.parse(deposit.dataDeadlineAt) - Date.now();
  return ms > 0
    ? html`${at} <span class="muted time-left">${duration(ms)} left</span>`
    : html`${at} <span class="badge bad overdue">overdue by ${duration(-ms)}</span>`;
}

const DEPOSIT_CHOICES = [
  {
    value: 'release',
    label: 'Release',
    buttonClass: 'release',
    confirmClass: 'primary',
    consequence: 'The custody system is told it may credit the funds.',
  },
  {
    value: 'return',
    label: 'Return',
    buttonClass: 'return',
    confirmClass: 'danger',
    consequence: 'The custody system is told to send the funds back.',
  },
] as const satisfies readonly DecisionChoice<'release' | 'return'>[];

/**
 * Release or return a deposit not decided yet, after a confirmation with the reason the API records. Shown to the
 * roles that may decide; the API checks the role again, and its 403 says so here.
 */
export function DepositActions({
  session,
  deposit,
  onDone,
}: {
  session: Session;
  deposit: DepositView;
  onDone: (updated: DepositView | null, text: string) => void;
}) {
  if (isFinal(deposit) || !canDecide(session)) return null;
  return html`<${ConfirmedDecision}
    choices=${DEPOSIT_CHOICES}
    subject=${html`the deposit of ${deposit.asset} to <${Shortened} value=${deposit.to} />`}
    actionsClass="deposit-actions"
    formClass="deposit-confirm"
    reasonClass="deposit-reason"
    maxLength=${500}
    submit=${(decision: string, reason: string) =>
      api<DepositView>(session, 'POST', `/v1/deposits/${encodeURIComponent(deposit.id)}/decision`, {
        decision,
        reason,
      })}
    doneText=${(updated: DepositView, decision: string) =>
      `Deposit ${decision === 'release' ? 'released' : 'to be returned'}: now ${updated.status}.`}
    forbiddenText=${(message: string) =>
      `Only the compliance role may release or return a deposit; your key's role may not (${message}).`}
    conflictText=${(message: string) =>
      `This deposit is already decided: ${message}. The page now shows its current state.`}
    onDone=${onDone}
  />`;
}

export function DepositPage({ session, config, id }: { session: Session; config: ConsoleConfig; id: string }) {
  const {
    record: deposit,
    error,
    notice,
    load,
    onDone,
  } = useDecidedRecord<DepositView>(session, `/v1/deposits/${encodeURIComponent(id)}`);
  // An undecided deposit moves on its own (matched, its data arrives, its deadline passes), and a return waits for the
  // custody system's confirmation and may escalate: keep the page current until nothing more can happen.
  const settled = deposit ? deposit.status === 'RELEASED' || deposit.status === 'RETURNED' : true;
  useEffect(() => {
    if (settled) return undefined;
    const timer = setInterval(load, QUEUE_REFRESH_MS);
    return () => clearInterval(timer);
  }, [settled, load]);
  if (error) return html`<${Message}>${error}<//>`;
  if (!deposit) return html`<p>Loading…</p>`;
  return html`<section aria-labelledby="deposit-title">
    <h2 id="deposit-title">Deposit <code>${deposit.id}</code> <${StatusBadge} status=${deposit.status} /></h2>
    <p><a href="#/deposits">All deposits</a></p>
    <${Message} kind="success">${notice}<//>
    <div class="columns">
      <div class="panel">
        <dl class="facts" id="deposit-facts">
          <dt>Status</dt>
          <dd id="deposit-status">${deposit.status}</dd>
          <dt>Reason</dt>
          <dd id="deposit-reason">${deposit.reason ?? '—'}</dd>
          <dt>Data deadline</dt>
          <dd id="deposit-deadline"><${Deadline} deposit=${deposit} /></dd>
          <dt>Subsidiary</dt>
          <dd id="deposit-subsidiary"><${VaspName} did=${deposit.vaspDid} session=${session} /></dd>
          <dt>Chain / asset</dt>
          <dd id="deposit-asset">${deposit.chain} / ${deposit.asset}</dd>
          <dt>Amount</dt>
          <dd id="deposit-amount"><${Amount} amount=${deposit.amount} asset=${deposit.asset} config=${config} /></dd>
          <dt>Destination</dt>
          <dd class="mono" id="deposit-to">${deposit.to}</dd>
          <dt>From</dt>
          <dd class="mono">
            ${deposit.from ?? '—'}${deposit.proofRequired ? ' (self-hosted: needs an ownership proof)' : ''}
          </dd>
          <dt>Customer reference</dt>
          <dd>${deposit.customerRef ? html`<code>${deposit.customerRef}</code>` : '—'}</dd>
          <dt>Transaction</dt>
          <dd class="mono" id="deposit-tx">
            ${deposit.txHash} <span class="muted">output ${deposit.outputIndex}</span>
          </dd>
          <dt>Classification</dt>
          <dd>${deposit.classification}</dd>
          <dt>Network message</dt>
          <dd id="deposit-network">
            ${deposit.transactionId ? html`<code>${deposit.transactionId}</code> ${deposit.networkStatus ?? ''}` : 'none matched yet'}
          </dd>
          <dt>Reported</dt>
          <dd>${when(deposit.createdAt)} <span class="muted">by ${deposit.createdBy}</span></dd>
          <dt>Decided</dt>
          <dd id="deposit-decided">
            ${when(deposit.decidedAt)}${deposit.decidedBy ? html` <span class="muted">by ${deposit.decidedBy}</span>` : ''}
          </dd>
          ${
            deposit.status === 'RETURN_REQUIRED' || deposit.status === 'RETURNED'
              ? html`<dt>Return</dt>
                  <dd id="deposit-return">
                    ${
                      deposit.returnTxHash
                        ? html`sent back in <code>${deposit.returnTxHash}</code> at ${when(deposit.returnedAt ?? null)}`
                        : 'not confirmed by the custody system yet'
                    }
                    ${
                      deposit.escalatedAt
                        ? html` <span class="badge bad escalated"
                            >escalated ${when(deposit.escalatedAt)}: not confirmed within 10 business days</span
                          >`
                        : ''
                    }
                  </dd>`
              : ''
          }
        </dl>
      </div>
      <div class="panel">
        <h3>Decision</h3>
        ${isFinal(deposit) ? html`<p class="muted">Decided: ${deposit.status}.</p>` : html`<p class="muted">Not decided yet: the deposit is held.</p>`}
        <${DepositActions} session=${session} deposit=${deposit} onDone=${onDone} />
      </div>
    </div>
  </section>`;
}
