# Cancel, statement_timeout, terminate, idle timeout, vanished clients and
# crashes, while waiting and while holding: no slot is ever leaked.
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use PccTest;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = pcc_node('interrupts',
	"pg_concurrency_control.transaction_concurrency = 1",
	"deadlock_timeout = '10min'",
	"restart_after_crash = on");

sub pcc_sql { return $node->safe_psql('pccmon', $_[0]); }

# The next taker gets in at once: the gate is free again.
sub gate_free
{
	my ($what) = @_;
	my $s = session($node);
	my $t0 = time();
	$s->query_safe('BEGIN');
	$s->query_safe('COMMIT');
	ok(time() - $t0 < 5, "the next taker gets in at once after $what");
	is(gate_value($node, 'transaction', "running || '/' || waiting"), '0/0',
		"running and waiting exact after $what");
	no_problems($node, $what);
	$s->quit;
}

my $holder = session($node);
my $w = session($node);
my $wpid = backend_pid($w);

# --- cancel while waiting
$holder->query_safe('BEGIN');
send_sql($w, 'BEGIN;');
ok(wait_gate($node, 'transaction', 'waiting', 1), 'waiter queued');
pcc_sql("SELECT pg_cancel_backend($wpid)");
my ($out, $err) = finish($w);
like($err, qr/canceling statement due to user request/, 'cancel interrupts the wait');
is(gate_value($node, 'transaction', 'abandoned'), '1', 'the wait counts as abandoned');
$holder->query_safe('COMMIT');
gate_free('cancel while waiting');

# --- statement_timeout while waiting
$holder->query_safe('BEGIN');
$w->query_safe("SET statement_timeout = '300ms'");
($out, $err) = ($w->query('BEGIN'), $w->{stderr});
$err = $w->{stderr};
$w->{stderr} = '';
like($err, qr/canceling statement due to statement timeout/,
	'statement_timeout interrupts the wait');
is(gate_value($node, 'transaction', 'abandoned'), '2', 'so does this wait');
$w->query_safe('RESET statement_timeout');
$holder->query_safe('COMMIT');
gate_free('statement_timeout while waiting');

# --- terminate while waiting
$holder->query_safe('BEGIN');
send_sql($w, 'BEGIN;');
ok(wait_gate($node, 'transaction', 'waiting', 1), 'waiter queued again');
pcc_sql("SELECT pg_terminate_backend($wpid)");
ok(wait_gate($node, 'transaction', 'waiting', 0), 'terminated waiter leaves the queue');
is(gate_value($node, 'transaction', 'abandoned'), '3', 'and its wait counts as abandoned');
$w->{run}->kill_kill;
$holder->query_safe('COMMIT');
gate_free('terminate while waiting');

# --- terminate while holding: the slot passes to the waiter
$w = session($node);
my $hpid = backend_pid($holder);
$holder->query_safe('BEGIN');
send_sql($w, 'BEGIN;');
ok(wait_gate($node, 'transaction', 'waiting', 1), 'waiter behind a holder');
pcc_sql("SELECT pg_terminate_backend($hpid)");
ok(wait_gate($node, 'transaction', 'waiting', 0), 'terminating the holder admits the waiter');
finish($w);
$w->query_safe('COMMIT');
$holder->{run}->kill_kill;
gate_free('terminate while holding');

# --- cancel while holding: the error aborts the block and frees the slot
$holder = session($node);
$hpid = backend_pid($holder);
$holder->query_safe('BEGIN');
send_sql($holder, 'SELECT pg_sleep(60);');
ok(wait_until($node,
		"SELECT count(*) = 1 FROM pg_stat_activity WHERE pid = $hpid AND wait_event = 'PgSleep'"),
	'holder is running a statement');
pcc_sql("SELECT pg_cancel_backend($hpid)");
ok(wait_gate($node, 'transaction', 'running', 0), 'the aborted block holds no slot');
finish($holder);
$holder->query_safe('ROLLBACK');
gate_free('cancel while holding');

# --- idle_in_transaction_session_timeout ends the session and the slot
$holder->query_safe("SET idle_in_transaction_session_timeout = '300ms'");
$holder->query_safe('BEGIN');
ok(wait_gate($node, 'transaction', 'running', 0), 'idle-in-transaction timeout frees the slot');
$holder->{run}->kill_kill;
gate_free('idle_in_transaction_session_timeout');

# --- the client vanishes mid-transaction (socket closed)
$holder = session($node);
$holder->query_safe('BEGIN');
is(gate_value($node, 'transaction', 'running'), '1', 'holder in a block');
$holder->{run}->kill_kill;
ok(wait_gate($node, 'transaction', 'running', 0), 'a vanished client frees its slot');
gate_free('client vanished');

# --- a slot granted at the moment the waiter is cancelled is passed on
$holder = session($node);
$w = session($node);
$wpid = backend_pid($w);
for my $i (1 .. 25)
{
	$holder->query_safe('BEGIN');
	send_sql($w, 'BEGIN;');
	wait_gate($node, 'transaction', 'waiting', 1);
	send_sql($holder, 'COMMIT;');
	pcc_sql("SELECT pg_cancel_backend($wpid)");
	finish($holder);
	finish($w);
	$w->query('ROLLBACK');
	$w->{stderr} = '';
}
gate_free('25 grant-versus-cancel races');

# --- kill -9 of a holder: crash restart, counters come back clean
$holder->query_safe('BEGIN');
$hpid = backend_pid($holder);
kill 'KILL', $hpid;
$holder->{run}->kill_kill;
$w->{run}->kill_kill;
ok($node->poll_query_until('postgres', 'SELECT true'), 'server restarted after kill -9');
is(gate_value($node, 'transaction', "running || '/' || waiting || '/' || admitted"),
	'0/0/0', 'shared state recreated clean');
like(watchdog_pid($node, 30), qr/^\d+$/, 'the watchdog (one) came back with the server');
gate_free('kill -9');

$node->stop;
done_testing();
