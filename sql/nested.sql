-- Only top-level statements are gated: what a statement runs inside it
-- (functions, triggers, DO bodies, planning-time evaluation) takes no
-- slot of its own.
CREATE TABLE pcc_n (id int PRIMARY KEY, v int);
CREATE TABLE pcc_log (id int, v int);
INSERT INTO pcc_n VALUES (1, 0);
CREATE FUNCTION pcc_bump(n int) RETURNS int LANGUAGE plpgsql AS $$
BEGIN
  FOR i IN 1..n LOOP
    UPDATE pcc_n SET v = v + 1 WHERE id = 1;
  END LOOP;
  RETURN (SELECT v FROM pcc_n WHERE id = 1);
END $$;
CREATE FUNCTION pcc_sql_read() RETURNS bigint LANGUAGE sql IMMUTABLE AS
  $$ SELECT count(*) FROM generate_series(1, 3) $$;
CREATE FUNCTION pcc_log_it() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO pcc_log VALUES (NEW.id, NEW.v);
  PERFORM count(*) FROM pcc_log;
  RETURN NEW;
END $$;
CREATE TRIGGER pcc_n_log AFTER UPDATE ON pcc_n
  FOR EACH ROW EXECUTE FUNCTION pcc_log_it();
-- one query slot for the call, none for the three updates or triggers
SELECT pg_concurrency_control_reset();
SELECT pcc_bump(3);
SELECT * FROM pcc_admitted();
-- evaluated by the planner: no admission of its own
SELECT pg_concurrency_control_reset();
SELECT pcc_sql_read() + 0 AS folded;
SELECT * FROM pcc_admitted();
-- a DO block is a utility statement: its statements are not gated
SELECT pg_concurrency_control_reset();
DO $$ BEGIN PERFORM pcc_bump(2); UPDATE pcc_n SET v = 0; END $$;
SELECT * FROM pcc_admitted();
-- what a utility runs before its query is not gated: EXECUTE's parameters
-- (pcc_bump's UPDATE takes no autocommit slot; the read takes a query one)
PREPARE pcc_rd(int) AS SELECT $1 AS r;
SELECT pg_concurrency_control_reset();
EXECUTE pcc_rd(pcc_bump(1));
SELECT * FROM pcc_admitted();
-- also when explained, which takes nothing
SELECT pg_concurrency_control_reset();
EXPLAIN (COSTS OFF) EXECUTE pcc_rd(pcc_bump(1));
SELECT * FROM pcc_admitted();
-- a table created from EXECUTE's query writes
SELECT pg_concurrency_control_reset();
CREATE TABLE pcc_ctas_exec AS EXECUTE pcc_rd(pcc_bump(1));
SELECT * FROM pcc_admitted();
-- CREATE TABLE AS's event triggers (their read takes no query slot)
CREATE FUNCTION pcc_ddl_read() RETURNS event_trigger LANGUAGE plpgsql AS
  $$ BEGIN PERFORM count(*) FROM pcc_n; END $$;
CREATE EVENT TRIGGER pcc_ddl ON ddl_command_start
  WHEN TAG IN ('CREATE TABLE AS') EXECUTE FUNCTION pcc_ddl_read();
SELECT pg_concurrency_control_reset();
CREATE TABLE pcc_ctas AS SELECT 1 AS x;
SELECT * FROM pcc_admitted();
DROP EVENT TRIGGER pcc_ddl;
DROP TABLE pcc_ctas, pcc_ctas_exec;
DEALLOCATE pcc_rd;
-- bypass: nothing is gated for this session
SET pg_concurrency_control.bypass = on;
SELECT pg_concurrency_control_reset();
UPDATE pcc_n SET v = 1;
BEGIN;
SELECT /*+bigsql*/ 1 AS big;
COMMIT;
RESET pg_concurrency_control.bypass;
SELECT * FROM pcc_admitted();
-- a cursor holds its bigquery slot until closed, then gives it back
SELECT pg_concurrency_control_reset();
BEGIN;
/*+bigsql*/ DECLARE c CURSOR FOR SELECT g FROM generate_series(1, 3) g;
FETCH 1 FROM c;
SELECT gate, running FROM pg_concurrency_control WHERE gate = 'bigquery';
CLOSE c;
SELECT gate, running FROM pg_concurrency_control WHERE gate = 'bigquery';
-- one that cannot scroll gives it back once a fetch finds no more rows, not
-- at FETCH 0 (which runs nothing); a scrollable one keeps it until closed
/*+bigsql*/ DECLARE n NO SCROLL CURSOR FOR SELECT g FROM generate_series(1, 3) g;
FETCH 0 FROM n;
SELECT gate, running FROM pg_concurrency_control WHERE gate = 'bigquery';
FETCH ALL FROM n;
SELECT gate, running FROM pg_concurrency_control WHERE gate = 'bigquery';
CLOSE n;
/*+bigsql*/ DECLARE s SCROLL CURSOR FOR SELECT g FROM generate_series(1, 3) g;
FETCH ALL FROM s;
SELECT gate, running FROM pg_concurrency_control WHERE gate = 'bigquery';
FETCH FIRST FROM s;
CLOSE s;
SELECT gate, running FROM pg_concurrency_control WHERE gate = 'bigquery';
-- an error in a savepoint releases the statement slot, not the block's
SAVEPOINT s;
SELECT /*+bigsql*/ 1/0;
ROLLBACK TO SAVEPOINT s;
SELECT gate, running FROM pg_concurrency_control
 WHERE gate IN ('bigquery', 'transaction') ORDER BY gate;
COMMIT;
-- a holdable cursor is materialised at COMMIT: no slot survives the block
BEGIN;
/*+bigsql*/ DECLARE h CURSOR WITH HOLD FOR SELECT g FROM generate_series(1, 3) g;
COMMIT;
SELECT gate, running FROM pg_concurrency_control
 WHERE gate IN ('bigquery', 'transaction') ORDER BY gate;
FETCH ALL FROM h;
CLOSE h;
-- a cursor whose FETCH failed in a savepoint is dead: its slot goes back
-- with the savepoint, not at the end of the block
BEGIN;
/*+bigsql*/ DECLARE f NO SCROLL CURSOR FOR SELECT 1 / (g - 2) FROM generate_series(1, 3) g;
SAVEPOINT s;
FETCH ALL FROM f;
ROLLBACK TO SAVEPOINT s;
SELECT gate, running FROM pg_concurrency_control WHERE gate = 'bigquery';
COMMIT;
-- parallel workers are never gated: one admission for the whole query
CREATE TABLE pcc_par AS SELECT g AS x FROM generate_series(1, 20000) g;
ANALYZE pcc_par;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
EXPLAIN (COSTS OFF) SELECT count(*) FROM pcc_par;
SELECT pg_concurrency_control_reset();
SELECT count(*) FROM pcc_par;
SELECT * FROM pcc_admitted();
RESET ALL;
-- PREPARE TRANSACTION frees the slot; COMMIT PREPARED needs none
BEGIN;
UPDATE pcc_n SET v = 7;
PREPARE TRANSACTION 'pcc_gid';
SELECT gate, running FROM pg_concurrency_control WHERE gate = 'transaction';
COMMIT PREPARED 'pcc_gid';
SELECT * FROM pg_concurrency_control_check();
