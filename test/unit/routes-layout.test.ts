/**
 * API routes translate HTTP to a call and back: starting, signalling, updating and querying workflows happens in
 * client/<capability>/ modules. So a route imports nothing of workflows/, imports @temporalio/client for its types only
 * (the Client it hands on), and calls no Temporal client API itself.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';

const ROOT = join(__dirname, '..', '..');
const ROUTES = join(ROOT, 'client', 'api', 'routes');

/** The Client's parts a route would use to reach Temporal itself: `temporal.workflow.start(…)`, `.schedule.…`, `.workflowService.…`. */
const TEMPORAL_APIS = new Set(['workflow', 'workflowService', 'schedule']);

/** What in a route's source breaks the rule, one line each (empty when it holds). */
export function routeViolations(text: string): string[] {
  const found: string[] = [];
  const source = ts.createSourceFile('route.ts', text, ts.ScriptTarget.Latest, true);
  const check = (specifier: string, typeOnly: boolean) => {
    if (/(^|\/)workflows(\/|$)/.test(specifier))
      found.push(`imports ${specifier}: workflows/ belong to client/<capability>/ modules`);
    if (specifier === '@temporalio/client' && !typeOnly)
      found.push('imports @temporalio/client for more than types: call a client/<capability>/ module');
  };
  const visit = (node: ts.Node) => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      const clause = node.importClause;
      const named =
        clause?.namedBindings && ts.isNamedImports(clause.namedBindings) ? clause.namedBindings.elements : undefined;
      const typeOnly =
        !!clause &&
        (clause.isTypeOnly || (!clause.name && !!named && named.length > 0 && named.every((e) => e.isTypeOnly)));
      check(node.moduleSpecifier.text, typeOnly);
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      check(node.moduleSpecifier.text, node.isTypeOnly);
    } else if (
      ts.isCallExpression(node) &&
      node.arguments[0] &&
      ts.isStringLiteral(node.arguments[0]) &&
      (node.expression.kind === ts.SyntaxKind.ImportKeyword ||
        (ts.isIdentifier(node.expression) && node.expression.text === 'require'))
    ) {
      check(node.arguments[0].text, false);
    } else if (
      ts.isImportTypeNode(node) &&
      ts.isLiteralTypeNode(node.argument) &&
      ts.isStringLiteral(node.argument.literal)
    ) {
      check(node.argument.literal.text, true);
    } else if (
      ts.isPropertyAccessExpression(node) &&
      TEMPORAL_APIS.has(node.name.text) &&
      ts.isPropertyAccessExpression(node.parent) &&
      node.parent.expression === node
    ) {
      found.push(
        `uses ${node.getText(source)}.${node.parent.name.text}: Temporal calls belong to client/<capability>/ modules`,
      );
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

function routeFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return routeFiles(path);
    return e.name.endsWith('.ts') ? [path] : [];
  });
}

describe('routes layout', () => {
  it('finds a route that reaches Temporal or workflows/ itself', () => {
    expect(routeViolations("import { WorkflowNotFoundError, type Client } from '@temporalio/client';")).toHaveLength(1);
    expect(routeViolations("import * as temporal from '@temporalio/client';")).toHaveLength(1);
    expect(
      routeViolations("import { transactionUpdatedSignal } from '../../../workflows/outgoing-transfer.messages';"),
    ).toHaveLength(1);
    expect(
      routeViolations("import type { IncomingStatus } from '../../../workflows/incoming-transfer.messages';"),
    ).toHaveLength(1);
    expect(routeViolations("import { connectivityCheck } from '../../../workflows';")).toHaveLength(1);
    expect(
      routeViolations("export { initialState } from '../../../workflows/outgoing-transfer.messages';"),
    ).toHaveLength(1);
    expect(routeViolations("const m = await import('../../../workflows/outgoing-transfer.messages');")).toHaveLength(1);
    expect(
      routeViolations('let s: import("../../../workflows/outgoing-transfer.messages").TransferState;'),
    ).toHaveLength(1);
    expect(
      routeViolations(
        "const handle = await deps.temporal.workflow.start('connectivityCheck', { taskQueue, workflowId });",
      ),
    ).toHaveLength(1);
    expect(routeViolations('await deps.temporal.workflow\n  .getHandle(id)\n  .signal(s, {});')).toHaveLength(1);
    expect(routeViolations('await temporal.schedule.getHandle(id).trigger();')).toHaveLength(1);
    expect(routeViolations('await deps.temporal.workflowService.getSystemInfo({});')).toHaveLength(1);
  });

  it('lets a route name the Client it hands on, and call client/ modules', () => {
    expect(routeViolations("import type { Client } from '@temporalio/client';")).toEqual([]);
    expect(routeViolations("import { type Client } from '@temporalio/client';")).toEqual([]);
    expect(
      routeViolations(
        "import { startConnectivityCheck } from '../../checks/connectivity';\nawait startConnectivityCheck(deps);",
      ),
    ).toEqual([]);
    expect(
      routeViolations("const Started = Type.Object({ workflowId: Type.String() }); // the check's workflow."),
    ).toEqual([]);
  });

  it('holds for every route in client/api/routes/', () => {
    const files = routeFiles(ROUTES);
    expect(files.length).toBeGreaterThan(5);
    const broken = files.flatMap((f) =>
      routeViolations(readFileSync(f, 'utf8')).map((v) => `${relative(ROOT, f)}: ${v}`),
    );
    expect(broken).toEqual([]);
  });
});
