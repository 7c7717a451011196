// A decision between two choices that a person confirms with a reason the API records: two buttons, then a
// confirmation form naming what is decided and what follows. Deposits (release / return) and wallet proofs
// (approve / reject) use it; each passes its own call and its own texts for a refused role (403) and a thing already
// decided (409). Their pages read the record with useDecidedRecord.
import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useState } from 'preact/hooks';
import { api, ApiError, type Session } from './api';
import { errorText, html, Message, valueOf } from './ui';

export interface DecisionChoice<C extends string> {
  /** Sent to the API as `decision`, and read in the confirm button ("Yes, release"). */
  value: C;
  /** The button's text, and the first word of the confirmation. */
  label: string;
  /** The class of the button that opens the confirmation (tests and styles select on it). */
  buttonClass: string;
  /** The confirm button's look: `primary` for the choice that lets things go on, `danger` for the other. */
  confirmClass: 'primary' | 'danger';
  /** What follows this choice, said after the question; empty when nothing needs saying. */
  consequence: string;
}

export function ConfirmedDecision<C extends string, T>({
  choices,
  subject,
  actionsClass,
  formClass,
  reasonClass,
  maxLength,
  submit,
  doneText,
  forbiddenText,
  conflictText,
  onDone,
}: {
  choices: readonly [DecisionChoice<C>, DecisionChoice<C>];
  /** What is decided, after the choice's label: "<Release> the deposit of ETH to 0x…?" */
  subject: ComponentChildren;
  actionsClass: string;
  formClass: string;
  reasonClass: string;
  /** The API's limit on the reason. */
  maxLength: number;
  submit: (decision: C, reason: string) => Promise<T>;
  doneText: (updated: T, decision: C) => string;
  /** The API refused the caller's role (403); the form stays open with this text. */
  forbiddenText: (apiMessage: string) => string;
  /** Decided meanwhile (409): the form closes and the caller reloads. */
  conflictText: (apiMessage: string) => string;
  onDone: (updated: T | null, text: string) => void;
}) {
  const [deciding, setDeciding] = useState<DecisionChoice<C> | null>(null);
  const [reason, setReason] = useState('');
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  const confirm = async (e: Event) => {
    e.preventDefault();
    if (!deciding) return;
    if (!reason.trim()) return setError('A reason is required: it is recorded with the decision.');
    setBusy(true);
    try {
      const updated = await submit(deciding.value, reason.trim());
      setDeciding(null);
      setReason('');
      setError('');
      onDone(updated, doneText(updated, deciding.value));
    } catch (err) {
      if (err instanceof ApiError && err.status === 403) setError(forbiddenText(err.message));
      else if (err instanceof ApiError && err.status === 409) {
        setDeciding(null);
        onDone(null, conflictText(err.message));
      } else setError(errorText(err));
    } finally {
      setBusy(false);
    }
  };
  if (!deciding)
    return html`<span class=${actionsClass}>
      ${choices.map(
        (c) => html`<button type="button" class=${c.buttonClass} onClick=${() => setDeciding(c)}>${c.label}</button>`,
      )}
    </span>`;
  return html`<form class="panel ${formClass}" onSubmit=${confirm} role="dialog" aria-label="Confirm the decision">
    <p><strong>${deciding.label}</strong> ${subject}? ${deciding.consequence}</p>
    <label
      >Reason<input
        class=${reasonClass}
        maxlength=${maxLength}
        value=${reason}
        onInput=${(e: Event) => setReason(valueOf(e))}
    /></label>
    <${Message}>${error}<//>
    <div class="row" style="margin-top:.6rem">
      <button class="${deciding.confirmClass} confirm" type="submit" disabled=${busy}>Yes, ${deciding.value}</button
      ><button type="button" onClick=${() => setDeciding(null)}>Cancel</button>
    </div>
  </form>`;
}

/**
 * One record read by its API path for a page that decides it: the record, the error reading it, the notice a decision
 * left, `load` to read it again, and the `onDone` a ConfirmedDecision calls (the updated record, or none after a 409:
 * then it is read again).
 */
export function useDecidedRecord<T>(session: Session, path: string) {
  const [record, setRecord] = useState<T | null>(null);
  const [error, setError] = useState('');
  const [notice, setNotice] = useState('');
  const load = useCallback(async () => {
    try {
      setRecord(await api<T>(session, 'GET', path));
      setError('');
    } catch (e) {
      setError(errorText(e));
    }
  }, [session, path]);
  useEffect(() => {
    void load();
  }, [load]);
  const onDone = (updated: T | null, text: string) => {
    setNotice(text);
    if (updated) setRecord(updated);
    else void load();
  };
  return { record, error, notice, load, onDone };
}
