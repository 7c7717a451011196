import type { DataConverter } from '@temporalio/common';
import { EncryptionCodec, type CodecKeyring, type CodecOptions } from './codec';

/** The one data converter every Client and Worker of the project uses; workers pass `refuseUnencrypted`. */
export function createDataConverter(keyring: CodecKeyring, options: CodecOptions = {}): DataConverter {
  return {
    payloadCodecs: [new EncryptionCodec(keyring, options)],
    failureConverterPath: require.resolve('./failure-converter'),
  };
}
