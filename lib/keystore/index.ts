/** Key handling that needs no storage: sealing under the master key, key records, the agent's KEYS. */
export * from './records';
export { parseAgentKeys, type AgentKey } from './agent-keys';
export { keyWrapperFromConfig, LocalKeyWrapper, loadMasterKey, parseMasterKey, type KeyWrapper } from './key-wrapper';
