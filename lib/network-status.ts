/** Final statuses of the network's transaction: nothing moves it after these. */
export const FINAL_NETWORK_STATUSES: ReadonlySet<string> = new Set(['ACCEPTED', 'DECLINED', 'REJECTED', 'CANCELLED', 'SAVED']);
