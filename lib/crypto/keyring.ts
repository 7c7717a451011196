/**
 * All private keys of one VASP, current and retired: data stays encrypted to the key that was current when it was
 * written, so rotating a key must not make old data unreadable. Lookup is by the JWE recipient `kid`, so decryption
 * goes straight to the one entry meant for us instead of trying every key against every entry as the SDK does.
 */
import { ValidationError } from '../errors';
import { LocalDidKey } from './prepared-keys';

export class Keyring {
  readonly #byKid: ReadonlyMap<string, LocalDidKey>;

  private constructor(keys: readonly LocalDidKey[]) {
    this.#byKid = new Map(keys.map((key) => [key.kid, key]));
  }

  /** Validates each record (ValidationError names `keyring[i]`); duplicates are harmless and kept once. */
  static from(records: readonly unknown[]): Keyring {
    if (!Array.isArray(records) || records.length === 0) {
      throw new ValidationError('keyring', 'must hold at least one key record');
    }
    return new Keyring(records.map((record, i) => LocalDidKey.from(record, `keyring[${i}]`)));
  }

  get dids(): string[] {
    return [...this.#byKid.values()].map((key) => key.did);
  }

  findByKid(kid: string): LocalDidKey | undefined {
    return this.#byKid.get(kid);
  }

  toJSON(): { dids: string[] } {
    return { dids: this.dids };
  }
}
