-- The status functions, reset, privileges, and dropping the extension.
SELECT pg_concurrency_control_reset();
SELECT gate, admitted, queued, timeouts, rejected, overcommitted,
       lock_escapes, total_wait_ms, max_wait_ms
  FROM pg_concurrency_control ORDER BY gate;
SELECT stats_reset > now() - interval '1 minute' AS recent
  FROM pg_concurrency_control LIMIT 1;
SELECT count(*) AS own_rows FROM pg_concurrency_control_backends()
 WHERE pid = pg_backend_pid();
-- An ordinary user sees the gates' totals, not who runs or waits, and may
-- not reset; pg_monitor sees the backends and the check.
CREATE ROLE pcc_reader;
SET ROLE pcc_reader;
SELECT count(*) FROM pg_concurrency_control;
SELECT pg_concurrency_control_config_loaded() > now() - interval '1 day' AS loaded;
SELECT count(*) FROM pg_concurrency_control_backends();
SELECT count(*) FROM pg_concurrency_control_check();
SELECT pg_concurrency_control_reset();
RESET ROLE;
GRANT pg_monitor TO pcc_reader;
SET ROLE pcc_reader;
SELECT count(*) >= 1 AS sees_itself FROM pg_concurrency_control_backends();
SELECT count(*) FROM pg_concurrency_control_check();
SELECT pg_concurrency_control_reset();
RESET ROLE;
-- A DBA may grant reset to a role.
GRANT EXECUTE ON FUNCTION pg_concurrency_control_reset() TO pcc_reader;
SET ROLE pcc_reader;
SELECT pg_concurrency_control_reset();
RESET ROLE;
DROP OWNED BY pcc_reader;
DROP ROLE pcc_reader;
-- Upgrades: a later version appends columns to a function's row type and
-- to its view.  Grants and the views users built stay, and a library older
-- than the extension (a standby's, before its package upgrade) returns
-- NULL in the columns it does not know.
CREATE ROLE pcc_grafana;
GRANT EXECUTE ON FUNCTION pg_concurrency_control_backends() TO pcc_grafana;
CREATE VIEW pcc_dashboard AS SELECT gate, running FROM pg_concurrency_control;
CREATE VIEW pcc_direct AS SELECT * FROM pg_concurrency_control_status();
BEGIN;
ALTER TYPE pg_concurrency_control_status_row ADD ATTRIBUTE newer_column bigint;
CREATE OR REPLACE VIEW pg_concurrency_control AS
    SELECT * FROM pg_concurrency_control_status();
ALTER TYPE pg_concurrency_control_backends_row ADD ATTRIBUTE newer_column bigint;
SET ROLE pcc_grafana;
SELECT count(*) AS gates, count(newer_column) AS filled FROM pg_concurrency_control;
SELECT count(*) >= 1 AS sees_itself, count(newer_column) AS filled
  FROM pg_concurrency_control_backends();
RESET ROLE;
SELECT count(*) AS gates FROM pcc_dashboard;
SELECT count(*) AS gates FROM pcc_direct;
SELECT count((s).gate) AS gates, count((s).newer_column) AS filled
  FROM (SELECT pg_concurrency_control_status() AS s) x;
-- a dropped attribute is skipped
ALTER TYPE pg_concurrency_control_backends_row DROP ATTRIBUTE ticket;
SELECT count(*) >= 1 AS sees_itself FROM pg_concurrency_control_backends();
ROLLBACK;
-- A library newer than the installed definition (a package upgrade before
-- ALTER EXTENSION UPDATE) fills the columns that definition declares.
CREATE FUNCTION pcc_status_older(OUT running integer, OUT gate text)
RETURNS SETOF record
AS 'pg_concurrency_control', 'pg_concurrency_control_status' LANGUAGE C;
SELECT gate, running >= 0 AS counted FROM pcc_status_older() ORDER BY gate;
-- A definition that gives one of its columns another type is none of ours.
CREATE FUNCTION pcc_status_other(OUT gate text, OUT running bigint)
RETURNS SETOF record
AS 'pg_concurrency_control', 'pg_concurrency_control_status' LANGUAGE C;
SELECT count(*) FROM pcc_status_other();
DROP FUNCTION pcc_status_older(), pcc_status_other();
DROP VIEW pcc_dashboard, pcc_direct;
DROP OWNED BY pcc_grafana;
DROP ROLE pcc_grafana;
DROP EXTENSION pg_concurrency_control;
