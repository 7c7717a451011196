import type { DataConverter } from '@temporalio/common';
import { EncryptionCodec, type CodecKeyring } from './codec';

/** The one data converter every Client and Worker of the project uses. */
export function createDataConverter(keyring: CodecKeyring): DataConverter {
  return {
    payloadCodecs: [new EncryptionCodec(keyring)],
    failureConverterPath: require.resolve('./failure-converter'),
  };
}
