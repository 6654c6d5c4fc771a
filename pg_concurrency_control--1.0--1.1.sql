/* pg_concurrency_control--1.0--1.1.sql */

\echo Use "ALTER EXTENSION pg_concurrency_control UPDATE TO '1.1'" to load this file. \quit

-- backends() gains the queue ticket and the turn of each admission.
DROP FUNCTION pg_concurrency_control_backends();

CREATE FUNCTION pg_concurrency_control_backends(
    OUT pid integer,
    OUT gate text,
    OUT state text,
    OUT since timestamptz,
    OUT ticket bigint,
    OUT turn bigint)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'pg_concurrency_control_backends'
LANGUAGE C STRICT VOLATILE PARALLEL RESTRICTED;

COMMENT ON FUNCTION pg_concurrency_control_backends() IS
    'one row per backend holding (running) or waiting for a slot, with its queue ticket and turn';
