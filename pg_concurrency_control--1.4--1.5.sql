/* pg_concurrency_control--1.4--1.5.sql */

\echo Use "ALTER EXTENSION pg_concurrency_control UPDATE TO '1.5'" to load this file. \quit

-- status() gains the ceiling that the adaptive limit's throughput trials
-- allow it to grow to.
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
    OUT yielding boolean,
    OUT ceiling integer)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'pg_concurrency_control_status'
LANGUAGE C STRICT VOLATILE PARALLEL RESTRICTED;

COMMENT ON FUNCTION pg_concurrency_control_status() IS
    'one row per admission gate: limit, running, waiting, totals and the adaptive limit''s inputs';

CREATE VIEW pg_concurrency_control AS
    SELECT * FROM pg_concurrency_control_status();

GRANT SELECT ON pg_concurrency_control TO PUBLIC;

-- The model server of auto_simulate() can hide part of what more holders
-- cost from the service time.
DROP FUNCTION pg_concurrency_control_auto_simulate(double precision[], integer[],
    integer, integer, integer, double precision);

CREATE FUNCTION pg_concurrency_control_auto_simulate(
    unloaded_ms double precision[],
    knee integer[],
    auto_min integer DEFAULT 2,
    auto_max integer DEFAULT 64,
    start integer DEFAULT 64,
    client_ms double precision DEFAULT 0,
    hidden_ms double precision DEFAULT 0,
    OUT step integer,
    OUT max_concurrency integer,
    OUT service_ms double precision,
    OUT throughput double precision,
    OUT baseline_ms double precision,
    OUT next_limit integer,
    OUT probing boolean)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'pg_concurrency_control_auto_simulate'
LANGUAGE C STRICT IMMUTABLE PARALLEL SAFE;

COMMENT ON FUNCTION pg_concurrency_control_auto_simulate(double precision[], integer[], integer, integer, integer, double precision, double precision) IS
    'runs the adaptive limit controller against a model server: one row per 100 ms step';
