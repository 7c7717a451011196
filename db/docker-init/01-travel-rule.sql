-- The application's role and database in the compose deployment (the orchestrator and sandbox schemas live inside).
create role tro login password 'tro';
create database travel_rule owner tro;
