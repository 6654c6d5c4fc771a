/* pg_concurrency_control--1.0.sql */

\echo Use "CREATE EXTENSION pg_concurrency_control" to load this file. \quit

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
    OUT stats_reset timestamptz)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'pg_concurrency_control_status'
LANGUAGE C STRICT VOLATILE PARALLEL RESTRICTED;

COMMENT ON FUNCTION pg_concurrency_control_status() IS
    'one row per admission gate: limit, running, waiting and totals';

CREATE FUNCTION pg_concurrency_control_backends(
    OUT pid integer,
    OUT gate text,
    OUT state text,
    OUT since timestamptz)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'pg_concurrency_control_backends'
LANGUAGE C STRICT VOLATILE PARALLEL RESTRICTED;

COMMENT ON FUNCTION pg_concurrency_control_backends() IS
    'one row per backend holding (running) or waiting for a slot';

CREATE FUNCTION pg_concurrency_control_reset()
RETURNS void
AS 'MODULE_PATHNAME', 'pg_concurrency_control_reset'
LANGUAGE C STRICT VOLATILE PARALLEL RESTRICTED;

COMMENT ON FUNCTION pg_concurrency_control_reset() IS
    'zero the totals of every gate';

CREATE FUNCTION pg_concurrency_control_check(
    OUT gate text,
    OUT problem text)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'pg_concurrency_control_check'
LANGUAGE C STRICT VOLATILE PARALLEL RESTRICTED;

COMMENT ON FUNCTION pg_concurrency_control_check() IS
    'one row per broken invariant of the gates; none when consistent';

CREATE VIEW pg_concurrency_control AS
    SELECT * FROM pg_concurrency_control_status();

-- Resetting totals is for administrators; reading is for everyone.
REVOKE ALL ON FUNCTION pg_concurrency_control_reset() FROM PUBLIC;
GRANT SELECT ON pg_concurrency_control TO PUBLIC;

-- Fails here, with a hint, when the library was not preloaded.
SELECT count(*) FROM pg_concurrency_control_check();
