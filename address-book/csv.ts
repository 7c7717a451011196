/** The address CSV the network takes: these columns, this header, one row per address. */
export const CSV_COLUMNS = ['asset', 'address', 'customerRef'] as const;
/** `asset,address,customerRef\n`: the header the network requires. */
export const CSV_HEADER_BYTES = Buffer.byteLength(`${CSV_COLUMNS.join(',')}\n`);
