import { cached, directoryCaches, type TransferContext } from '../../../outgoing/context';

/** The parts of a transfer context that `cached` reads: its caches and the setting. */
const contextWith = (directoryCacheMs: number) =>
  ({ ...directoryCaches(directoryCacheMs), config: { directoryCacheMs } }) as unknown as TransferContext;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('directory answers cached for directoryCacheMs', () => {
  it('reuses an answer (a missing one too) until directoryCacheMs has passed, then asks again', async () => {
    const ctx = contextWith(80);
    let asked = 0;
    const load = (answer: string | undefined) => async () => {
      asked += 1;
      return answer;
    };
    expect(await cached(ctx, 'did:a', load('z6Mk1'))).toBe('z6Mk1');
    expect(await cached(ctx, 'did:a', load('z6Mk2'))).toBe('z6Mk1');
    expect(await cached(ctx, 'did:b', load(undefined))).toBeUndefined();
    expect(await cached(ctx, 'did:b', load('z6Mk3'))).toBeUndefined();
    expect(asked).toBe(2);
    await sleep(150);
    expect(await cached(ctx, 'did:a', load('z6Mk2'))).toBe('z6Mk2');
    expect(await cached(ctx, 'did:b', load('z6Mk3'))).toBe('z6Mk3');
    expect(asked).toBe(4);
  });

  it('keeps nothing when directoryCacheMs is 0', async () => {
    const ctx = contextWith(0);
    let asked = 0;
    for (let i = 0; i < 3; i++) {
      await cached(ctx, 'did:a', async () => `z6Mk${(asked += 1)}`);
    }
    expect(asked).toBe(3);
    expect(ctx.cache.size).toBe(0);
  });

  it('holds at most 4096 answers, the least recently used going first', async () => {
    const ctx = contextWith(60_000);
    for (let i = 0; i < 4100; i++) await cached(ctx, `did:${i}`, async () => `k${i}`);
    expect(ctx.cache.size).toBe(4096);
    expect(ctx.cache.has('did:0')).toBe(false);
    expect(ctx.cache.has('did:4099')).toBe(true);
  });
});
