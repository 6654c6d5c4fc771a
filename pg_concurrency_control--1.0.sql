/* pg_concurrency_control--1.0.sql */

\echo Use "CREATE EXTENSION pg_concurrency_control" to load this file. \quit

-- Gating works without CREATE EXTENSION: these are the monitoring and
-- control functions.  Later versions change them with CREATE OR REPLACE
-- (never DROP and CREATE), so that an upgrade keeps a DBA's GRANT/REVOKE.

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
    OUT turn_budget_ms double precision,
    OUT auto boolean,
    OUT baseline_ms double precision,
    OUT service_ms double precision,
    OUT throughput double precision,
    OUT yielding boolean,
    OUT ceiling integer,
    OUT floor integer)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'pg_concurrency_control_status'
LANGUAGE C STRICT VOLATILE PARALLEL RESTRICTED;

COMMENT ON FUNCTION pg_concurrency_control_status() IS
    'one row per admission gate: limit, running, waiting, totals and the adaptive limit''s inputs';

CREATE VIEW pg_concurrency_control AS
    SELECT * FROM pg_concurrency_control_status();

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

CREATE FUNCTION pg_concurrency_control_check(
    OUT gate text,
    OUT problem text)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'pg_concurrency_control_check'
LANGUAGE C STRICT VOLATILE PARALLEL RESTRICTED;

COMMENT ON FUNCTION pg_concurrency_control_check() IS
    'one row per broken invariant of the gates; none when consistent';

CREATE FUNCTION pg_concurrency_control_config_loaded()
RETURNS timestamptz
AS 'MODULE_PATHNAME', 'pg_concurrency_control_config_loaded'
LANGUAGE C STRICT VOLATILE PARALLEL RESTRICTED;

COMMENT ON FUNCTION pg_concurrency_control_config_loaded() IS
    'when the gates last applied the configuration (the watchdog applies each reload)';

CREATE FUNCTION pg_concurrency_control_reset()
RETURNS void
AS 'MODULE_PATHNAME', 'pg_concurrency_control_reset'
LANGUAGE C STRICT VOLATILE PARALLEL RESTRICTED;

COMMENT ON FUNCTION pg_concurrency_control_reset() IS
    'zero the totals of every gate';

-- Gate totals are for everyone; who runs and waits (pids, tickets) and the
-- invariant check are for pg_monitor; resetting is for superusers and
-- whoever they grant it to.
GRANT SELECT ON pg_concurrency_control TO PUBLIC;
REVOKE ALL ON FUNCTION pg_concurrency_control_backends() FROM PUBLIC;
REVOKE ALL ON FUNCTION pg_concurrency_control_check() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION pg_concurrency_control_backends() TO pg_monitor;
GRANT EXECUTE ON FUNCTION pg_concurrency_control_check() TO pg_monitor;
REVOKE ALL ON FUNCTION pg_concurrency_control_reset() FROM PUBLIC;

-- Fails here, with a hint, when the library was not preloaded.
SELECT count(*) FROM pg_concurrency_control_check();
