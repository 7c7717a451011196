/**
 * Name normalisation for sanctions screening. Lists and customers spell names differently ("SMITH, John A.",
 * "john smith", "Jöhn Smith-Jones"), so both sides go through the same steps: fold case and diacritics, turn
 * punctuation into spaces, drop honorifics, and sort the tokens so word order ("LAST, First" vs "First Last") does not
 * change the score. Trigram similarity then measures what is left.
 */
const HONORIFICS = new Set(['MR', 'MRS', 'MS', 'MISS', 'DR', 'PROF', 'SIR', 'HAJI', 'SHEIKH', 'SHAIKH']);

export function normalizeName(name: string): string {
  const folded = name
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toUpperCase()
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();
  const tokens = folded.split(/\s+/).filter((t) => t && !HONORIFICS.has(t));
  return tokens.sort().join(' ');
}
