/** Jurisdictions: the Travel Rule's thresholds and required fields as data, and classifying a transfer by them. */
export { classifyTransfer, missingFields, pathCovers, requiredFields, type TransferFacts } from './classify';
export { jurisdictionTable, rulesOf, rulesOrFatf, type JurisdictionTable } from './rules';
export type * from './types';
