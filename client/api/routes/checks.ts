import type { FastifyInstance } from 'fastify';
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { Type } from 'typebox';
import { NotFoundError } from '../../../lib/errors';
import { connectivityCheck } from '../../../workflows';
import { workflowIds } from '../../../lib/temporal/workflow-ids';
import { access } from '../auth/roles';

const Started = Type.Object({ workflowId: Type.String(), runId: Type.String() });
const Result = Type.Object({
  workflowId: Type.String(),
  status: Type.String(),
  result: Type.Optional(Type.Object({ checkedAt: Type.String(), userDid: Type.String(), vasps: Type.Array(Type.String()) })),
});

/** Operator checks: start the connectivity check workflow and read its outcome. */
export function checkRoutes(app: FastifyInstance, deps: { temporal: Client; taskQueue: string }) {
  app.post(
    '/v1/checks/connectivity',
    { config: { roles: access.operate }, schema: { tags: ['operations'], summary: 'Start a connectivity check against the network', response: { 202: Started } } },
    async (_request, reply) => {
      const handle = await deps.temporal.workflow.start(connectivityCheck, {
        taskQueue: deps.taskQueue,
        workflowId: workflowIds.connectivityCheck(new Date()),
      });
      return reply.code(202).send({ workflowId: handle.workflowId, runId: handle.firstExecutionRunId });
    },
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
    async (request) => {
      const { workflowId } = request.params as { workflowId: string };
      const handle = deps.temporal.workflow.getHandle<typeof connectivityCheck>(workflowId);
      try {
        const { status } = await handle.describe();
        if (status.name !== 'COMPLETED') return { workflowId, status: status.name };
        return { workflowId, status: status.name, result: await handle.result() };
      } catch (e) {
        if (e instanceof WorkflowNotFoundError) throw new NotFoundError(`no connectivity check ${workflowId}`, { field: 'workflowId' });
        throw e;
      }
    },
  );
}
