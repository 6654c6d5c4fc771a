-- The module's idea of a transaction follows xact.c on every path: chains,
-- failed commits, savepoints, procedures, implicit blocks, two-phase
-- commit; work PostgreSQL does at COMMIT is never gated.
-- What this session holds now, as "gate:state" (this SELECT's own slot
-- included when it runs outside a block).
CREATE FUNCTION pcc_mine() RETURNS text LANGUAGE sql AS $$
  SELECT string_agg(gate || ':' || state, ',' ORDER BY gate)
    FROM pg_concurrency_control_backends() WHERE pid = pg_backend_pid()
$$;
CREATE TABLE pcc_parent (id int PRIMARY KEY);
CREATE TABLE pcc_child (id int PRIMARY KEY,
  parent int REFERENCES pcc_parent DEFERRABLE INITIALLY DEFERRED);
INSERT INTO pcc_parent VALUES (1);
-- a deferred constraint trigger that reads (a query, at COMMIT)
CREATE FUNCTION pcc_recheck() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM count(*) FROM pcc_parent;
  RETURN NULL;
END $$;
CREATE CONSTRAINT TRIGGER pcc_child_recheck AFTER INSERT ON pcc_child
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION pcc_recheck();
CREATE PROCEDURE pcc_insert(a int, b int) LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO pcc_child VALUES (a, 1);
  COMMIT;
  INSERT INTO pcc_child VALUES (b, 1);
END $$;
-- Commit-time work of a transaction that was never admitted (DO, CALL,
-- COPY: utility statements) takes no slot: the deferred foreign-key check
-- (SELECT ... FOR KEY SHARE) and the constraint trigger's query run with
-- no active portal.
SELECT pg_concurrency_control_reset();
DO $$ BEGIN INSERT INTO pcc_child VALUES (1, 1); END $$;
CALL pcc_insert(2, 3);
COPY pcc_child FROM stdin;
4	1
\.
SELECT * FROM pcc_admitted();
-- ... and a commit-time failure is the constraint's, not the gate's.
DO $$ BEGIN INSERT INTO pcc_child VALUES (5, 99); END $$;
SELECT count(*) FROM pcc_child;
-- A function evaluated by ExecutorStart (initial partition pruning) runs a
-- big statement: it is nested, no bigquery slot is taken.
CREATE TABLE pcc_parted (k int) PARTITION BY LIST (k);
CREATE TABLE pcc_parted_1 PARTITION OF pcc_parted FOR VALUES IN (1);
CREATE TABLE pcc_parted_2 PARTITION OF pcc_parted FOR VALUES IN (2);
CREATE FUNCTION pcc_big_key() RETURNS int STABLE LANGUAGE plpgsql AS $$
DECLARE r int;
BEGIN
  EXECUTE '/*+bigsql*/ SELECT 1' INTO r;
  RETURN r;
END $$;
EXPLAIN (COSTS OFF) SELECT count(*) FROM pcc_parted WHERE k = pcc_big_key();
SELECT pg_concurrency_control_reset();
BEGIN;
SELECT count(*) FROM pcc_parted WHERE k = pcc_big_key();
COMMIT;
SELECT * FROM pcc_admitted();
-- COMMIT AND CHAIN: the chained block takes a transaction slot at its
-- first statement; a savepoint rolled back keeps it.
BEGIN;
SELECT pcc_mine();
COMMIT AND CHAIN;
SELECT pcc_mine();
SAVEPOINT s;
SELECT 1 / 0;
ROLLBACK TO s;
SELECT pcc_mine();
COMMIT;
-- ROLLBACK AND CHAIN out of an aborted block starts a block: it holds a
-- transaction slot.
BEGIN;
SELECT 1 / 0;
ROLLBACK AND CHAIN;
SELECT pcc_mine();
ROLLBACK;
-- A COMMIT AND CHAIN whose commit fails does not chain: what follows is
-- autocommit.
BEGIN;
INSERT INTO pcc_child VALUES (6, 99);
COMMIT AND CHAIN;
SELECT pcc_mine();
-- SET TRANSACTION opens a chained block's settings; its first query takes
-- the slot.
BEGIN;
COMMIT AND CHAIN;
SET TRANSACTION ISOLATION LEVEL REPEATABLE READ;
SELECT current_setting('transaction_isolation') AS isolation, pcc_mine();
COMMIT;
-- PREPARE TRANSACTION in a chained block gives the slot back.
BEGIN;
COMMIT AND CHAIN;
INSERT INTO pcc_child VALUES (7, 1);
PREPARE TRANSACTION 'pcc_chain';
SELECT running FROM pg_concurrency_control WHERE gate = 'transaction';
COMMIT PREPARED 'pcc_chain';
-- The implicit block of a multi-statement query string is a block: one
-- transaction slot, and a bigquery slot for its big statement.
SELECT pg_concurrency_control_reset();
SELECT 1 AS a \; /*+bigsql*/ SELECT pcc_mine() AS held;
SELECT * FROM pcc_admitted();
SELECT pcc_mine();
-- What looks like a hint in a literal of the statement before is none,
-- whatever the comment in front of the next one.
SELECT '/*+bigsql' AS a \; /*/ x */ SELECT pcc_mine() AS held;
SELECT 'x /*+bigsql' AS a \; -- */
SELECT pcc_mine() AS held;
-- A statement of the string may change how the rest would lex: the
-- comments in front of the next statement are found all the same.
SET standard_conforming_strings = on;
SET standard_conforming_strings = off \; SELECT 'C:\' AS path \; /*+bigsql*/ SELECT pcc_mine() AS held;
RESET standard_conforming_strings;
-- A ';' in a literal of the statement before makes no hint, whatever
-- follows it on its line; a ';' in a comment in front of a statement, with
-- a line comment after it, is no statement's end.
SELECT E'SELECT \';/*+bigsql*/ --\' AS a;\nSELECT pcc_mine() AS held' \gexec
SELECT E'SELECT 1 AS a; /*+bigsql ; -- */ SELECT pcc_mine() AS held' \gexec
SELECT E'SELECT 1 AS a; /* x; /*+bigsql*/ -- */ SELECT pcc_mine() AS held' \gexec
SELECT * FROM pg_concurrency_control_check();
DROP TABLE pcc_child, pcc_parent, pcc_parted;
DROP PROCEDURE pcc_insert;
DROP FUNCTION pcc_recheck, pcc_big_key, pcc_mine;
