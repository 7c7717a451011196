import { createWriteStream } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import { rename, rm } from 'node:fs/promises';
import { Transform, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { FastifyReply, FastifyRequest } from 'fastify';
import '@fastify/multipart';
import type { SandboxContext } from '../context';
import { Access } from '../auth/access';
import { NetworkError, badRequest, unauthorized } from '../errors';
import type { AddressBookOptions } from './options';
import type { UploadProcessor } from './processor';
import type { Spool } from './spool';
import { checkHeader } from './rules';
import type { UploadUrls } from './upload-url';
import { createUpload, uploadExists } from './store';

export const UPLOAD_PERMISSION = 'address.uploadAddressList';

const tooLarge = (max: number) =>
  new NetworkError(413, 'PayloadTooLargeError', `file: larger than the limit of ${max} bytes`);
const invalid = (message: string) => badRequest('ValidationError', message);

/**
 * A multipart body that does not parse (cut short, bad part headers) is the caller's mistake: 400. System errors
 * (the spool's disk: codes such as ENOSPC) stay server errors.
 */
function malformed(e: unknown): unknown {
  if (e instanceof NetworkError) return e;
  const { code, statusCode } = e as { code?: string; statusCode?: number };
  if (typeof statusCode === 'number' && statusCode >= 400 && statusCode < 500)
    return invalid(`file: ${(e as Error).message}`);
  if (typeof code === 'string' && /^E[A-Z]+$/.test(code)) return e;
  return invalid(`file: the multipart body is malformed (${String((e as Error).message ?? e).slice(0, 100)})`);
}

/** The longest first line looked at for the header before the file is refused. */
const MAX_HEADER_BYTES = 4096;

/**
 * Passes the file through while counting its bytes (refusing it as soon as it exceeds the limit) and checking its
 * first line against the required header before anything after it is accepted.
 */
class CsvGate extends Transform {
  bytes = 0;
  private head: Buffer[] = [];
  private headBytes = 0;
  private headerChecked = false;

  constructor(private readonly max: number) {
    super();
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    this.bytes += chunk.length;
    if (this.bytes > this.max) return done(tooLarge(this.max));
    if (this.headerChecked) return done(null, chunk);
    this.head.push(chunk);
    this.headBytes += chunk.length;
    const buffered = Buffer.concat(this.head);
    const nl = buffered.indexOf(0x0a);
    if (nl === -1) {
      this.head = [buffered];
      return this.headBytes > MAX_HEADER_BYTES ? done(invalid(checkHeader(buffered.toString('utf8'))!)) : done();
    }
    const problem = checkHeader(buffered.subarray(0, nl).toString('utf8'));
    if (problem) return done(invalid(problem));
    this.headerChecked = true;
    this.head = [];
    done(null, buffered);
  }

  override _flush(done: TransformCallback): void {
    if (this.headerChecked) return done();
    const buffered = Buffer.concat(this.head);
    const problem = checkHeader(buffered.toString('utf8'));
    if (problem) return done(invalid(buffered.length ? problem : `file: is empty; ${problem.replace(/^file: /, '')}`));
    done(null, buffered);
  }
}

export interface ReceiveDeps {
  ctx: SandboxContext;
  opts: AddressBookOptions;
  urls: UploadUrls;
  processor: UploadProcessor;
  spool: Spool;
  /** Requests refused before their body was read, still being drained; closed at once when the sandbox stops. */
  lingering: Set<IncomingMessage>;
}

/** How long a refused upload's remaining body is read and discarded before the connection is cut. */
const LINGER_MS = 2000;

/**
 * After refusing an upload whose body is still arriving: answer with `Connection: close`, then read and discard what
 * the client is still sending for a short while, so that it gets to read the answer (closing a socket with unread
 * data would reset the connection under the client's feet), and cut the connection if it keeps sending.
 */
function lingerAfterRefusal(request: FastifyRequest, reply: FastifyReply, lingering: Set<IncomingMessage>): void {
  const req = request.raw;
  if (req.readableEnded) return;
  reply.header('connection', 'close');
  lingering.add(req);
  const timer = setTimeout(() => req.socket.destroy(), LINGER_MS);
  timer.unref();
  const done = () => {
    clearTimeout(timer);
    lingering.delete(req);
  };
  req.once('end', done);
  req.once('close', done);
  reply.raw.once('finish', () => {
    req.unpipe();
    req.resume();
  });
}

/** `POST /upload?token=`: see receiveUpload. Refusals come back at once, whatever is left of the body. */
export async function handleUpload(request: FastifyRequest, reply: FastifyReply, deps: ReceiveDeps) {
  try {
    return await receiveUpload(request, reply, deps);
  } catch (e) {
    lingerAfterRefusal(request, reply, deps.lingering);
    throw e;
  }
}

/** The largest request body that can still hold a file within the limit (multipart framing is small). */
const FRAMING_ALLOWANCE = 64 * 1024;

/**
 * `POST {uploadUrl}`: multipart/form-data with one file part named `file`. The URL's token is the credential. The file
 * is streamed to the spool directory (never held in memory), refused with 413 past the size limit and with 400 when its
 * first line is not the header; the answer comes as soon as the file is stored, and processing runs afterwards.
 */
async function receiveUpload(request: FastifyRequest, reply: FastifyReply, deps: ReceiveDeps) {
  const { ctx, opts, urls, processor, spool } = deps;
  const token = (request.query as Record<string, unknown>).token;
  if (typeof token !== 'string' || !token) throw unauthorized('upload URL has no token');
  const grant = await urls.verify(token);
  if ('refused' in grant) throw unauthorized(grant.refused);
  // The user's rights are checked again at upload time: a permission withdrawn since the URL was issued counts.
  (await Access.load(ctx.pool, grant.userDid)).require(grant.vaspDid, UPLOAD_PERMISSION);
  if (await uploadExists(ctx.pool, grant.id)) {
    throw new NetworkError(409, 'UploadURLUsedError', 'this upload URL has already been used: request a new one');
  }
  if (!request.isMultipart())
    throw invalid('file: the upload must be multipart/form-data with a file part named "file"');
  const declared = Number(request.headers['content-length']);
  if (Number.isFinite(declared) && declared > opts.maxUploadBytes + FRAMING_ALLOWANCE)
    throw tooLarge(opts.maxUploadBytes);

  const part = await request
    .file({ limits: { fileSize: opts.maxUploadBytes + 1, files: 1, fields: 20, parts: 30 } })
    .catch((e: unknown) => {
      throw malformed(e);
    });
  if (!part) throw invalid('file: is required (a multipart file part named "file")');
  if (part.fieldname !== 'file') {
    part.file.resume();
    throw invalid(`file: the file part must be named "file", not "${part.fieldname}"`);
  }

  // Each request writes its own file: a second request on the same URL, refused below, removes only its own.
  const spoolPath = spool.newFile(grant.id);
  const partial = `${spoolPath}.part`;
  const gate = new CsvGate(opts.maxUploadBytes);
  try {
    await pipeline(part.file, gate, createWriteStream(partial, { flags: 'wx', mode: 0o600 }));
    if (part.file.truncated) throw tooLarge(opts.maxUploadBytes);
    await rename(partial, spoolPath);
  } catch (e) {
    await rm(partial, { force: true });
    if (e instanceof NetworkError) throw e;
    if ((e as { code?: string }).code === 'FST_REQ_FILE_TOO_LARGE') throw tooLarge(opts.maxUploadBytes);
    throw malformed(e);
  }

  const fileName = part.filename || 'addresses.csv';
  const created = await createUpload(ctx.pool, {
    id: grant.id,
    vaspDid: grant.vaspDid,
    userDid: grant.userDid,
    fileName,
    sizeBytes: gate.bytes,
    spoolPath,
    claimedBy: processor.instanceId,
  });
  if (!created) {
    await rm(spoolPath, { force: true });
    throw new NetworkError(409, 'UploadURLUsedError', 'this upload URL has already been used: request a new one');
  }

  // The network's answer, sent before processing starts.
  reply.code(200).send({
    text: 'File uploaded!',
    uploadedFile: {
      locationURL: `${ctx.config.publicUrl}/sandbox/uploads/${grant.id}`,
      mimeType: 'text/csv',
      name: fileName,
      metadata: {
        key: `addressList/${grant.vaspDid}/${grant.id}.csv`,
        uploadType: 'addressList',
        userDID: grant.userDid,
        extra: { vaspDID: grant.vaspDid, counter: created.counter },
      },
    },
  });
  processor.enqueue(grant.id);
  return reply;
}
