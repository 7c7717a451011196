/** The SQL of the address book: the addresses (addresses.ts), the CSV uploads and their rejected rows (uploads.ts), the e-mail outbox (outbox.ts). */
export * from './addresses';
export * from './uploads';
export * from './outbox';
