/* pg_concurrency_control--1.2--1.3.sql */

\echo Use "ALTER EXTENSION pg_concurrency_control UPDATE TO '1.3'" to load this file. \quit

-- backends() gains the queue class of each admission or wait
-- (pg_concurrency_control.priority).
DROP FUNCTION pg_concurrency_control_backends();

CREATE FUNCTION pg_concurrency_control_backends(
    OUT pid integer,
    OUT gate text,
    OUT state text,
    OUT since timestamptz,
    OUT ticket bigint,
    OUT turn bigint,
    OUT priority text)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'pg_concurrency_control_backends'
LANGUAGE C STRICT VOLATILE PARALLEL RESTRICTED;

COMMENT ON FUNCTION pg_concurrency_control_backends() IS
    'one row per slot held or kept and per queued backend, with its queue class';

-- status() gains the adaptive limit's state (a limit GUC set to -1).
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
    OUT throughput double precision)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'pg_concurrency_control_status'
LANGUAGE C STRICT VOLATILE PARALLEL RESTRICTED;

COMMENT ON FUNCTION pg_concurrency_control_status() IS
    'one row per admission gate: limit, running, waiting, totals and the adaptive limit''s inputs';

CREATE VIEW pg_concurrency_control AS
    SELECT * FROM pg_concurrency_control_status();

GRANT SELECT ON pg_concurrency_control TO PUBLIC;

-- The adaptive limit's controller against a model server, for tests and
-- for seeing how it reacts (it touches no gate).
CREATE FUNCTION pg_concurrency_control_auto_simulate(
    unloaded_ms double precision[],
    knee integer[],
    auto_min integer DEFAULT 2,
    auto_max integer DEFAULT 64,
    start integer DEFAULT 64,
    client_ms double precision DEFAULT 0,
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

COMMENT ON FUNCTION pg_concurrency_control_auto_simulate(double precision[], integer[], integer, integer, integer, double precision) IS
    'runs the adaptive limit controller against a model server: one row per 100 ms step';
