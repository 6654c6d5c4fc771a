/* pg_concurrency_control--1.0.sql */

\echo Use "CREATE EXTENSION pg_concurrency_control" to load this file. \quit

-- Gating works without CREATE EXTENSION: these are the monitoring and
-- control functions.  The set-returning ones return a row type of their
-- own, so that a later version adds columns with ALTER TYPE ... ADD
-- ATTRIBUTE ... CASCADE (CASCADE for tables a user made OF them) and
-- CREATE OR REPLACE VIEW: the functions and views stay, and with them a
-- DBA's GRANT/REVOKE and the views built on them.  Columns are only ever
-- appended.  The library fills the columns the installed version
-- declares, matched by name, and NULL in those it does not know.

CREATE TYPE pg_concurrency_control_status_row AS (
    gate text,
    max_concurrency integer,
    running integer,
    waiting integer,
    admitted bigint,
    queued bigint,
    timeouts bigint,
    rejected bigint,
    abandoned bigint,
    overcommitted bigint,
    lock_escapes bigint,
    lock_blocked integer,
    total_wait_ms double precision,
    max_wait_ms double precision,
    mean_wait_ms double precision,
    stats_reset timestamptz,
    lingering integer,
    resumed bigint,
    turn_budget_ms double precision,
    auto boolean,
    baseline_ms double precision,
    service_ms double precision,
    throughput double precision,
    yielding boolean,
    ceiling integer,
    floor integer);

CREATE FUNCTION pg_concurrency_control_status()
RETURNS SETOF pg_concurrency_control_status_row
AS 'MODULE_PATHNAME', 'pg_concurrency_control_status'
LANGUAGE C STRICT VOLATILE PARALLEL RESTRICTED;

COMMENT ON FUNCTION pg_concurrency_control_status() IS
    'one row per admission gate: limit, running, waiting, totals and the adaptive limit''s inputs';

CREATE VIEW pg_concurrency_control AS
    SELECT * FROM pg_concurrency_control_status();

CREATE TYPE pg_concurrency_control_backends_row AS (
    pid integer,
    gate text,
    state text,
    since timestamptz,
    ticket bigint,
    turn bigint,
    priority text);

CREATE FUNCTION pg_concurrency_control_backends()
RETURNS SETOF pg_concurrency_control_backends_row
AS 'MODULE_PATHNAME', 'pg_concurrency_control_backends'
LANGUAGE C STRICT VOLATILE PARALLEL RESTRICTED;

COMMENT ON FUNCTION pg_concurrency_control_backends() IS
    'one row per slot held or kept and per queued backend, with its queue class';

CREATE TYPE pg_concurrency_control_check_row AS (
    gate text,
    problem text);

CREATE FUNCTION pg_concurrency_control_check()
RETURNS SETOF pg_concurrency_control_check_row
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
