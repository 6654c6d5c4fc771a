-- The module is preloaded by the test configuration; the SQL interface
-- comes with the extension.
CREATE EXTENSION pg_concurrency_control;
SELECT extversion FROM pg_extension WHERE extname = 'pg_concurrency_control';
-- The slots kept between the transactions of a turn, and how long turns
-- may make the next in line wait: max_turn_wait (no mean wait yet).
SELECT gate, lingering, resumed, turn_budget_ms FROM pg_concurrency_control ORDER BY gate;
SELECT gate, max_concurrency FROM pg_concurrency_control ORDER BY gate;
-- Whether an auto gate yields, the ceiling and floor its throughput
-- trials allow; NULL on static gates.
SELECT gate, auto, yielding, ceiling, floor FROM pg_concurrency_control ORDER BY gate;
SELECT * FROM pg_concurrency_control_check();
-- This session runs the query, so exactly one query slot is in use.
SELECT gate, running, waiting FROM pg_concurrency_control ORDER BY gate;
-- It took its slot without queueing: no ticket, no turn; its session's
-- priority.
SELECT gate, state, ticket, turn, priority FROM pg_concurrency_control_backends()
 WHERE pid = pg_backend_pid() ORDER BY gate;
-- The admissions per gate since the last reset, for the classification tests.
CREATE FUNCTION pcc_admitted() RETURNS TABLE (gate text, admitted bigint)
LANGUAGE sql AS $$
  SELECT gate, admitted FROM pg_concurrency_control
   WHERE admitted > 0 ORDER BY gate
$$;
