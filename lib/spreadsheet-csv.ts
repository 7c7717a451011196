/**
 * CSV that people open in a spreadsheet. A cell that starts with `=`, `+`, `-`, `@`, a tab or a carriage return is
 * read as a formula by Excel, LibreOffice and Google Sheets, and a formula can fetch URLs or run commands with the
 * reader's rights; audit rows, names and addresses come from callers and counterparties. OWASP's rule for CSV
 * injection: such a cell gets a leading `'`, which the spreadsheet shows as text and does not evaluate (the quote is
 * visible to a program that reads the file, which is the price of the rule). Every CSV written for people goes
 * through here; CSV sent to the network (address-book uploads) is data, not for a spreadsheet, and does not.
 */
const FORMULA_START = /^[=+\-@\t\r]/;

/** One cell's text, with a leading `'` when a spreadsheet would take it for a formula. */
export function spreadsheetSafe(cell: string): string {
  return FORMULA_START.test(cell) ? `'${cell}` : cell;
}

/** csv-stringify's option that applies spreadsheetSafe to every string cell (numbers are written as numbers). */
export const SPREADSHEET_SAFE = { cast: { string: spreadsheetSafe } } as const;
