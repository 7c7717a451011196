export * from './schema';
export * from './validate';
export * from './flatten';
export * from './encrypt';
