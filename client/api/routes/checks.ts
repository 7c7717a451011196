import type { FastifyInstance } from 'fastify';
import type { Client } from '@temporalio/client';
import { Type } from 'typebox';
import { connectivityCheckState, startConnectivityCheck } from '../../checks/connectivity';
import { access } from '../auth/roles';

const Started = Type.Object({ workflowId: Type.String(), runId: Type.String() });
const Result = Type.Object({
  workflowId: Type.String(),
  status: Type.String(),
  result: Type.Optional(
    Type.Object({ checkedAt: Type.String(), userDid: Type.String(), vasps: Type.Array(Type.String()) }),
  ),
});

/** Operator checks: start the connectivity check workflow and read its outcome. */
export function checkRoutes(app: FastifyInstance, deps: { temporal: Client; taskQueue: string }) {
  app.post(
    '/v1/checks/connectivity',
    {
      config: { roles: access.operate },
      schema: {
        tags: ['operations'],
        summary: 'Start a connectivity check against the network',
        response: { 202: Started },
      },
    },
    async (_request, reply) => reply.code(202).send(await startConnectivityCheck(deps)),
  );

  app.get(
    '/v1/checks/connectivity/:workflowId',
    {
      config: { roles: access.read },
      schema: {
        tags: ['operations'],
        summary: 'Status and result of a connectivity check',
        params: Type.Object({ workflowId: Type.String({ pattern: '^connectivity-check-' }) }),
        response: { 200: Result },
      },
    },
    async (request) => connectivityCheckState(deps.temporal, (request.params as { workflowId: string }).workflowId),
  );
}
