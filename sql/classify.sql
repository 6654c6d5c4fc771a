-- Which gate each kind of statement takes, read from the totals.
-- Each probe resets the totals, runs a statement, then reads them back
-- (the reading SELECT itself is one query admission).
CREATE TABLE pcc_t (id int PRIMARY KEY, v int);
SELECT pg_concurrency_control_reset();
INSERT INTO pcc_t VALUES (1, 1), (2, 2);
SELECT * FROM pcc_admitted();
SELECT pg_concurrency_control_reset();
UPDATE pcc_t SET v = v + 1 WHERE id = 1;
SELECT * FROM pcc_admitted();
SELECT pg_concurrency_control_reset();
SELECT id FROM pcc_t WHERE id = 1 FOR UPDATE;
SELECT * FROM pcc_admitted();
SELECT pg_concurrency_control_reset();
WITH d AS (DELETE FROM pcc_t WHERE id = 99 RETURNING *) SELECT count(*) FROM d;
SELECT * FROM pcc_admitted();
SELECT pg_concurrency_control_reset();
CREATE TABLE pcc_copy AS SELECT * FROM pcc_t;
SELECT * FROM pcc_admitted();
SELECT pg_concurrency_control_reset();
SELECT count(*) FROM pcc_t;
SELECT * FROM pcc_admitted();
-- Utility statements outside a block take no slot.
SELECT pg_concurrency_control_reset();
CREATE INDEX ON pcc_copy (id);
VACUUM pcc_copy;
SELECT * FROM pcc_admitted();
-- A transaction block takes one transaction slot, whatever it runs.
SELECT pg_concurrency_control_reset();
BEGIN;
SELECT count(*) FROM pcc_t;
UPDATE pcc_t SET v = 0 WHERE id = 2;
COMMIT;
SELECT * FROM pcc_admitted();
-- Big statements: the hint at the start or after the first keyword.
SELECT pg_concurrency_control_reset();
/*+bigsql*/ SELECT count(*) FROM pcc_t;
SELECT * FROM pcc_admitted();
SELECT pg_concurrency_control_reset();
SELECT /*+ BigSQL */ count(*) FROM pcc_t;
SELECT * FROM pcc_admitted();
SELECT pg_concurrency_control_reset();
-- a big write still takes the bigquery gate
UPDATE /*+bigsql*/ pcc_t SET v = 1 WHERE id = 1;
SELECT * FROM pcc_admitted();
-- Spoofing: inside a literal, a later comment, or without the plus sign.
SELECT pg_concurrency_control_reset();
SELECT '/*+bigsql*/' AS x;
SELECT count(*) /*+bigsql*/ FROM pcc_t;
/* bigsql */ SELECT 1 AS one;
SELECT /*+bigsqlx*/ 2 AS two;
SELECT * FROM pcc_admitted();
-- A big statement inside a block takes a bigquery slot for the statement.
SELECT pg_concurrency_control_reset();
BEGIN;
SELECT /*+bigsql*/ count(*) FROM pcc_t;
SELECT gate, running FROM pg_concurrency_control
 WHERE gate IN ('bigquery', 'transaction') ORDER BY gate;
COMMIT;
SELECT * FROM pcc_admitted();
-- Cost threshold: off by default, then every plan costs at least 0.
SELECT pg_concurrency_control_reset();
SET pg_concurrency_control.bigquery_cost_threshold = 0;
SELECT count(*) FROM pcc_t;
RESET pg_concurrency_control.bigquery_cost_threshold;
SELECT * FROM pcc_admitted();
SET pg_concurrency_control.bigquery_cost_threshold = 1e9;
SELECT pg_concurrency_control_reset();
SELECT count(*) FROM pcc_t;
RESET pg_concurrency_control.bigquery_cost_threshold;
SELECT * FROM pcc_admitted();
-- Several statements in one query string are an implicit block: one
-- transaction slot for all three.
SELECT pg_concurrency_control_reset();
SELECT 1 AS a \; SELECT 2 AS b \; UPDATE pcc_t SET v = 3 WHERE id = 1;
SELECT * FROM pcc_admitted();
-- Prepared statements and EXECUTE are gated like the statement.
SELECT pg_concurrency_control_reset();
PREPARE upd AS UPDATE pcc_t SET v = v + 1 WHERE id = $1;
EXECUTE upd(1);
SELECT * FROM pcc_admitted();
DEALLOCATE upd;
-- EXECUTE carries its own hint, or the prepared statement's.
PREPARE cnt AS SELECT count(*) FROM pcc_t;
SELECT pg_concurrency_control_reset();
/*+bigsql*/ EXECUTE cnt;
SELECT * FROM pcc_admitted();
DEALLOCATE cnt;
-- A utility's query in a string of several statements has the utility's
-- hint, not the first statement's.
SELECT pg_concurrency_control_reset();
SELECT 1 AS a \; /*+bigsql*/ CREATE TABLE pcc_multi1 AS SELECT 1 AS b;
SELECT * FROM pcc_admitted();
SELECT pg_concurrency_control_reset();
/*+bigsql*/ SELECT 1 AS a \; CREATE TABLE pcc_multi2 AS SELECT 1 AS b;
SELECT * FROM pcc_admitted();
DROP TABLE pcc_multi1, pcc_multi2;
-- the same sent without a final ';' (PostgreSQL 18 locates such a last
-- statement differently)
SELECT pg_concurrency_control_reset();
SELECT 'SELECT 1 AS a; /*+bigsql*/ CREATE TABLE pcc_multi3 AS SELECT 1 AS b' \gexec
SELECT * FROM pcc_admitted();
SELECT pg_concurrency_control_reset();
SELECT '/*+bigsql*/ SELECT 1 AS a; CREATE TABLE pcc_multi4 AS SELECT 1 AS b' \gexec
SELECT * FROM pcc_admitted();
DROP TABLE pcc_multi3, pcc_multi4;
-- A statement rules rewrite into several is a write if any of them
-- writes: the rule's SELECT runs first, the UPDATE after it.
CREATE TABLE pcc_ruled (id int PRIMARY KEY, v int);
INSERT INTO pcc_ruled VALUES (1, 1);
CREATE RULE pcc_ruled_also AS ON UPDATE TO pcc_ruled DO ALSO SELECT 1 AS also;
SELECT pg_concurrency_control_reset();
UPDATE pcc_ruled SET v = v + 1 WHERE id = 1;
SELECT * FROM pcc_admitted();
-- so under EXECUTE and EXPLAIN ANALYZE
PREPARE ruled AS UPDATE pcc_ruled SET v = v + 1 WHERE id = 1;
SELECT pg_concurrency_control_reset();
EXECUTE ruled;
SELECT * FROM pcc_admitted();
DEALLOCATE ruled;
SELECT pg_concurrency_control_reset();
\o /dev/null
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) UPDATE pcc_ruled SET v = v + 1 WHERE id = 1;
\o
SELECT * FROM pcc_admitted();
-- the rule's action has the hint of the statement it comes from (none
-- here), not the first statement's of the string
SELECT pg_concurrency_control_reset();
/*+bigsql*/ SELECT 1 AS a \; UPDATE pcc_ruled SET v = v + 1 WHERE id = 1;
SELECT * FROM pcc_admitted();
DROP TABLE pcc_ruled;
-- EXPLAIN runs nothing; EXPLAIN ANALYZE runs the statement.
SELECT pg_concurrency_control_reset();
EXPLAIN (COSTS OFF) SELECT * FROM pcc_t;
SELECT * FROM pcc_admitted();
SELECT pg_concurrency_control_reset();
-- (its output differs between versions: only the admissions are shown)
\o /dev/null
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) UPDATE pcc_t SET v = 5 WHERE id = 2;
\o
SELECT * FROM pcc_admitted();
-- REFRESH MATERIALIZED VIEW takes a slot before it runs, as a write, big
-- when it carries the hint.
CREATE MATERIALIZED VIEW pcc_mv AS SELECT id, v FROM pcc_t;
CREATE UNIQUE INDEX ON pcc_mv (id);
SELECT pg_concurrency_control_reset();
REFRESH MATERIALIZED VIEW pcc_mv;
SELECT * FROM pcc_admitted();
SELECT pg_concurrency_control_reset();
/*+bigsql*/ REFRESH MATERIALIZED VIEW CONCURRENTLY pcc_mv;
SELECT * FROM pcc_admitted();
-- in a block, the block's slot alone
SELECT pg_concurrency_control_reset();
BEGIN;
/*+bigsql*/ REFRESH MATERIALIZED VIEW pcc_mv;
COMMIT;
SELECT * FROM pcc_admitted();
DROP MATERIALIZED VIEW pcc_mv;
-- A line comment ends at a carriage return too, as in the core scanner.
SELECT pg_concurrency_control_reset();
SELECT E'--x\r/*+bigsql*/ SELECT 1' \gexec
SELECT * FROM pcc_admitted();
-- Rolled-back and failed statements give their slot back.
SELECT pg_concurrency_control_reset();
INSERT INTO pcc_t VALUES (1, 1);
BEGIN;
SELECT 1/0;
ROLLBACK;
SELECT gate, running FROM pg_concurrency_control ORDER BY gate;
SELECT * FROM pg_concurrency_control_check();
DROP TABLE pcc_copy;
