import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import type { Client } from '@temporalio/client';
import type { Pool } from 'pg';
import { Type } from 'typebox';
import { pingDatabase } from '../../../db/pool';
import { pingTemporal } from '../../temporal';

const Check = Type.Object({
  ok: Type.Boolean(),
  error: Type.Optional(Type.String({ description: 'unreachable; the detail is in the API log' })),
});
const Health = Type.Object({ ok: Type.Boolean(), temporal: Check, database: Check });

/**
 * One check. A failure answers a fixed word: the error's text can name hosts, ports, users or database names, which an
 * unauthenticated probe must not learn; the detail goes to the log.
 */
async function probe(
  name: string,
  log: FastifyBaseLogger,
  fn: () => Promise<unknown>,
  timeoutMs = 3000,
): Promise<{ ok: boolean; error?: string }> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      fn(),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
      }),
    ]);
    return { ok: true };
  } catch (e) {
    log.warn({ check: name, err: { message: (e as Error).message.split('\n')[0] } }, 'health check failed');
    return { ok: false, error: 'unreachable' };
  } finally {
    clearTimeout(timer);
  }
}

/** `GET /healthz`: 200 when Temporal and the database both answer, 503 (with which one failed) otherwise. */
export function healthRoutes(app: FastifyInstance, deps: { temporal: Client; pool: Pool }) {
  app.get(
    '/healthz',
    {
      config: { public: 'the health probe of load balancers and orchestrators; answers fixed words only' },
      schema: {
        tags: ['platform'],
        summary: 'Reachability of Temporal and the database',
        response: { 200: Health, 503: Health },
      },
    },
    async (request, reply) => {
      const [temporal, database] = await Promise.all([
        probe('temporal', request.log, () => pingTemporal(deps.temporal)),
        probe('database', request.log, () => pingDatabase(deps.pool)),
      ]);
      const ok = temporal.ok && database.ok;
      return reply.code(ok ? 200 : 503).send({ ok, temporal, database });
    },
  );
}
