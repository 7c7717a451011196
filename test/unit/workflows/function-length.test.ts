import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';

/**
 * Workflows stay readable as a short main function over named phases: no function (declaration, arrow, method) in
 * workflows/ is longer than this many lines, its signature and closing brace included.
 */
const MAX_LINES = 80;
const DIR = join(__dirname, '..', '..', '..', 'workflows');

function functionLengths(file: string): { name: string; lines: number }[] {
  const text = readFileSync(join(DIR, file), 'utf8');
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.ES2022, true);
  const found: { name: string; lines: number }[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const first = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const last = source.getLineAndCharacterOfPosition(node.getEnd()).line;
      const named =
        (node as ts.FunctionDeclaration).name?.getText(source) ??
        (ts.isVariableDeclaration(node.parent) ? node.parent.name.getText(source) : undefined);
      found.push({ name: `${file}:${first + 1} ${named ?? '(anonymous)'}`, lines: last - first + 1 });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe('workflows/ reads as short functions', () => {
  const files = readdirSync(DIR).filter((f) => f.endsWith('.ts'));

  it('finds the workflows and their functions', () => {
    const all = files.flatMap(functionLengths).map((f) => f.name);
    expect(all).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^outgoing-transfer\.ts:\d+ outgoingTransfer$/),
        expect.stringMatching(/^incoming-transfer\.ts:\d+ incomingTransfer$/),
      ]),
    );
  });

  it(`no function in workflows/ is longer than ${MAX_LINES} lines`, () => {
    const long = files
      .flatMap(functionLengths)
      .filter((f) => f.lines > MAX_LINES)
      .map((f) => `${f.name}: ${f.lines} lines`);
    expect(long).toEqual([]);
  });
});
