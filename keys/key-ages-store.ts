import type { Pool } from 'pg';

/** Seconds since each of the given VASPs' active key became active (or was created): the key-age gauge's reading. */
export async function activeKeyAges(pool: Pool, vaspDids: string[]): Promise<{ vasp: string; ageSeconds: number }[]> {
  const { rows } = await pool.query<{ vasp: string; age: number }>(
    `select vasp_did as vasp, extract(epoch from now() - coalesce(activated_at, created_at))::float8 as age
     from vasp_keys where state = 'active' and vasp_did = any($1::text[])`,
    [vaspDids],
  );
  return rows.map((r) => ({ vasp: r.vasp, ageSeconds: r.age }));
}
