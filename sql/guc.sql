-- Every parameter exists with its documented default and unit.
SELECT name, setting, unit, context, vartype, min_val, max_val
  FROM pg_settings WHERE name LIKE 'pg_concurrency_control.%' ORDER BY name;
SELECT enumvals FROM pg_settings
 WHERE name = 'pg_concurrency_control.timeout_action';
-- Limits are server-wide: a session cannot change them.
SET pg_concurrency_control.query_concurrency = 10;
SET pg_concurrency_control.enabled = off;
-- Session settings accept units and the RDS spellings.
SET pg_concurrency_control.control_timeout = '2s';
SHOW pg_concurrency_control.control_timeout;
SET pg_concurrency_control.timeout_action = 'TCC_break';
SHOW pg_concurrency_control.timeout_action;
SET pg_concurrency_control.timeout_action = 'tcc_wait';
SHOW pg_concurrency_control.timeout_action;
SET pg_concurrency_control.bigsql_timeout_action = 'TCC_rollback';
SHOW pg_concurrency_control.bigsql_timeout_action;
SET pg_concurrency_control.priority = 'HIGH';
SHOW pg_concurrency_control.priority;
SET pg_concurrency_control.workload_group = reporting;
SHOW pg_concurrency_control.workload_group;
-- Bad values are rejected and the old value kept.
SET pg_concurrency_control.control_timeout = -1;
SET pg_concurrency_control.control_timeout = 'soon';
SHOW pg_concurrency_control.control_timeout;
SET pg_concurrency_control.timeout_action = 'TCC_retry';
SET pg_concurrency_control.bigquery_cost_threshold = -2;
SET pg_concurrency_control.bypass = 'maybe';
SET pg_concurrency_control.priority = 'urgent';
SET pg_concurrency_control.priority = 'in block';
SET pg_concurrency_control.workload_group = 'two words';
SET pg_concurrency_control.workload_group = 'a_name_far_too_long_for_a_group_1';
-- The prefix is reserved: a typo is an error, not a silent placeholder.
SET pg_concurrency_control.query_concurency = 5;
-- Server-wide parameters are checked by ALTER SYSTEM as a reload checks them.
ALTER SYSTEM SET pg_concurrency_control.query_concurrency = -2;
ALTER SYSTEM SET pg_concurrency_control.transaction_concurrency = 'many';
ALTER SYSTEM SET pg_concurrency_control.quantum = -5;
ALTER SYSTEM SET pg_concurrency_control.quantum = '2min';
ALTER SYSTEM SET pg_concurrency_control.quantum = 'soon';
ALTER SYSTEM SET pg_concurrency_control.queue_order = 'lifo';
ALTER SYSTEM SET pg_concurrency_control.priority_aging = '2h';
ALTER SYSTEM SET pg_concurrency_control.groups = 'reporting=4, reporting=2';
ALTER SYSTEM SET pg_concurrency_control.groups = 'Reporting=4';
ALTER SYSTEM SET pg_concurrency_control.groups = 'reporting=-1';
ALTER SYSTEM SET pg_concurrency_control.groups = 'reporting';
ALTER SYSTEM SET pg_concurrency_control.groups = 'reporting=4 batch=2';
ALTER SYSTEM SET pg_concurrency_control.quantom = '5ms';
ALTER SYSTEM SET pg_concurrency_control.quantum = '20ms';
ALTER SYSTEM RESET pg_concurrency_control.quantum;
SHOW pg_concurrency_control.quantum;
-- turn_grace takes fractions of a millisecond, up to a second.
ALTER SYSTEM SET pg_concurrency_control.turn_grace = '2s';
ALTER SYSTEM SET pg_concurrency_control.turn_grace = '200us';
ALTER SYSTEM RESET pg_concurrency_control.turn_grace;
-- max_turn_wait: milliseconds up to a minute.
ALTER SYSTEM SET pg_concurrency_control.max_turn_wait = '2min';
ALTER SYSTEM SET pg_concurrency_control.max_turn_wait = '500ms';
ALTER SYSTEM RESET pg_concurrency_control.max_turn_wait;
RESET ALL;
-- Ordinary users cannot set the superuser parameters.
CREATE ROLE pcc_user;
SET ROLE pcc_user;
SET pg_concurrency_control.bypass = on;
SET pg_concurrency_control.control_timeout = '1ms';
SET pg_concurrency_control.timeout_action = 'proceed';
SET pg_concurrency_control.bigquery_cost_threshold = 1e9;
SET pg_concurrency_control.priority = high;
SET pg_concurrency_control.workload_group = '';
SELECT pg_concurrency_control_reset();
RESET ROLE;
-- A superuser gives a role its priority; its sessions start with it.
ALTER ROLE pcc_user SET pg_concurrency_control.priority = low;
SELECT setconfig FROM pg_db_role_setting
 WHERE setrole = 'pcc_user'::regrole;
DROP ROLE pcc_user;
