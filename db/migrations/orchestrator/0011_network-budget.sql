-- Up Migration
-- The group's one budget of calls to the network, per credential (its client id): a token bucket that every worker
-- and API process takes from with one atomic statement (db/network-budget.ts), and the block the network announced
-- with its last 429, which every process honours.
create table network_rate_budget (
  credential text primary key,
  -- Tokens left at refreshed_at; the level now adds the refill since then, up to the bucket's capacity.
  tokens double precision not null,
  refreshed_at timestamptz not null,
  -- No call leaves before this (the network's lockout after a 429).
  blocked_until timestamptz,
  -- The outcome of the last take, so the statement that decides it can return it.
  last_granted boolean not null default false,
  granted bigint not null default 0,
  refused bigint not null default 0,
  rate_limited bigint not null default 0
);
