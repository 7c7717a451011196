// One wallet ownership proof: its facts and evidence as labelled fields, a compliance officer's review of a screenshot
// or declaration, and the newest proof of a transfer's beneficiary address on the transfer's page.
import { useEffect, useState } from 'preact/hooks';
import { api, canDecide, type ConsoleConfig, type Page, type Session, type WalletProofView } from './api';
import { ConfirmedDecision, type DecisionChoice, useDecidedRecord } from './decision-form';
import { Amount, errorText, html, Message, StatusBadge, VaspName, when } from './ui';

/** The methods a person decides; the others are verified by the orchestrator. */
const REVIEWED = ['SCREENSHOT', 'SELF_DECLARATION'];

export const METHOD_TEXT: Record<string, string> = {
  SIGNATURE: 'signed message',
  SMALL_DEPOSIT: 'small deposit',
  SCREENSHOT: 'screenshot',
  SELF_DECLARATION: 'self-declaration',
};

export const methodText = (method: string) => METHOD_TEXT[method] ?? method;

/** A wallet address or signature shortened to fit a cell: its start and end, the whole on hover. */
export function Shortened({ value, id }: { value: string | null | undefined; id?: string }) {
  if (!value) return html`<span>—</span>`;
  const text = value.length > 20 ? `${value.slice(0, 10)}…${value.slice(-6)}` : value;
  return html`<span class="mono" id=${id} title=${value} data-full=${value}>${text}</span>`;
}

/** How long until a pending proof's deadline, in the unit that reads best (a review may wait two weeks). */
export function timeLeft(iso: string): string {
  const ms = Date.parse(iso) - Date.now();
  if (ms <= 0) return 'deadline passed';
  const h = ms / 3_600_000;
  if (h >= 48) return `${Math.floor(h / 24)} d left`;
  if (h >= 1) return `${Math.floor(h)} h ${Math.floor((h % 1) * 60)} min left`;
  return `${Math.ceil(ms / 60_000)} min left`;
}

export const proofLink = (id: string) => `#/wallet-proof/${encodeURIComponent(id)}`;

const REVIEW_CHOICES = [
  {
    value: 'approve',
    label: 'Approve',
    buttonClass: 'approve',
    confirmClass: 'primary',
    consequence: 'The wallet counts as the customer’s and the proof is reused until it expires.',
  },
  { value: 'reject', label: 'Reject', buttonClass: 'reject', confirmClass: 'danger', consequence: '' },
] as const satisfies readonly DecisionChoice<'approve' | 'reject'>[];

/**
 * Approve or reject a pending screenshot or self-declaration, after a confirmation with the reason the API records.
 * Shown to the roles that may decide; the API checks the role again, and its 403 says so here.
 */
export function ReviewActions({
  session,
  proof,
  onDone,
}: {
  session: Session;
  proof: WalletProofView;
  onDone: (updated: WalletProofView | null, text: string) => void;
}) {
  if (proof.status !== 'PENDING' || !REVIEWED.includes(proof.method) || !canDecide(session)) return null;
  return html`<${ConfirmedDecision}
    choices=${REVIEW_CHOICES}
    subject=${html`the ${methodText(proof.method)} of <${Shortened} value=${proof.address} /> for <code>${proof.customerRef}</code>`}
    actionsClass="review-actions"
    formClass="review-confirm"
    reasonClass="review-reason"
    maxLength=${1000}
    submit=${(decision: string, reason: string) =>
      api<WalletProofView>(session, 'POST', `/v1/wallet-proofs/${encodeURIComponent(proof.id)}/review`, {
        decision,
        reason,
      })}
    doneText=${(updated: WalletProofView) =>
      `Proof ${updated.status === 'VERIFIED' ? 'approved' : 'rejected'}: now ${updated.status}.`}
    forbiddenText=${(message: string) =>
      `Only the compliance role may approve or reject a proof; your key's role may not (${message}).`}
    conflictText=${(message: string) =>
      `This proof can no longer be reviewed: ${message}. The list now shows its current state.`}
    onDone=${onDone}
  />`;
}

/** What proves ownership, field by field: never the raw JSON. */
function Evidence({ proof, config }: { proof: WalletProofView; config: ConsoleConfig }) {
  const e = proof.evidence ?? {};
  if (e.signature)
    return html`<dl class="facts" id="evidence">
      <dt>Signature</dt>
      <dd><${Shortened} value=${e.signature} id="evidence-signature" /></dd>
    </dl>`;
  if (e.txHash)
    return html`<dl class="facts" id="evidence">
      <dt>Deposit transaction</dt>
      <dd><${Shortened} value=${e.txHash} /></dd>
      <dt>From</dt>
      <dd><${Shortened} value=${e.from} /></dd>
      <dt>Amount</dt>
      <dd><${Amount} amount=${e.amount} asset=${proof.asset} config=${config} /></dd>
    </dl>`;
  if (e.reviewedBy)
    return html`<dl class="facts" id="evidence">
      <dt>Reviewer</dt>
      <dd id="evidence-reviewer">${e.reviewedBy}</dd>
      <dt>Decision</dt>
      <dd id="evidence-decision">
        ${e.decision === 'approve' ? 'approved' : e.decision === 'reject' ? 'rejected' : e.decision}
      </dd>
    </dl>`;
  return html`<p class="muted" id="evidence">None yet.</p>`;
}

export function ProofPage({ session, config, id }: { session: Session; config: ConsoleConfig; id: string }) {
  const {
    record: proof,
    error,
    notice,
    onDone,
  } = useDecidedRecord<WalletProofView>(session, `/v1/wallet-proofs/${encodeURIComponent(id)}`);
  if (error) return html`<${Message}>${error}<//>`;
  if (!proof) return html`<p>Loading…</p>`;
  const pending = proof.status === 'PENDING';
  return html`<section aria-labelledby="proof-title">
    <h2 id="proof-title">Wallet proof <code>${proof.id}</code> <${StatusBadge} status=${proof.status} /></h2>
    <p><a href="#/wallet-proofs">All wallet proofs</a></p>
    <${Message} kind="success">${notice}<//>
    <div class="columns">
      <div class="panel">
        <dl class="facts" id="proof-facts">
          <dt>Status</dt>
          <dd id="proof-status">${proof.status}</dd>
          <dt>Method</dt>
          <dd id="proof-method">${methodText(proof.method)}</dd>
          <dt>Scheme</dt>
          <dd id="proof-scheme">${proof.scheme ?? '—'}</dd>
          <dt>Asset</dt>
          <dd>${proof.asset}</dd>
          <dt>Address</dt>
          <dd class="mono" id="proof-address">${proof.address}</dd>
          <dt>Customer reference</dt>
          <dd><code>${proof.customerRef}</code></dd>
          <dt>Asked by</dt>
          <dd><${VaspName} did=${proof.vaspDid} session=${session} /></dd>
          <dt>Reason</dt>
          <dd id="proof-reason">${proof.reason ?? '—'}</dd>
          <dt>Deadline</dt>
          <dd>
            ${when(proof.challengeExpiresAt)}
            ${pending ? html`<span class="muted">${timeLeft(proof.challengeExpiresAt)}</span>` : ''}
          </dd>
          ${
            proof.depositAmount
              ? html`<dt>Deposit asked</dt>
                  <dd>
                    <${Amount} amount=${proof.depositAmount} asset=${proof.asset} config=${config} /> to
                    <${Shortened} value=${proof.depositAddress} />
                  </dd>`
              : ''
          }
          <dt>Created</dt>
          <dd>${when(proof.createdAt)} <span class="muted">by ${proof.createdBy}</span></dd>
          <dt>Verified</dt>
          <dd>${when(proof.verifiedAt)}</dd>
          <dt>Reused until</dt>
          <dd>${when(proof.expiresAt)}</dd>
        </dl>
      </div>
      <div class="panel">
        <h3>Evidence</h3>
        <${Evidence} proof=${proof} config=${config} />
        <${ReviewActions} session=${session} proof=${proof} onDone=${onDone} />
      </div>
    </div>
  </section>`;
}

/**
 * On a transfer's page: the newest proof of the beneficiary's address, and whether the transfer waits for one
 * (status AWAITING_PROOF). The address is the self-hosted wallet stored with the transfer's classification
 * (`beneficiaryWallet`); proofs are read by address.
 */
export function TransferProof({
  session,
  status,
  address,
}: {
  session: Session;
  status: string;
  address: string | null | undefined;
}) {
  const [proof, setProof] = useState<WalletProofView | null | undefined>(undefined);
  const [error, setError] = useState('');
  useEffect(() => {
    if (!address) return;
    api<Page<WalletProofView>>(session, 'GET', `/v1/wallet-proofs?address=${encodeURIComponent(address)}&limit=1`).then(
      (page) => setProof(page.data[0] ?? null),
      (e: unknown) => setError(errorText(e)),
    );
  }, [session, address]);
  const waits = status === 'AWAITING_PROOF';
  if (!waits && !proof && !error) return '';
  return html`<div class="panel" id="ownership-proof">
    <h3>Ownership proof</h3>
    ${waits ? html`<p id="awaiting-proof"><span class="badge warn">waiting</span> This transfer waits for a verified ownership proof of the beneficiary’s wallet; it is sent once the proof is verified.</p>` : ''}
    <${Message}>${error}<//>
    ${
      proof
        ? html`<dl class="facts">
            <dt>Status</dt>
            <dd id="ownership-proof-status"><${StatusBadge} status=${proof.status} /></dd>
            <dt>Method</dt>
            <dd>${methodText(proof.method)}${proof.scheme ? ` (${proof.scheme})` : ''}</dd>
            <dt>Verified</dt>
            <dd>${when(proof.verifiedAt)}</dd>
            <dt>Proof</dt>
            <dd><a id="ownership-proof-link" href=${proofLink(proof.id)}>${proof.id}</a></dd>
          </dl>`
        : waits && address && proof === null
          ? html`<p class="muted">No proof of this address yet.</p>`
          : ''
    }
  </div>`;
}
