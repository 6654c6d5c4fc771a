# Blocking, FIFO order, reloads, enabled and bypass, across sessions.
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use PccTest;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);

my $node = pcc_node('gates',
	"pg_concurrency_control.transaction_concurrency = 2",
	"deadlock_timeout = '10min'");
$node->safe_psql('postgres',
	'CREATE TABLE admissions (seq serial, who text); CREATE TABLE t (x int)');

# --- a third BEGIN waits with limit 2 and proceeds when one commits
my @s = map { session($node) } 1 .. 3;
$s[0]->query_safe('BEGIN');
$s[1]->query_safe('BEGIN');
send_sql($s[2], 'BEGIN;');
ok(wait_gate($node, 'transaction', 'waiting', 1), 'third BEGIN queues');
is( $node->safe_psql('pccmon',
		"SELECT wait_event_type || '/' || wait_event FROM pg_stat_activity WHERE query = 'BEGIN;' AND state = 'active'"),
	$node->pg_version >= 17 ? 'Extension/ConcurrencyControlQueue' : 'Extension/Extension',
	'the waiter shows wait event type Extension (named on 17 and later)');
is( $node->safe_psql('pccmon',
		"SELECT state FROM pg_concurrency_control_backends() WHERE gate = 'transaction' ORDER BY state"),
	"running\nrunning\nwaiting",
	'backends(): two running, one waiting');
is(gate_value($node, 'transaction', 'running'), '2', 'running is at the limit');
$s[0]->query_safe('COMMIT');
ok(wait_gate($node, 'transaction', 'waiting', 0), 'the waiter is admitted after a COMMIT');
finish($s[2]);
is(gate_value($node, 'transaction', 'running || \'/\' || queued'), '2/1',
	'two running, one admitted after queueing');
$s[1]->query_safe('ROLLBACK');
$s[2]->query_safe('COMMIT');
ok(wait_gate($node, 'transaction', 'running', 0), 'all slots returned');
no_problems($node, 'blocking');

# --- FIFO: three waiters are admitted in arrival order
pcc_reload($node, transaction_concurrency => 1);
my @w = map { session($node) } 1 .. 3;
my @pids = map { backend_pid($_) } @w;
$s[0]->query_safe('BEGIN');
for my $i (0 .. 2)
{
	send_sql($w[$i],
		"BEGIN; INSERT INTO admissions (who) VALUES ('w$i'); COMMIT;");
	ok(wait_gate($node, 'transaction', 'waiting', $i + 1), "waiter $i queued");
}
is( $node->safe_psql('pccmon',
		"SELECT string_agg(pid::text, ',' ORDER BY ticket) FROM pg_concurrency_control_backends()"
		  . " WHERE gate = 'transaction' AND state = 'waiting' AND turn IS NULL"),
	join(',', @pids), 'backends(): waiters hold tickets in arrival order');
$s[0]->query_safe('COMMIT');
finish($_) for @w;
is($node->safe_psql('postgres', 'SELECT string_agg(who, \',\' ORDER BY seq) FROM admissions'),
	'w0,w1,w2', 'admitted in FIFO order');
no_problems($node, 'FIFO');

# --- each statement gate blocks at its limit; bypass unblocks the lock
pcc_reload($node,
	transaction_concurrency => 0,
	query_concurrency => 1,
	autocommit_concurrency => 1,
	bigquery_concurrency => 1);
my $locker = session($node);
$locker->query_safe('SET pg_concurrency_control.bypass = on');
my %cases = (
	query => [ 'SELECT pg_advisory_lock(7), pg_advisory_unlock(7);', 'SELECT 1;' ],
	autocommit => [
		'INSERT INTO t SELECT 1 FROM (SELECT pg_advisory_lock(7), pg_advisory_unlock(7)) l;',
		'INSERT INTO t VALUES (2);' ],
	bigquery => [
		'SELECT /*+bigsql*/ pg_advisory_lock(7), pg_advisory_unlock(7);',
		'SELECT /*+bigsql*/ 2;' ]);
for my $gate (sort keys %cases)
{
	my ($hold, $wait) = @{ $cases{$gate} };
	$locker->query_safe('SELECT pg_advisory_lock(7)');
	send_sql($s[0], $hold);
	ok(wait_gate($node, $gate, 'running', 1), "$gate: holder admitted");
	send_sql($s[1], $wait);
	ok(wait_gate($node, $gate, 'waiting', 1), "$gate: second statement waits");
	$locker->query_safe('SELECT pg_advisory_unlock(7)');
	# the waiter first: finish() runs a SELECT, which would queue for the
	# query slot behind the waiter
	my ($out, $err) = finish($s[1]);
	finish($s[0]);
	is($err, '', "$gate: waiter ran once the holder finished");
	is(gate_value($node, $gate, 'running || \'/\' || waiting || \'/\' || queued'),
		'0/0/1', "$gate: counters exact");
}
no_problems($node, 'per-gate blocking');

# --- REFRESH MATERIALIZED VIEW waits for its slot before it locks the view
$node->safe_psql('postgres', 'CREATE MATERIALIZED VIEW mv AS SELECT x FROM t');
$locker->query_safe('SELECT pg_advisory_lock(7)');
send_sql($s[0], 'SELECT /*+bigsql*/ pg_advisory_lock(7), pg_advisory_unlock(7);');
ok(wait_gate($node, 'bigquery', 'running', 1), 'refresh: a big query holds the slot');
send_sql($s[1], '/*+bigsql*/ REFRESH MATERIALIZED VIEW mv;');
ok(wait_gate($node, 'bigquery', 'waiting', 1), 'refresh: a hinted REFRESH waits for it');
$locker->query_safe("SET lock_timeout = '2s'");
$locker->query('SELECT count(*) FROM mv');
is($locker->{stderr}, '', 'refresh: the view stays readable meanwhile (no lock is held)');
$locker->{stderr} = '';
$locker->query_safe('RESET lock_timeout');
$locker->query_safe('SELECT pg_advisory_unlock(7)');
my ($rout, $rerr) = finish($s[1]);
finish($s[0]);
is($rerr, '', 'refresh: it runs once the slot is free');
is(gate_value($node, 'bigquery', 'running || \'/\' || waiting'), '0/0', 'refresh: counters exact');
no_problems($node, 'a REFRESH that waited');

# --- reload: raising admits waiters at once, lowering lets work finish
pcc_reload($node,
	transaction_concurrency => 1,
	query_concurrency => 0,
	autocommit_concurrency => 0,
	bigquery_concurrency => 0);
$s[0]->query_safe('BEGIN');
send_sql($w[0], 'BEGIN;');
send_sql($w[1], 'BEGIN;');
ok(wait_gate($node, 'transaction', 'waiting', 2), 'two waiters at limit 1');
pcc_reload($node, transaction_concurrency => 3);
ok(wait_gate($node, 'transaction', 'running || \'/\' || waiting', '3/0'),
	'raising the limit admits both waiters');
finish($_) for @w[ 0 .. 1 ];
pcc_reload($node, transaction_concurrency => 1);
send_sql($w[2], 'BEGIN;');
ok(wait_gate($node, 'transaction', 'waiting', 1), 'after lowering, a newcomer waits');
is(gate_value($node, 'transaction', 'running'), '3', 'running work is not interrupted');
$s[0]->query_safe('COMMIT');
$w[0]->query_safe('COMMIT');
usleep(200_000);
is(gate_value($node, 'transaction', 'running || \'/\' || waiting'), '1/1',
	'no admission until running is under the new limit');
$w[1]->query_safe('COMMIT');
ok(wait_gate($node, 'transaction', 'waiting', 0), 'then the waiter gets in');
finish($w[2]);
$w[2]->query_safe('COMMIT');
no_problems($node, 'reloads');

# --- enabled = off releases waiters and gates nothing; on again gates
$s[0]->query_safe('BEGIN');
send_sql($w[0], 'BEGIN;');
ok(wait_gate($node, 'transaction', 'waiting', 1), 'a waiter before disabling');
pcc_reload($node, enabled => 'off');
ok(wait_gate($node, 'transaction', 'waiting', 0), 'disabling admits the waiter');
finish($w[0]);
$w[1]->query_safe('BEGIN');
is(gate_value($node, 'transaction', 'max_concurrency'), '0', 'disabled: no limit');
$_->query_safe('COMMIT') for ($s[0], $w[0], $w[1]);
pcc_reload($node, enabled => 'on');
$s[0]->query_safe('BEGIN');
send_sql($w[0], 'BEGIN;');
ok(wait_gate($node, 'transaction', 'waiting', 1), 'enabled again: gating resumes');
$s[0]->query_safe('COMMIT');
finish($w[0]);
$w[0]->query_safe('COMMIT');

# --- bypass per role: a monitoring role is never queued
$node->safe_psql('postgres',
	'CREATE ROLE monitor LOGIN SUPERUSER; ALTER ROLE monitor SET pg_concurrency_control.bypass = on');
$s[0]->query_safe('BEGIN');
my ($ret, $out, $err) = $node->psql('postgres', 'BEGIN; SELECT 1; COMMIT;',
	extra_params => [ '-U', 'monitor' ], timeout => 10);
is($ret, 0, 'a bypass role starts a block while the gate is full');
$s[0]->query_safe('COMMIT');
no_problems($node, 'bypass');

$_->quit for (@s, @w, $locker);
$node->stop;
done_testing();
