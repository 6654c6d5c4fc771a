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
