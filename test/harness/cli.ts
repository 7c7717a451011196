import { Command } from 'commander';

/**
 * Runs one command of the project's CLI in-process, the part registered by `register`, and returns what it printed
 * to stdout. Commander's exitOverride turns a usage error into an exception instead of ending the test process.
 */
export async function runCli(register: (program: Command) => void, args: string[]): Promise<string> {
  const out: string[] = [];
  const write = jest.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    out.push(String(chunk));
    return true;
  });
  try {
    const program = new Command().exitOverride();
    register(program);
    await program.parseAsync(['node', 'tro', ...args]);
  } finally {
    write.mockRestore();
  }
  return out.join('');
}
