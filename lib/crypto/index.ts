export * from './didkey';
export { Keyring } from './keyring';
export { LocalDidKey, localDidKey, remoteDidKey, type RemoteDidKey } from './prepared-keys';
export { decryptJwe, encryptJwe, JWE_ENC, JWE_TYP, type DecryptedJwe, type GeneralJwe, type JweRecipient } from './jwe';
export { KEY_AGREEMENT_ALG } from './ecdh-1pu';
export {
  decryptPiiValue,
  encryptPiiValue,
  piiRecipients,
  PII_MESSAGE_ID_PREFIX,
  PII_MESSAGE_TYPE,
  type DecryptedPiiValue,
  type PiiMessage,
} from './pii-message';
