-- Up Migration
-- The VASPs' own did:key pairs. A private key is stored only sealed: AES-256-GCM under a random data key per row, the
-- data key itself wrapped under the keystore master key (or a KMS key) named by wrapping_key_id. Both ciphertexts are
-- bound to the row (id, VASP, did:key) through the AEAD's associated data, so rows cannot be swapped.
-- Lifecycle: pending (created, not yet visible in the directory) -> active (the published pii_didkey; at most one per
-- VASP) -> retired (kept for decrypting old data) -> destroyed (only on an explicit request; the key material is wiped).
create table vasp_keys (
  id uuid primary key,
  vasp_did text not null,
  did_key text not null unique,
  public_key_hex text not null check (public_key_hex ~ '^[0-9a-f]{64}$'),
  state text not null check (state in ('pending', 'active', 'retired', 'destroyed')),
  source text not null check (source in ('generated', 'imported')),
  -- The idempotency key of the rotation that created the key, so a retried activity finds its key instead of adding one.
  request_id text,
  wrapping_key_id text,
  wrapped_data_key bytea,
  sealed_private_key bytea,
  created_at timestamptz not null default now(),
  activated_at timestamptz,
  retired_at timestamptz,
  destroyed_at timestamptz,
  constraint vasp_keys_material_matches_state check (
    case when state = 'destroyed'
      then wrapping_key_id is null and wrapped_data_key is null and sealed_private_key is null and destroyed_at is not null
      else wrapping_key_id is not null and wrapped_data_key is not null and sealed_private_key is not null
    end
  ),
  constraint vasp_keys_request_unique unique (vasp_did, request_id)
);
-- At most one active key per VASP: the one its published pii_didkey names.
create unique index vasp_keys_one_active_per_vasp on vasp_keys (vasp_did) where state = 'active';
create index vasp_keys_vasp_idx on vasp_keys (vasp_did, created_at);

-- Down Migration
drop table vasp_keys;
