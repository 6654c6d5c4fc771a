# The watchdog worker: in pg_stat_activity, the one writer of the shared
# settings (the postmaster and the backends write none), a SIGTERM that
# cannot leave a gate's spinlock held, a quantum of 0 that ends kept
# turns, and a server that refuses to start without it.
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use PccTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep time);

# --- without a worker slot the server does not start, and says why
my $nw = PostgreSQL::Test::Cluster->new('no_worker');
$nw->init;
$nw->append_conf('postgresql.conf',
	"shared_preload_libraries = 'pg_concurrency_control'\nmax_worker_processes = 0");
ok(!$nw->start(fail_ok => 1), 'max_worker_processes = 0: the server refuses to start');
like(slurp_file($nw->logfile),
	qr/cannot register its watchdog worker.*\n.*DETAIL:  max_worker_processes is 0.*\n.*HINT:  Raise max_worker_processes/,
	'the log says why and what to change');

my $node = pcc_node('watchdog',
	"pg_concurrency_control.query_concurrency = 1",
	"pg_concurrency_control.transaction_concurrency = 1",
	# turns that only the quantum ends (the defaults end them sooner)
	"pg_concurrency_control.turn_grace = 0",
	"pg_concurrency_control.max_turn_wait = 0",
	"deadlock_timeout = '10min'");

# Whether the worker $pid is between passes, waiting on its latch.
sub between_passes
{
	my ($pid, $secs) = @_;
	return wait_until($node,
		"SELECT wait_event_type = 'Extension' FROM pg_stat_activity WHERE pid = $pid", $secs);
}

# --- the worker is in pg_stat_activity, waiting in an extension's wait
# event between passes; a cancel leaves it be, pg_terminate_backend()
# restarts it
my $pid = watchdog_pid($node);
ok($pid, 'the worker is in pg_stat_activity');
ok(between_passes($pid, 5), 'between passes it waits in an extension wait event');
is($node->safe_psql('postgres', "SELECT pg_cancel_backend($pid)"), 't', 'pg_cancel_backend() reaches it');
usleep(1_500_000);
is(watchdog_pid($node), $pid, 'a cancel leaves the same worker running');
is($node->safe_psql('postgres', "SELECT pg_terminate_backend($pid)"), 't', 'pg_terminate_backend() reaches it');
$pid = new_watchdog($node, $pid);
ok($pid, 'the postmaster starts it again');

# --- one writer: with the worker stopped, a reload changes no gate
# (stopped between passes, not in its start-up)
ok(between_passes($pid, 10), 'the new worker is between passes');
kill 'STOP', $pid;
$node->append_conf('postgresql.conf', "pg_concurrency_control.query_concurrency = 3");
$node->reload;
$node->poll_query_until('pccmon',
	"SELECT current_setting('pg_concurrency_control.query_concurrency') = '3'")
  or die;
usleep(300_000);
is(gate_value($node, 'query', 'max_concurrency'), '1',
	'the postmaster and the backends reloaded, but only the worker writes the limit');
kill 'CONT', $pid;
ok(wait_gate($node, 'query', 'max_concurrency', 3), 'the worker applies it');
wait_applied($node);

# --- quantum 0 ends the kept turns at once
pcc_reload($node, quantum => '1min');
my $a = session($node);
my $b = session($node);
$a->query_safe('BEGIN');
$a->query_safe('SELECT 1');
send_sql($b, 'BEGIN;');
ok(wait_gate($node, 'transaction', 'waiting', 1), 'b waits for the block');
$a->query_safe('COMMIT');
ok(wait_gate($node, 'transaction', 'lingering', 1), 'a keeps its slot for its 60 s turn');
is(gate_value($node, 'transaction', 'waiting'), '1', 'b still waits');
my $t0 = time();
pcc_reload($node, quantum => 0);
ok(wait_until($node,
	"SELECT waiting = 0 AND lingering = 0 FROM pg_concurrency_control WHERE gate = 'transaction'", 5),
	'quantum 0: the kept slot goes to b at once');
ok(time() - $t0 < 5, 'within seconds, not at the end of the old turn');
finish($b);
$b->query_safe('COMMIT');

# --- SIGTERM: the worker stops between passes and comes back
pcc_reload($node, quantum => '20ms', query_concurrency => 1);
my @load;
for my $i (1 .. 6)
{
	my $s = session($node);
	send_sql($s, join('', map { "SELECT pg_sleep(0.002);\n" } 1 .. 150));
	push @load, $s;
}
ok(wait_until($node,
	"SELECT waiting > 0 FROM pg_concurrency_control WHERE gate = 'query'", 10),
	'sessions queue');
my $restarts = 0;
for my $round (1 .. 4)
{
	my $old = watchdog_pid($node);
	next unless $old;
	kill 'TERM', $old;
	$restarts++ if new_watchdog($node, $old);
}
is($restarts, 4, 'the worker came back after every SIGTERM');
finish($_) for @load;
ok(wait_gate($node, 'query', 'running', 0), 'the load finished and the gate drained');
no_problems($node, 'SIGTERM storm');
unlike(slurp_file($node->logfile), qr/FATAL:  terminating background worker "pg_concurrency_control/,
	'SIGTERM never raised FATAL inside the worker (it only sets a flag)');
ok(watchdog_pid($node), 'the worker runs again');

# --- in ProcSignal, it absorbs the barrier DROP DATABASE waits for (a
# worker that did not would hold it until statement_timeout)
$node->safe_psql('postgres', 'CREATE DATABASE scratch');
my ($rc, $out, $err) = $node->psql('postgres',
	"SET statement_timeout = '10s'; DROP DATABASE scratch");
is($rc, 0, "DROP DATABASE does not wait for the worker ($err)");

$_->quit for @load;
$a->quit;
$b->quit;
done_testing();
