/** What screening tells the incoming-transfer workflow. Workflow-safe: types only. */

export interface ScreeningOutcome {
  screenedNames: number;
  nameHits: { list: string; entNum: number; matchedName: string; score: number }[];
  addressHits: { list: string; asset: string; entNum: number | null }[];
  /**
   * Why names were not screened; `undecryptable` (no key of ours opens it) and `unreadable` (it opens but does not
   * parse) hold the transfer for a person like a hit does.
   */
  skipped?: 'screened-by-network' | 'no-personal-data' | 'undecryptable' | 'unreadable';
  /** For `undecryptable`/`unreadable` when an error says why: its kind and rule, free of personal data. */
  unreadableReason?: string;
}
