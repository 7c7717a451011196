-- Up Migration
-- VASPs the seed marks as the sandbox's own simulated ones: the only VASPs the /sandbox/* test routes may act for.
alter table vasps add column simulated boolean not null default false;

-- Down Migration
alter table vasps drop column simulated;
