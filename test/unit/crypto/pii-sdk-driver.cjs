// Runs the vendor SDK in plain Node for the Jest tests (see pii-sdk.ts). Answers {id, method, args} messages with
// {id, result} or {id, error}. Only the SDK's local methods are reachable.
const PIIsdk = require('@notabene/pii-sdk').default;

const sdk = new PIIsdk({});
const allowed = new Set(['createKey', 'encryptPII', 'decryptPII', 'flattenPII', 'unflattenPII']);

process.on('message', async ({ id, method, args }) => {
  try {
    if (!allowed.has(method)) throw new Error(`method not allowed: ${method}`);
    const result = await sdk[method](...args);
    process.send({ id, result });
  } catch (error) {
    process.send({ id, error: error && error.message ? error.message : String(error) });
  }
});
process.on('disconnect', () => process.exit(0));
