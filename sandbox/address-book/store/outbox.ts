import type { Pool, PoolClient } from 'pg';

type Db = Pick<Pool | PoolClient, 'query'>;

export interface OutboxEmail {
  id: number;
  to: string;
  subject: string;
  /** The plain-text body a person would read. */
  text: string;
  /** The same content, machine-readable, for tests and tools. */
  data: Record<string, unknown>;
  sentAt: string;
}

/**
 * The sandbox's mail: e-mails the network would send (the address-list summary) are written
 * here instead, and read back at `GET /sandbox/outbox`.
 */
export async function sendEmail(
  db: Db,
  to: string,
  subject: string,
  text: string,
  data: Record<string, unknown>,
): Promise<number> {
  const { rows } = await db.query<{ id: string }>(
    'insert into outbox_emails (to_address, subject, body, data) values ($1, $2, $3, $4) returning id',
    [to, subject, text, JSON.stringify(data)],
  );
  return Number(rows[0]!.id);
}

export async function readOutbox(db: Db, to: string | undefined, limit: number): Promise<OutboxEmail[]> {
  const { rows } = await db.query<{
    id: string;
    to_address: string;
    subject: string;
    body: string;
    data: Record<string, unknown>;
    created_at: Date;
  }>(
    `select id, to_address, subject, body, data, created_at from outbox_emails
      where ($1::text is null or to_address = $1) order by id desc limit $2`,
    [to ?? null, limit],
  );
  return rows.reverse().map((r) => ({
    id: Number(r.id),
    to: r.to_address,
    subject: r.subject,
    text: r.body,
    data: r.data,
    sentAt: r.created_at.toISOString(),
  }));
}
