import { randomBytes, randomUUID } from 'node:crypto';
import { SignJWT, jwtVerify, errors as joseErrors } from 'jose';
import type { Pool } from 'pg';
import { serviceSecret } from '../auth/store';

export interface UploadGrant {
  /** The upload's id; the file accepted with this URL gets it. */
  id: string;
  vaspDid: string;
  userDid: string;
}

const SECRET_NAME = 'address-upload-url-key';

/**
 * Upload URLs: `${publicUrl}/upload?token=<JWT>`, like the network's `https://api.notabene.dev/upload?token=<JWT>`.
 * The token is the URL's own credential: an HS256 JWT bound
 * to the VASP, the requesting user and the upload id, valid a few minutes. It is signed with a key of its own, kept in
 * the sandbox schema, so an API access token can never pass as an upload credential or the other way round.
 */
export class UploadUrls {
  private constructor(
    private readonly key: Uint8Array,
    private readonly publicUrl: string,
    private readonly ttlSeconds: number,
  ) {}

  static async open(pool: Pool, publicUrl: string, ttlSeconds: number): Promise<UploadUrls> {
    return new UploadUrls(
      new Uint8Array(await serviceSecret(pool, SECRET_NAME, randomBytes(32))),
      publicUrl,
      ttlSeconds,
    );
  }

  private get audience() {
    return `${this.publicUrl}/upload`;
  }

  async issue(vaspDid: string, userDid: string): Promise<{ uploadUrl: string; grant: UploadGrant }> {
    const grant: UploadGrant = { id: randomUUID(), vaspDid, userDid };
    const token = await new SignJWT({ vaspDID: vaspDid, uploadType: 'addressList' })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setIssuer(this.publicUrl)
      .setAudience(this.audience)
      .setSubject(userDid)
      .setJti(grant.id)
      .setIssuedAt()
      .setExpirationTime(`${this.ttlSeconds}s`)
      .sign(this.key);
    return { uploadUrl: `${this.audience}?token=${token}`, grant };
  }

  /** The grant, or why the token is refused (expired, forged, not an upload token). */
  async verify(token: string): Promise<UploadGrant | { refused: string }> {
    try {
      const { payload } = await jwtVerify(token, this.key, {
        issuer: this.publicUrl,
        audience: this.audience,
        algorithms: ['HS256'],
      });
      if (typeof payload.vaspDID !== 'string' || !payload.sub || !payload.jti || payload.uploadType !== 'addressList') {
        return { refused: 'invalid upload token' };
      }
      return { id: payload.jti, vaspDid: payload.vaspDID, userDid: payload.sub };
    } catch (e) {
      if (e instanceof joseErrors.JWTExpired) return { refused: 'upload URL expired: request a new one' };
      return { refused: 'invalid upload token' };
    }
  }
}
