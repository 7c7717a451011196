-- Up Migration
-- How an outgoing transfer was classified when it was requested (outgoing/validate.ts, issue 21): its type
-- (TRAVELRULE, BELOW_THRESHOLD, NON_CUSTODIAL, UNKNOWN), both sides' thresholds with their sources, the price used and
-- its source (or why there was none), and which personal data is sent. No personal data: IVMS101 paths only.
-- NULL for transfers from before, and for those the agent-compatible tx/create started.
alter table outgoing_transfers add column classification jsonb;

-- Down Migration
alter table outgoing_transfers drop column classification;
