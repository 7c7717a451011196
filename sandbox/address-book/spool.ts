import { randomUUID } from 'node:crypto';
import { chmod, mkdir, mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError } from '../../lib/errors';

/**
 * The directory where uploaded address lists wait for processing: customers' addresses, so readable by this user
 * only (0700), never a directory shared with other users of the machine.
 */
export class Spool {
  private constructor(
    readonly dir: string,
    private readonly temporary: boolean,
  ) {}

  /** The configured directory, created or narrowed to 0700; unset: a fresh private temporary one (mkdtemp). */
  static async open(configured: string | undefined): Promise<Spool> {
    if (!configured) return new Spool(await mkdtemp(join(tmpdir(), 'travel-rule-sandbox-uploads-')), true);
    await mkdir(configured, { recursive: true, mode: 0o700 });
    const mode = (await stat(configured)).mode & 0o777;
    if (mode & 0o077) {
      try {
        await chmod(configured, 0o700);
      } catch (e) {
        throw new ConfigError(
          'SANDBOX_UPLOAD_DIR',
          `${configured} is open to other users (mode ${mode.toString(8)}) and cannot be made private (${(e as NodeJS.ErrnoException).code ?? 'error'})`,
          'Point it at a directory this user owns, or unset it for one under DATA_DIR',
        );
      }
    }
    return new Spool(configured, false);
  }

  /** A file of its own for each upload request: two requests racing on one upload URL never write the same file. */
  newFile(uploadId: string): string {
    return join(this.dir, `${uploadId}.${randomUUID()}.csv`);
  }

  /** Removes a temporary directory (a configured one stays, for a restart to resume its uploads). */
  async close(): Promise<void> {
    if (this.temporary) await rm(this.dir, { recursive: true, force: true });
  }
}
