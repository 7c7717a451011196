import ky from 'ky';

/**
 * POSTs a transfer's outcome (outgoing or incoming) to the internal systems' callback (TRANSFER_CALLBACK_URL). Not
 * retried here: the calling activity is, by Temporal. Failures are ky's errors, for the caller to classify.
 */
export async function postTransferOutcome(
  url: string,
  body: Record<string, unknown>,
  headers: Record<string, string> = {},
): Promise<void> {
  await ky.post(url, { json: body, retry: 0, timeout: 10_000, headers });
}
