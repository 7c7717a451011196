import { rmSync } from 'node:fs';
import { Client } from 'pg';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { DatabaseServer } from '../../db/server';

export default async function globalTeardown(): Promise<void> {
  const g = globalThis as unknown as { __testEnv?: TestWorkflowEnvironment; __testDb?: { server: DatabaseServer; url: string } };
  await g.__testEnv?.teardown();
  if (g.__testDb) {
    const name = new URL(g.__testDb.url).pathname.slice(1);
    const admin = new Client({ connectionString: `${g.__testDb.server.serverUrl}/postgres` });
    await admin.connect();
    await admin.query(`drop database if exists "${name}" with (force)`);
    await admin.end();
    await g.__testDb.server.stop();
  }
  if (process.env.TEST_WORKFLOW_BUNDLE) rmSync(process.env.TEST_WORKFLOW_BUNDLE, { force: true });
}
