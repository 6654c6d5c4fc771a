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
DROP EXTENSION pg_concurrency_control;
