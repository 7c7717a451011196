/**
 * `tx/create`: idempotency on transactionRef (a claim per reference, the same body answers the same transaction),
 * beneficiary resolution by address, personal data, the status jump, and the completion of a notified deposit's
 * INCOMPLETE message (notify.ts).
 */
import { randomUUID } from 'node:crypto';
import type { Access } from '../auth/access';
import { badRequest, NetworkError, notAdmin, notFound } from '../errors';
import { findOwners, pickOwner } from '../address-book';
import { customerDid } from './customers';
import { addOwners, type PiiEntry } from '../pii-store/store';
import { OPERATOR_DID } from '../operator';
import type { Row, TransactionCore } from './core';
import { record } from './history';
import { assetDecimals } from './assets';
import { classify, present } from '../jurisdictions/classify';
import { lookupAsset, parseCreateRequest, requestHash, type Transaction } from './model';
import { completeIncomplete, incompleteFor } from './notify';
import { checkCids, cidLeaves, hostedEncrypt, storeHosted } from './personal-data';
import {
  claimTransactionRef,
  completeTransactionRefClaim,
  insertTransaction,
  readTransactionRefClaim,
  releaseTransactionRefClaim,
} from './store';

const STALE_CLAIM_SECONDS = 60;

export async function createTransaction(core: TransactionCore, access: Access, body: unknown): Promise<Transaction> {
  const req = parseCreateRequest(body);
  const originator = req.originatorVASPdid;
  if (!access.exists(originator)) throw notFound(`VASP ${originator} not found`);
  if (!access.vasps().includes(originator)) {
    throw notAdmin(`User ${access.userDid} is not allowed to create transactions for VASP ${originator}`);
  }
  if (access.isGateway(originator)) {
    throw badRequest(
      'NotabeneTransactionError',
      `Outgoing transfers from a parent (gateway) VASP are not allowed: originatorVASPdid ${originator} has subsidiaries; ` +
        'send from one of its nested VASPs',
    );
  }

  if (req.transactionRef !== undefined) {
    const existing = await claimRef(core, originator, req.transactionRef, requestHash(req));
    if (existing) return existing;
  }
  try {
    return await doCreate(core, access, req);
  } catch (e) {
    if (req.transactionRef !== undefined) {
      await releaseTransactionRefClaim(core.pool, originator, req.transactionRef).catch((err: unknown) =>
        core.logger.warn({ err }, 'could not release a transactionRef claim'),
      );
    }
    throw e;
  }
}

/**
 * Claims `ref` for this request. Returns the finished transaction when an earlier request with the same body completed
 * it; throws 422 when the earlier request had another body (a reused reference, never a retry); throws 409 while
 * another request holds the claim; returns undefined when this request now owns it.
 */
async function claimRef(
  core: TransactionCore,
  originator: string,
  ref: string,
  hash: string,
): Promise<Transaction | undefined> {
  if (await claimTransactionRef(core.pool, originator, ref, hash, STALE_CLAIM_SECONDS)) return undefined;
  const claim = await readTransactionRefClaim(core.pool, originator, ref);
  if (claim?.request_hash && claim.request_hash !== hash) {
    throw new NetworkError(
      422,
      'NotabeneTransactionValidationError',
      `transactionRef: ${ref} was already used for a transaction with different fields; a retry must repeat the same request, a new transaction needs a new transactionRef`,
    );
  }
  const id = claim?.transaction_id;
  if (id) {
    const row = await core.load(core.pool, id);
    if (row) return row.body;
  }
  throw new NetworkError(
    409,
    'ConflictError',
    `transactionRef ${ref} is still being processed; retry shortly to get the transaction`,
  );
}

async function doCreate(
  core: TransactionCore,
  access: Access,
  req: ReturnType<typeof parseCreateRequest>,
): Promise<Transaction> {
  const originator = req.originatorVASPdid;
  const destination = req.blockchain.destination;
  const owners = await findOwners(core.pool, lookupAsset(req.assetText), destination);
  let beneficiary = req.beneficiaryVASPdid;
  let beneficiaryName = req.beneficiaryVASPname;
  if (!beneficiary) {
    const owner = pickOwner(owners);
    if (owner) {
      beneficiary = owner.vaspDid;
      beneficiaryName ??= owner.vaspName;
    }
  }
  const known = beneficiary ? await core.vaspName(beneficiary) : undefined;
  if (known !== undefined) beneficiaryName ??= known;
  // The type the network stores: the same classification as /tx/validate/full's (sandbox/jurisdictions).
  const { type } = await classify(core.pool, {
    originatorVASPdid: originator,
    beneficiaryVASPdid: beneficiary,
    asset: req.assetText,
    amount: req.transactionAmount,
    decimals: req.transactionAssetDecimals,
    customAssetPrice: req.customAssetPrice,
    destination,
    present: present(req),
    hasBeneficiaryProof: req.beneficiaryProof !== undefined,
  });

  // Personal data: CIDs (or inline encrypted strings) from the caller, or plain IVMS101 the service encrypts (hosted).
  let pii: Record<string, unknown> | undefined;
  let piiMode: Row['pii_mode'] = 'none';
  let hostedEntries: PiiEntry[] | undefined;
  if (req.pii) {
    await checkCids(core, access.vasps(), req.pii);
    pii = req.pii;
    piiMode = 'client';
  } else if (req.originator || req.beneficiary) {
    hostedEntries = await hostedEncrypt(core, originator, beneficiary, {
      originator: req.originator,
      beneficiary: req.beneficiary,
    });
    piiMode = 'hosted';
  }

  const now = new Date().toISOString();
  const tx: Transaction = {
    id: randomUUID(),
    status: 'NEW',
    transactionType: type,
    ...(req.transactionRef !== undefined && { transactionRef: req.transactionRef }),
    transactionAsset: req.assetText,
    transactionAmount: req.transactionAmount,
    transactionAssetDecimals: req.transactionAssetDecimals ?? assetDecimals(req.assetText),
    chargedQuantity: 1,
    amountInLocalCurrency: null,
    originatorDid: customerDid(req.originatorDid, originator, req.originatorRef),
    beneficiaryDid: customerDid(req.beneficiaryDid, beneficiary, req.beneficiaryRef),
    ...(req.originatorRef !== undefined && { originatorRef: req.originatorRef }),
    ...(req.beneficiaryRef !== undefined && { beneficiaryRef: req.beneficiaryRef }),
    originatorVASPdid: originator,
    ...(beneficiary && { beneficiaryVASPdid: beneficiary }),
    ...(beneficiaryName !== undefined && { beneficiaryVASPname: beneficiaryName }),
    isTest: true,
    transactionBlockchainInfo: req.blockchain,
    ...(req.protocol !== undefined && { protocol: req.protocol }),
    ...(req.notificationEmail !== undefined && { notificationEmail: req.notificationEmail }),
    ...(req.originatorProof !== undefined && { originatorProof: req.originatorProof }),
    ...(req.beneficiaryProof !== undefined && { beneficiaryProof: req.beneficiaryProof }),
    ...(req.blockchainTransactionTimestamp !== undefined && {
      blockchainTransactionTimestamp: req.blockchainTransactionTimestamp,
    }),
    ...(pii && { pii }),
    ...(req.encrypted !== undefined && { ivms101Encrypted: req.encrypted }),
    actions: [],
    createdAt: now,
    updatedAt: now,
  };
  record(tx, access.userDid, 'create', '', 'NEW');
  // The status jump: the call returns the furthest status it could reach.
  if (known !== undefined) {
    record(tx, access.userDid, 'approve', 'automatic: the beneficiary VASP is in the directory', 'SENT');
    // Automatic confirmation follows the `autoconfirm` setting, which a gateway holds for its subsidiaries.
    if (owners.some((o) => o.vaspDid === beneficiary) && (await core.autoconfirm(beneficiary!))) {
      record(
        tx,
        OPERATOR_DID,
        'confirm',
        'automatic: the destination address is in the beneficiary VASP address book',
        'ACK',
      );
    }
  }

  return core.inTransaction(async (client) => {
    // Hosted personal data is stored with the row that refers to it: a create that fails leaves no items behind.
    if (hostedEntries) {
      pii = await storeHosted(client, originator, beneficiary, hostedEntries);
      tx.pii = pii;
    }
    // A deposit the beneficiary already reported (tx/notify): this message completes its INCOMPLETE one.
    const incomplete = await incompleteFor(client, tx);
    let saved = tx;
    if (incomplete) {
      saved = await completeIncomplete(client, incomplete.body, tx, { transactionRef: req.transactionRef, piiMode });
    } else {
      await insertTransaction(client, tx, {
        transactionRef: req.transactionRef,
        originator,
        beneficiary,
        asset: req.assetText,
        amount: req.transactionAmount,
        piiMode,
        createdAt: now,
      });
    }
    if (req.transactionRef !== undefined)
      await completeTransactionRefClaim(client, originator, req.transactionRef, saved.id);
    if (pii && beneficiary) await addOwners(client, cidLeaves(pii), originator, beneficiary);
    await core.emit(client, { tx: saved, previousStatus: incomplete ? 'INCOMPLETE' : null, change: 'create' });
    return saved;
  });
}
