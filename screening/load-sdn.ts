/**
 * Loading a sanctions list from OFAC's SDN files (sdn.csv and, optionally, alt.csv), streamed into the database as
 * one replacement of the list (screening/store.ts). A malformed row is a ValidationError naming the file and line.
 */
import { createReadStream } from 'node:fs';
import { parse } from 'csv-parse';
import type { Pool } from 'pg';
import { ValidationError } from '../lib/errors';
import { systemPrincipal, type Principal } from '../lib/principal';
import { parseAltRow, parseSdnRow, type SdnAlias, type SdnEntry } from './sdn-csv';
import { replaceSanctionsList, type LoadResult } from './store';

async function* csvRows(path: string): AsyncGenerator<{ row: string[]; line: number }> {
  const parser = createReadStream(path).pipe(
    parse({ relax_column_count: true, relax_quotes: true, skip_empty_lines: true, trim: false, bom: true }),
  );
  let line = 0;
  for await (const row of parser as AsyncIterable<string[]>) {
    line += 1;
    // OFAC's files end with a single end-of-file marker character on its own line.
    if (row.length === 1 && row[0]!.trim().length <= 1) continue;
    yield { row, line };
  }
}

async function* sdnEntries(path: string): AsyncGenerator<SdnEntry> {
  for await (const { row, line } of csvRows(path)) {
    let entry: SdnEntry;
    try {
      entry = parseSdnRow(row, line);
    } catch (e) {
      throw new ValidationError('sdnFile', (e as Error).message);
    }
    yield entry;
  }
}

async function* altEntries(path: string): AsyncGenerator<SdnAlias & { line: number }> {
  for await (const { row, line } of csvRows(path)) {
    let alias: SdnAlias;
    try {
      alias = parseAltRow(row, line);
    } catch (e) {
      throw new ValidationError('altFile', (e as Error).message);
    }
    yield { ...alias, line };
  }
}

/**
 * Replaces a sanctions list with the content of an sdn.csv (and optionally alt.csv) file, streaming, in one
 * transaction: screening never sees half a list, and a file with a malformed row changes nothing. Audited under `by`
 * (default: the loader itself, for the demo's and the tests' seeding).
 */
export async function loadSdnList(
  pool: Pool,
  opts: { list: string; sdnPath: string; altPath?: string; by?: Principal },
): Promise<LoadResult> {
  const by = opts.by ?? systemPrincipal('sanctions-loader');
  return replaceSanctionsList(
    pool,
    { list: opts.list, source: opts.sdnPath, by },
    sdnEntries(opts.sdnPath),
    opts.altPath ? altEntries(opts.altPath) : undefined,
  );
}
