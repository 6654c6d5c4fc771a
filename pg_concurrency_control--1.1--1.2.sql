/* pg_concurrency_control--1.1--1.2.sql */

\echo Use "ALTER EXTENSION pg_concurrency_control UPDATE TO '1.2'" to load this file. \quit

-- status() gains the slots kept between the transactions of a turn
-- (pg_concurrency_control.quantum) and how many transactions continued one.
DROP VIEW pg_concurrency_control;
DROP FUNCTION pg_concurrency_control_status();

CREATE FUNCTION pg_concurrency_control_status(
    OUT gate text,
    OUT max_concurrency integer,
    OUT running integer,
    OUT waiting integer,
    OUT admitted bigint,
    OUT queued bigint,
    OUT timeouts bigint,
    OUT rejected bigint,
    OUT overcommitted bigint,
    OUT lock_escapes bigint,
    OUT lock_blocked integer,
    OUT total_wait_ms double precision,
    OUT max_wait_ms double precision,
    OUT mean_wait_ms double precision,
    OUT stats_reset timestamptz,
    OUT lingering integer,
    OUT resumed bigint)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'pg_concurrency_control_status'
LANGUAGE C STRICT VOLATILE PARALLEL RESTRICTED;

COMMENT ON FUNCTION pg_concurrency_control_status() IS
    'one row per admission gate: limit, running, waiting and totals';

CREATE VIEW pg_concurrency_control AS
    SELECT * FROM pg_concurrency_control_status();

GRANT SELECT ON pg_concurrency_control TO PUBLIC;
