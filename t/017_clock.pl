# Intervals are measured on the monotonic clock: a step of the wall clock
# (libfaketime moves it under the server) neither times a waiter out, keeps
# a turn past its quantum, nor makes a lock wait look old to the deadlock
# escape.
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use PccTest;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time);

my $lib = '/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1';
plan skip_all => "libfaketime is not installed ($lib)" unless -e $lib;

my $node = pcc_node('clock',
	"pg_concurrency_control.transaction_concurrency = 1",
	"pg_concurrency_control.quantum = '500ms'",
	# turns that only the quantum ends (the defaults end them sooner)
	"pg_concurrency_control.turn_grace = 0",
	"pg_concurrency_control.max_turn_wait = 0",
	"deadlock_timeout = '10min'");

# Restart the server under libfaketime: its wall clock follows the offset
# in $offset_file; the monotonic clock stays real.
my $offset_file = $node->basedir . '/faketime';
# Replace the file whole: a server process reading it half-written would
# see no offset, or garbage.
sub set_offset
{
	open(my $fh, '>', "$offset_file.new") or die;
	print $fh "$_[0]\n";
	close($fh);
	rename("$offset_file.new", $offset_file) or die;
}
set_offset('+0');
$node->stop;
{
	local $ENV{LD_PRELOAD} = $lib;
	local $ENV{FAKETIME_TIMESTAMP_FILE} = $offset_file;
	local $ENV{FAKETIME_NO_CACHE} = '1';
	local $ENV{FAKETIME_DONT_FAKE_MONOTONIC} = '1';
	$node->start;
}

# A watchdog that has run a while no longer follows the offset file
# (libfaketime 0.9.10; backends do): start a fresh one before a step that
# it must see.
sub fresh_watchdog
{
	my $old = watchdog_pid($node);
	$node->safe_psql('pccmon', "SELECT pg_terminate_backend($old)");
	ok(new_watchdog($node, $old), 'a fresh watchdog');
}

# How far a session's wall clock is ahead of the real one, in hours.
sub hours_ahead
{
	my ($s) = @_;
	my $t = $s->query_safe('SELECT extract(epoch FROM clock_timestamp())');
	return sprintf('%.0f', ($t - time()) / 3600);
}

my $holder = session($node);
my $w = session($node);

# --- a step forward does not time a waiter out
$holder->query_safe('BEGIN');
$w->query_safe("SET pg_concurrency_control.control_timeout = '20s'");
$w->query_safe("SET pg_concurrency_control.timeout_action = 'error'");
send_sql($w, 'BEGIN;');
ok(wait_gate($node, 'transaction', 'waiting', 1), 'a session waits');
set_offset('+2h');
# wake every waiter (a reload sets their latches) so that it looks again
$node->safe_psql('pccmon', 'SELECT pg_reload_conf()');
sleep(1);
is(gate_value($node, 'transaction', 'waiting || \'/\' || timeouts'), '1/0',
	'the wall clock jumped 2 h ahead: it still waits, no timeout');
$holder->query_safe('COMMIT');
my ($out, $err) = finish($w);
is($err, '', 'admitted without an error when the holder commits');
$w->query_safe('COMMIT');
is(hours_ahead($w), '2', 'the waiter\'s clock had jumped');

# --- a step back does not keep a turn past its quantum
set_offset('+0');
fresh_watchdog();
# a new session: the pause above would make the holder's client look slow
my $turn = session($node);
$turn->query_safe('BEGIN');
$turn->query_safe('SELECT 1');
send_sql($w, 'BEGIN;');
ok(wait_gate($node, 'transaction', 'waiting', 1), 'a session waits');
$turn->query_safe('COMMIT');
ok(wait_gate($node, 'transaction', 'lingering', 1),
	'the holder keeps its slot for the rest of its turn');
my $t0 = time();
set_offset('-2h');
ok(wait_until($node,
	"SELECT waiting = 0 AND lingering = 0 FROM pg_concurrency_control WHERE gate = 'transaction'", 10),
	'the wall clock went 2 h back: the turn still ends after its quantum');
ok(time() - $t0 < 5, 'within seconds');
finish($w);
$w->query_safe('COMMIT');

# --- a step forward does not set off the deadlock escape: a holder that
# has waited a moment for a lock still counts against the limit
set_offset('+0');
fresh_watchdog();
$node->safe_psql('postgres', 'CREATE TABLE clock_lock (id int)');
my $locker = session($node);
$locker->query_safe('SET pg_concurrency_control.bypass = on');
$locker->query_safe('BEGIN');
$locker->query_safe('LOCK TABLE clock_lock');
$holder->query_safe('BEGIN');
send_sql($holder, 'SELECT count(*) FROM clock_lock;');
ok(wait_until($node,
	"SELECT count(*) = 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock'"),
	'the slot holder waits for a lock');
send_sql($w, 'BEGIN;');
ok(wait_gate($node, 'transaction', 'waiting', 1), 'a session waits for its slot');
set_offset('+2h');
sleep(1);    # four passes of the watchdog
is(gate_value($node, 'transaction',
		"waiting || '/' || lock_escapes || '/' || lock_blocked"), '1/0/0',
	'the wall clock jumped 2 h ahead: the lock wait is no older, nobody escapes');
# the watchdog's own clock jumped too: it stamps a reload it applies
$node->safe_psql('pccmon', 'SELECT pg_reload_conf()');
my $real = time();
ok(wait_until($node,
	"SELECT extract(epoch FROM pg_concurrency_control_config_loaded()) > $real + 3600"),
	'as the watchdog saw it');
$locker->query_safe('COMMIT');
finish($holder);
$holder->query_safe('COMMIT');
finish($w);
$w->query_safe('COMMIT');
set_offset('+0');
no_problems($node, 'clock steps');
$_->quit for ($holder, $w, $turn, $locker);
done_testing();
