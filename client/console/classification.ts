// A transfer's classification by the Travel Rule's thresholds (POST /v1/transfers/validate, and the `classification`
// GET /v1/transfers/:id stores with the transfer): its type, what is missing, both sides' thresholds and the price used.
// The types copy the fields of jurisdictions/types.ts (TransferValidationResult) the console shows: it imports nothing
// of the server. Every field is read defensively, so an older API's answer without some of them still renders.
import { html } from './ui';

export interface AppliedThreshold {
  jurisdiction: string;
  currency: string;
  threshold: number;
  /** The transfer's value in `currency`; absent when it could not be priced. */
  amount?: number;
  source: string;
  confidence: string;
}

export interface PriceUsed {
  value?: number;
  currency?: string;
  price?: number;
  priceCurrency?: string;
  source?: string;
  at?: string;
  /** Why there is no price. */
  unknown?: string;
}

export interface ValidationIssue {
  code: string;
  message: string;
  field?: string;
}

/** TransferValidationResult as the console reads it; a stored classification may carry only some of it. */
export interface ClassificationView {
  isValid?: boolean;
  type?: string;
  beneficiaryAddressType?: string;
  addressSource?: string;
  beneficiaryVASPname?: string;
  errors?: string[];
  warnings?: string[];
  details?: { errors?: ValidationIssue[]; warnings?: ValidationIssue[] };
  thresholds?: { own?: AppliedThreshold; counterparty?: AppliedThreshold };
  price?: PriceUsed;
  /** Stored with a transfer: `all`, or the IVMS101 paths whose data was sent (below the threshold, only the required). */
  personalData?: 'all' | string[];
  /** Stored with a transfer to a self-hosted wallet: the wallet whose ownership proofs the transfer page shows. */
  beneficiaryWallet?: { asset: string; address: string };
}

const TYPE_TEXT: Record<string, string> = {
  TRAVELRULE: 'Travel Rule transfer: the personal data is sent',
  BELOW_THRESHOLD: 'below the threshold',
  NON_CUSTODIAL: "to a self-hosted wallet (the customer's own)",
  UNKNOWN: 'could not be classified',
};

const money = (n: number | undefined, currency: string | undefined) =>
  n === undefined || n === null || !Number.isFinite(n)
    ? '—'
    : `${n.toLocaleString(undefined, { maximumFractionDigits: 2 })} ${currency ?? ''}`.trim();

function ThresholdRow({ side, t }: { side: string; t: AppliedThreshold | undefined }) {
  if (!t)
    return html`<tr data-side=${side}>
      <th scope="row">${side}</th>
      <td colspan="5" class="muted">not given</td>
    </tr>`;
  const above = t.amount !== undefined && t.amount >= t.threshold;
  return html`<tr data-side=${side}>
    <th scope="row">${side}</th>
    <td class="jurisdiction">${t.jurisdiction}</td>
    <td class="amount">${money(t.amount, t.currency)}${t.amount === undefined ? ' (not priced)' : ''}</td>
    <td class="threshold">${above ? '≥' : t.amount === undefined ? '?' : '<'} ${money(t.threshold, t.currency)}</td>
    <td class="source">
      ${/^https?:\/\//.test(t.source) ? html`<a href=${t.source} target="_blank" rel="noopener">${t.source}</a>` : t.source}
    </td>
    <td class="confidence"><span class="badge ${t.confidence === 'secondary' ? 'warn' : ''}">${t.confidence}</span></td>
  </tr>`;
}

function PriceLine({ price }: { price: PriceUsed | undefined }) {
  if (!price) return html`<p id="classification-price" class="muted">No price given.</p>`;
  if (price.unknown !== undefined)
    return html`<p id="classification-price">Price unknown: <strong>${price.unknown}</strong></p>`;
  const how = [
    `${money(price.price, price.priceCurrency)} a unit`,
    price.source ?? 'source not given',
    price.at ? `as of ${new Date(price.at).toLocaleString()}` : '',
  ].filter(Boolean);
  const value = money(price.value, price.currency);
  return html`<p id="classification-price">Priced at <strong>${value}</strong>${` (${how.join(', ')})`}</p>`;
}

/** Issues as structured details when the answer has them, else the plain strings. */
function Issues({
  id,
  title,
  issues,
  plain,
}: {
  id: string;
  title: string;
  issues?: ValidationIssue[];
  plain?: string[];
}) {
  const items = issues?.length
    ? issues.map(
        (i) =>
          html`<li>
            <code>${i.code}</code
            >${` ${i.message}`}${i.field && !i.message.includes(i.field) ? html` — <code class="field">${i.field}</code>` : ''}
          </li>`,
      )
    : (plain ?? []).map((s) => html`<li>${s}</li>`);
  if (!items.length) return '';
  return html`<div id=${id}>
    <h4>${title}</h4>
    <ul>
      ${items}
    </ul>
  </div>`;
}

const personalDataText = (p: 'all' | string[]) =>
  p === 'all'
    ? 'Personal data sent: all of it, as given.'
    : p.length
      ? `Personal data sent: only what the rules require (${p.join(', ')}).`
      : 'Personal data sent: none.';

const addressText = (v: ClassificationView) =>
  `Beneficiary address: ${v.beneficiaryAddressType}${v.addressSource ? ` (from ${v.addressSource})` : ''}${v.beneficiaryVASPname ? ` · ${v.beneficiaryVASPname}` : ''}`;

/** The classification panel: `title` says whether it is a pre-flight check or what was stored with the transfer. */
export function ClassificationPanel({ view, title }: { view: ClassificationView | null | undefined; title: string }) {
  if (!view) return '';
  const type = view.type ?? 'UNKNOWN';
  const kind = type === 'UNKNOWN' || view.isValid === false ? 'bad' : type === 'TRAVELRULE' ? '' : 'ok';
  return html`<div class="panel" id="classification">
    <h3>${title}</h3>
    <p>
      <span class="badge ${kind}" id="classification-type" data-type=${type}>${type}</span>
      ${' '}${TYPE_TEXT[type] ?? ''}
      ${view.isValid === undefined ? '' : html` · <strong id="classification-valid">${view.isValid ? 'complete' : 'not ready to send'}</strong>`}
    </p>
    ${view.beneficiaryAddressType ? html`<p class="muted" id="classification-address">${addressText(view)}</p>` : ''}
    <${Issues}
      id="classification-errors"
      title="Missing (your jurisdiction requires)"
      issues=${view.details?.errors}
      plain=${view.errors}
    />
    <${Issues}
      id="classification-warnings"
      title="Warnings (the counterparty's jurisdiction)"
      issues=${view.details?.warnings}
      plain=${view.warnings}
    />
    <table id="classification-thresholds">
      <thead>
        <tr>
          <th></th>
          <th>Jurisdiction</th>
          <th>Amount</th>
          <th>Threshold</th>
          <th>Source</th>
          <th>Confidence</th>
        </tr>
      </thead>
      <tbody>
        <${ThresholdRow} side="own" t=${view.thresholds?.own} />
        <${ThresholdRow} side="counterparty" t=${view.thresholds?.counterparty} />
      </tbody>
    </table>
    <${PriceLine} price=${view.price} />
    ${view.personalData === undefined ? '' : html`<p id="classification-personal-data">${personalDataText(view.personalData)}</p>`}
  </div>`;
}
