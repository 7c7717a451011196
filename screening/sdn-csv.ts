/**
 * The OFAC SDN list's CSV format (sdn.csv, no header row): ent_num, SDN_Name, SDN_Type, Program, Title, Call_Sign,
 * Vess_type, Tonnage, GRT, Vess_flag, Vess_owner, Remarks. `-0-` stands for an empty value. Digital-currency addresses
 * appear in Remarks as `Digital Currency Address - XBT 1Abc…;`, which is where the address risk list comes from.
 * The alternate-names file (alt.csv): ent_num, alt_num, alt_type, alt_name, alt_remarks.
 */
export interface SdnEntry {
  entNum: number;
  name: string;
  type: string;
  programs: string[];
  remarks: string;
  addresses: { asset: string; address: string }[];
}

export interface SdnAlias {
  entNum: number;
  name: string;
  type: string;
}

const empty = (v: string | undefined) => (v === undefined || v.trim() === '-0-' ? '' : v.trim());

const ADDRESS = /Digital Currency Address - ([A-Z0-9]+)\s+([^\s;,]+)/g;

/** Digital currency addresses named in an entry's remarks, with OFAC's asset codes (XBT is bitcoin). */
export function addressesInRemarks(remarks: string): { asset: string; address: string }[] {
  // The last address of a remark often ends its sentence: the full stop is not part of it.
  return [...remarks.matchAll(ADDRESS)].map((m) => ({ asset: m[1]!, address: m[2]!.replace(/\.+$/, '') }));
}

/** One sdn.csv row; throws with the column name when the row is not in the format. */
export function parseSdnRow(row: string[], line: number): SdnEntry {
  if (row.length < 12) throw new Error(`line ${line}: expected 12 columns of the SDN format, found ${row.length}`);
  const entNum = Number(empty(row[0]));
  if (!Number.isInteger(entNum) || entNum <= 0)
    throw new Error(`line ${line}: ent_num "${row[0]}" is not a positive integer`);
  const name = empty(row[1]);
  if (!name) throw new Error(`line ${line}: SDN_Name is empty`);
  const remarks = empty(row[11]);
  return {
    entNum,
    name,
    type: empty(row[2]) || 'unknown',
    programs: empty(row[3])
      .split(/\]\s*\[|\s*;\s*/)
      .map((p) => p.replace(/[[\]]/g, '').trim())
      .filter(Boolean),
    remarks,
    addresses: addressesInRemarks(remarks),
  };
}

export function parseAltRow(row: string[], line: number): SdnAlias {
  if (row.length < 4)
    throw new Error(`line ${line}: expected at least 4 columns of the alt.csv format, found ${row.length}`);
  const entNum = Number(empty(row[0]));
  if (!Number.isInteger(entNum) || entNum <= 0)
    throw new Error(`line ${line}: ent_num "${row[0]}" is not a positive integer`);
  const name = empty(row[3]);
  if (!name) throw new Error(`line ${line}: alt_name is empty`);
  return { entNum, name, type: empty(row[2]) || 'aka' };
}

/** OFAC's asset codes differ from the network's tickers for some assets. */
const OFAC_ASSETS: Record<string, string> = { XBT: 'BTC' };
export const networkAsset = (ofacCode: string) => OFAC_ASSETS[ofacCode] ?? ofacCode;
