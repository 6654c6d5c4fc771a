/* pg_concurrency_control--1.3--1.4.sql */

\echo Use "ALTER EXTENSION pg_concurrency_control UPDATE TO '1.4'" to load this file. \quit

-- status() gains the adaptive limit's verdict: an auto bigquery gate
-- yielding to the suffering work of the other auto gates.
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
    OUT resumed bigint,
    OUT auto boolean,
    OUT baseline_ms double precision,
    OUT service_ms double precision,
    OUT throughput double precision,
    OUT yielding boolean)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'pg_concurrency_control_status'
LANGUAGE C STRICT VOLATILE PARALLEL RESTRICTED;

COMMENT ON FUNCTION pg_concurrency_control_status() IS
    'one row per admission gate: limit, running, waiting, totals and the adaptive limit''s inputs';

CREATE VIEW pg_concurrency_control AS
    SELECT * FROM pg_concurrency_control_status();

GRANT SELECT ON pg_concurrency_control TO PUBLIC;
