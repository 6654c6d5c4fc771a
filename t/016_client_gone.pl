# A queued backend whose client goes away ends at once, instead of keeping
# its place (and its block's locks) until it would have been admitted.
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use PccTest;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = pcc_node('client_gone',
	"pg_concurrency_control.transaction_concurrency = 1",
	"deadlock_timeout = '10min'");
my $holder = session($node);
my $victim = session($node);
$holder->query_safe('BEGIN');
my $vpid = backend_pid($victim);
send_sql($victim, 'BEGIN;');
ok(wait_gate($node, 'transaction', 'waiting', 1), 'the victim queues');
$victim->{run}->kill_kill;
ok(wait_until($node,
	"SELECT count(*) = 0 FROM pg_stat_activity WHERE pid = $vpid", 10),
	'its backend ends when its client is gone');
is(gate_value($node, 'transaction', 'waiting || \'/\' || running'), '0/1',
	'it left the queue; the holder keeps its slot');
$holder->query_safe('COMMIT');
no_problems($node, 'a vanished waiter');
$holder->quit;
done_testing();
