-- The module is preloaded by the test configuration; the SQL interface
-- comes with the extension.  Install 1.0 and walk the upgrade path: the
-- library serves the old definitions of backends() and status() until the
-- update.
CREATE EXTENSION pg_concurrency_control VERSION '1.0';
SELECT gate, state FROM pg_concurrency_control_backends()
 WHERE pid = pg_backend_pid();
SELECT gate, running FROM pg_concurrency_control WHERE gate = 'query';
ALTER EXTENSION pg_concurrency_control UPDATE TO '1.2';
SELECT gate, state, ticket, turn FROM pg_concurrency_control_backends()
 WHERE pid = pg_backend_pid();
ALTER EXTENSION pg_concurrency_control UPDATE TO '1.3';
SELECT gate, auto, baseline_ms FROM pg_concurrency_control WHERE gate = 'query';
ALTER EXTENSION pg_concurrency_control UPDATE TO '1.4';
SELECT gate, auto, yielding FROM pg_concurrency_control WHERE gate = 'query';
ALTER EXTENSION pg_concurrency_control UPDATE TO '1.5';
SELECT gate, auto, ceiling FROM pg_concurrency_control WHERE gate = 'query';
ALTER EXTENSION pg_concurrency_control UPDATE;
SELECT extversion FROM pg_extension WHERE extname = 'pg_concurrency_control';
-- 1.2: the slots kept between the transactions of a turn.
SELECT gate, lingering, resumed FROM pg_concurrency_control ORDER BY gate;
SELECT gate, max_concurrency FROM pg_concurrency_control ORDER BY gate;
-- 1.4: whether an auto gate yields; 1.5 and 1.6: the ceiling and floor
-- its throughput trials allow; NULL on static gates.
SELECT gate, auto, yielding, ceiling, floor FROM pg_concurrency_control ORDER BY gate;
SELECT * FROM pg_concurrency_control_check();
-- This session runs the query, so exactly one query slot is in use.
SELECT gate, running, waiting FROM pg_concurrency_control ORDER BY gate;
-- It took its slot without queueing: no ticket, no turn; its session's
-- priority (1.3).
SELECT gate, state, ticket, turn, priority FROM pg_concurrency_control_backends()
 WHERE pid = pg_backend_pid() ORDER BY gate;
-- The admissions per gate since the last reset, for the classification tests.
CREATE FUNCTION pcc_admitted() RETURNS TABLE (gate text, admitted bigint)
LANGUAGE sql AS $$
  SELECT gate, admitted FROM pg_concurrency_control
   WHERE admitted > 0 ORDER BY gate
$$;
