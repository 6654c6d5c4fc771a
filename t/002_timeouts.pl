# control_timeout with each action, bigsql_control_timeout, max_waiters.
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use PccTest;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = pcc_node('timeouts',
	"pg_concurrency_control.transaction_concurrency = 1",
	"pg_concurrency_control.bigquery_concurrency = 1",
	"deadlock_timeout = '10min'");
my $holder = session($node);
my $other = session($node);
my $w = session($node);

$holder->query_safe('BEGIN');

# --- error (TCC_rollback): SQLSTATE 53000, message with gate, limit, queue, time
$w->query_safe("SET pg_concurrency_control.control_timeout = '300ms'");
$w->query_safe("SET pg_concurrency_control.timeout_action = 'TCC_rollback'");
$w->query_safe('\set VERBOSITY verbose');
$w->query('BEGIN');
my $err = $w->{stderr};
like($err, qr/ERROR:  53000: timed out after \d+ ms waiting for the transaction gate/,
	'timeout with error: SQLSTATE 53000 names the gate and the wait');
like($err, qr/DETAIL:  The gate admits 1 at a time and 1 session was queued/,
	'the detail gives the limit and the queue');
like($err, qr/HINT:  Raise pg_concurrency_control.transaction_concurrency/,
	'the hint names the GUC to raise');
$w->{stderr} = '';
is($w->query_safe('SELECT 1'), '1', 'the failed BEGIN left no aborted block behind');
is(gate_value($node, 'transaction',
		"timeouts || '/' || rejected || '/' || waiting || '/' || abandoned"),
	'1/1/0/0', 'timeout counted, waiter gone, not as an abandoned wait');

# --- proceed (TCC_break): runs without a slot, counted as overcommitted
$w->query_safe("SET pg_concurrency_control.timeout_action = 'TCC_break'");
$w->query_safe('BEGIN');
is(gate_value($node, 'transaction', "running || '/' || overcommitted"),
	'1/1', 'proceed: block runs, not counted as running, counted as overcommitted');
$w->query_safe('COMMIT');
is(gate_value($node, 'transaction', 'running'), '1', 'an overcommitted block releases nothing');

# --- wait (TCC_wait): counted as a timeout, keeps waiting
$w->query_safe("SET pg_concurrency_control.timeout_action = 'wait'");
send_sql($w, 'BEGIN;');
ok(wait_gate($node, 'transaction', 'timeouts', 2), 'wait: the timeout is counted');
is(gate_value($node, 'transaction', 'waiting'), '1', 'and the session still waits');
$holder->query_safe('COMMIT');
ok(wait_gate($node, 'transaction', 'waiting', 0), 'it is admitted when the holder commits');
finish($w);
$w->query_safe('COMMIT');

# --- bigquery has its own timeout and action
$holder->query_safe("SET pg_concurrency_control.bigsql_control_timeout = '10s'");
send_sql($holder, 'SELECT /*+bigsql*/ pg_sleep(3);');
ok(wait_gate($node, 'bigquery', 'running', 1), 'a big query runs');
$w->query_safe("SET pg_concurrency_control.control_timeout = '1h'");
$w->query_safe("SET pg_concurrency_control.bigsql_control_timeout = '200ms'");
$w->query_safe("SET pg_concurrency_control.bigsql_timeout_action = 'error'");
$w->query('SELECT /*+bigsql*/ 1');
like($w->{stderr}, qr/timed out after \d+ ms waiting for the bigquery gate.*bigsql_control_timeout/s,
	'bigsql_control_timeout applies to the bigquery gate');
$w->{stderr} = '';
finish($holder);

# --- max_waiters: a newcomer finding the queue full fails at once
pcc_reload($node, max_waiters => 1);
$w->query_safe('RESET ALL');
$holder->query_safe('BEGIN');
send_sql($other, 'BEGIN;');
ok(wait_gate($node, 'transaction', 'waiting', 1), 'one waiter fills the queue');
my $t0 = time();
$w->query('BEGIN');
like($w->{stderr}, qr/ERROR:  53400: too many sessions waiting for the transaction gate/,
	'queue full: SQLSTATE 53400');
ok(time() - $t0 < 5, 'rejected at once');
$w->{stderr} = '';
is(gate_value($node, 'transaction', "waiting || '/' || rejected"), '1/2',
	'the queued waiter is kept, the rejection counted');
$holder->query_safe('COMMIT');
finish($other);
$other->query_safe('COMMIT');
no_problems($node, 'timeouts');

$_->quit for ($holder, $other, $w);
$node->stop;
done_testing();
