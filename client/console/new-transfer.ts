// A new outgoing transfer: as the operator types, the form's values go to POST /v1/transfers/validate (debounced) and
// the page shows how the transfer is classified, what is missing, both sides' thresholds and the price used; Send
// starts it with POST /v1/transfers.
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, ApiError, canOperate, rolesText, type ConsoleConfig, type Session } from './api';
import { ClassificationPanel, type ClassificationView } from './classification';
import { errorText, html, Message, valueOf } from './ui';

/** How long the form must rest before it is validated: one request per pause in typing, not one per key. */
export const VALIDATE_DEBOUNCE_MS = 400;

type Form = Record<string, string>;

const FIELDS: [name: string, label: string, placeholder?: string][] = [
  ['beneficiaryVASPdid', 'Beneficiary VASP (DID, if known)', 'did:ethr:0x…'],
  ['transactionAsset', 'Asset', 'ETH'],
  ['transactionAmount', 'Amount (base units: wei, satoshi…)', '1000000000000000000'],
  ['destination', 'Destination address', '0x…'],
  ['originatorLastName', "Originator's last name (or legal name)"],
  ['originatorFirstName', "Originator's first name"],
  ['originatorAccount', "Originator's account number"],
  ['originatorTown', "Originator's town"],
  ['originatorCountry', "Originator's country (ISO 3166, e.g. DE)"],
  ['beneficiaryLastName', "Beneficiary's last name (or legal name)"],
  ['beneficiaryFirstName', "Beneficiary's first name"],
  ['beneficiaryAccount', "Beneficiary's account number"],
];

const trimmed = (f: Form, k: string) => (f[k] ?? '').trim();

function person(last: string, first: string, address?: Record<string, unknown>) {
  return {
    naturalPerson: {
      name: [
        {
          nameIdentifier: [
            { primaryIdentifier: last, ...(first && { secondaryIdentifier: first }), nameIdentifierType: 'LEGL' },
          ],
        },
      ],
      ...(address && { geographicAddress: [address] }),
    },
  };
}

/** The body of POST /v1/transfers (and /validate): what the form holds, personal data as far as it is filled in. */
export function transferBody(f: Form): Record<string, unknown> {
  const country = trimmed(f, 'originatorCountry').toUpperCase();
  const address = country
    ? { addressType: 'HOME', country, ...(trimmed(f, 'originatorTown') && { townName: trimmed(f, 'originatorTown') }) }
    : undefined;
  const originatorName = trimmed(f, 'originatorLastName');
  const beneficiaryName = trimmed(f, 'beneficiaryLastName');
  return {
    transactionAsset: trimmed(f, 'transactionAsset'),
    transactionAmount: trimmed(f, 'transactionAmount'),
    originatorVASPdid: trimmed(f, 'originatorVASPdid'),
    ...(trimmed(f, 'beneficiaryVASPdid') && { beneficiaryVASPdid: trimmed(f, 'beneficiaryVASPdid') }),
    transactionBlockchainInfo: { destination: trimmed(f, 'destination') },
    // A party goes only once it has a person: the API takes partial personal data, but a party without persons is
    // malformed IVMS101 (an account number typed before the name shows that refusal until the name is there).
    ...((originatorName || trimmed(f, 'originatorAccount')) && {
      originator: {
        originatorPersons: originatorName ? [person(originatorName, trimmed(f, 'originatorFirstName'), address)] : [],
        ...(trimmed(f, 'originatorAccount') && { accountNumber: [trimmed(f, 'originatorAccount')] }),
      },
    }),
    ...((beneficiaryName || trimmed(f, 'beneficiaryAccount')) && {
      beneficiary: {
        beneficiaryPersons: beneficiaryName ? [person(beneficiaryName, trimmed(f, 'beneficiaryFirstName'))] : [],
        ...(trimmed(f, 'beneficiaryAccount') && { accountNumber: [trimmed(f, 'beneficiaryAccount')] }),
      },
    }),
  };
}

const REQUIRED = ['originatorVASPdid', 'transactionAsset', 'transactionAmount', 'destination'];

export function NewTransfer({ session, config }: { session: Session; config: ConsoleConfig }) {
  const [form, setForm] = useState<Form>({
    originatorVASPdid: config.subsidiaryDids[0] ?? '',
    transactionAsset: 'ETH',
  });
  const [result, setResult] = useState<ClassificationView | null>(null);
  const [checkError, setCheckError] = useState('');
  const [checking, setChecking] = useState(false);
  const [checks, setChecks] = useState(0);
  const [sendError, setSendError] = useState('');
  const [busy, setBusy] = useState(false);
  const latest = useRef(0);
  const missing = REQUIRED.filter((k) => !trimmed(form, k));
  const body = transferBody(form);
  const key = JSON.stringify(body);

  useEffect(() => {
    if (missing.length) {
      latest.current += 1;
      setResult(null);
      setCheckError('');
      setChecking(false);
      return undefined;
    }
    const n = ++latest.current;
    setChecking(true);
    const timer = setTimeout(async () => {
      try {
        const answer = await api<ClassificationView>(session, 'POST', '/v1/transfers/validate', body);
        if (n !== latest.current) return;
        setResult(answer);
        setCheckError('');
      } catch (e) {
        if (n !== latest.current) return;
        setResult(null);
        setCheckError(
          e instanceof ApiError && e.status === 404
            ? 'This API does not validate transfers before they are sent (no POST /v1/transfers/validate).'
            : `Not checked: ${errorText(e)}`,
        );
      } finally {
        if (n === latest.current) {
          setChecking(false);
          setChecks((c) => c + 1);
        }
      }
    }, VALIDATE_DEBOUNCE_MS);
    return () => clearTimeout(timer);
  }, [key, session]);

  const send = async () => {
    setBusy(true);
    try {
      const started = await api<{ workflowId: string }>(session, 'POST', '/v1/transfers', body, {
        'idempotency-key': `console-${crypto.randomUUID()}`,
      });
      location.hash = `#/transfer/${encodeURIComponent(started.workflowId)}`;
    } catch (e) {
      setSendError(errorText(e));
    } finally {
      setBusy(false);
    }
  };

  const input = (name: string, label: string, placeholder = '') =>
    html`<label
      >${label}<input
        id=${`nt-${name}`}
        name=${name}
        value=${form[name] ?? ''}
        placeholder=${placeholder}
        autocomplete="off"
        onInput=${(e: Event) => setForm({ ...form, [name]: valueOf(e) })}
    /></label>`;

  return html`<section aria-labelledby="new-transfer-title">
    <h2 id="new-transfer-title">New outgoing transfer</h2>
    ${canOperate(session) ? '' : html`<${Message} kind="info">Your roles (${rolesText(session)}) may not check or send transfers: the operator role may.<//>`}
    <div class="columns">
      <form id="new-transfer-form" class="panel" onSubmit=${(e: Event) => e.preventDefault()}>
        <label
          >Originating subsidiary<select
            id="nt-originatorVASPdid"
            value=${form.originatorVASPdid}
            onChange=${(e: Event) => setForm({ ...form, originatorVASPdid: valueOf(e) })}
          >
            ${config.subsidiaryDids.map((d) => html`<option value=${d}>${d}</option>`)}
          </select></label
        >
        ${FIELDS.map(([name, label, placeholder]) => input(name, label, placeholder))}
        <div class="row" style="margin-top:.6rem">
          <button id="nt-send" class="primary" type="button" disabled=${busy || missing.length > 0} onClick=${send}>
            Send transfer
          </button>
        </div>
        <${Message}>${sendError}<//>
      </form>
      <div id="new-transfer-check" aria-live="polite" data-checks=${checks} data-checking=${checking ? 'yes' : 'no'}>
        ${missing.length ? html`<p class="muted" id="classification-pending">Fill in ${missing.join(', ')} to see how the transfer is classified.</p>` : ''}
        ${checking ? html`<p class="muted">Checking…</p>` : ''}
        <div id="classification-error"><${Message}>${checkError}<//></div>
        <${ClassificationPanel} view=${result} title="Before sending: classification" />
      </div>
    </div>
  </section>`;
}
