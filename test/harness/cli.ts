import { Command } from 'commander';

/**
 * Runs one command of the project's CLI in-process, the part registered by `register`, and returns what it printed
 * to stdout. Commander's exitOverride turns a usage error into an exception instead of ending the test process; an
 * exit code the command sets (`keys rotate --follow` on a failed rotation) is put back: on 2 cores jest runs the tests
 * in its own process, whose exit code it would otherwise become.
 */
export async function runCli(register: (program: Command) => void, args: string[]): Promise<string> {
  const out: string[] = [];
  const exitCode = process.exitCode;
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
    process.exitCode = exitCode;
  }
  return out.join('');
}
