import { Command } from 'commander';
import { registerKeyCommands } from './keys';
import { registerAddressCommands } from './addresses';
import { registerScreeningCommands } from './screening';
import { registerConsoleCommands } from './console';
import { registerApiKeyCommands } from './api-keys';
import { registerAuditCommands } from './audit';

/**
 * The project's CLI (`npm run cli -- <command>`). Each part adds its commands with one `register…(program)` call.
 */
export const program = new Command()
  .name('tro')
  .description('travel-rule-orchestrator command line')
  .showHelpAfterError();

// Commands are registered here, one line per part.
registerKeyCommands(program);
registerAddressCommands(program);
registerScreeningCommands(program);
registerConsoleCommands(program);
registerApiKeyCommands(program);
registerAuditCommands(program);

if (require.main === module) {
  program.parseAsync(process.argv).catch((e: Error) => {
    process.stderr.write(`error: ${e.message}\n`);
    process.exit(1);
  });
}
