# pg_concurrency_control.priority: higher priority waiters are admitted
# first, FIFO within a priority; priority_aging bounds how long a lower
# priority waiter can be passed; a block that holds a slot never waits
# behind newcomers for a bigquery slot.
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use PccTest;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);

my $node = pcc_node('priority',
	"pg_concurrency_control.transaction_concurrency = 1",
	"pg_concurrency_control.bigquery_concurrency = 1",
	"pg_concurrency_control.priority_aging = '1h'",
	"deadlock_timeout = '10min'");
create_log($node);

my $holder = session($node);
my %s;
for my $p ('low', 'normal', 'high')
{
	$s{$p} = session($node);
	$s{$p}->query_safe("SET pg_concurrency_control.priority = $p");
}

# Queue the sessions named, in that order, behind the holder's block;
# returns the priorities backends() reports for the waiters, by ticket.
sub queue_behind_holder
{
	my (@who) = @_;
	$holder->query_safe('BEGIN');
	for my $i (0 .. $#who)
	{
		send_sql($s{ $who[$i] },
			"BEGIN; INSERT INTO log (who) VALUES ('$who[$i]'); COMMIT;");
		ok(wait_gate($node, 'transaction', 'waiting', $i + 1), "$who[$i] queued");
	}
	return $node->safe_psql('pccmon',
		"SELECT string_agg(priority, ',' ORDER BY ticket) FROM pg_concurrency_control_backends()"
		  . " WHERE state = 'waiting'");
}

sub release_holder_and_finish
{
	my (@who) = @_;
	$holder->query_safe('COMMIT');
	finish($s{$_}) for @who;
	return log_order($node);
}

# --- strict priority while aging is far away; FIFO within a priority
is(queue_behind_holder('low', 'normal', 'high'), 'low,normal,high',
	'backends() shows each waiter\'s priority');
is(release_holder_and_finish('low', 'normal', 'high'), 'high,normal,low',
	'admitted by priority, not by arrival');
no_problems($node, 'priority order');

$s{high2} = session($node);
$s{high2}->query_safe('SET pg_concurrency_control.priority = high');
queue_behind_holder('high', 'low', 'high2');
is(release_holder_and_finish('high', 'low', 'high2'), 'high,high2,low',
	'FIFO among waiters of one priority');

# --- aging: a low waiter that has waited two aging periods is not passed
pcc_reload($node, priority_aging => '400ms');
$holder->query_safe('BEGIN');
send_sql($s{low}, "BEGIN; INSERT INTO log (who) VALUES ('low'); COMMIT;");
ok(wait_gate($node, 'transaction', 'waiting', 1), 'low queued');
usleep(1_000_000);
send_sql($s{high}, "BEGIN; INSERT INTO log (who) VALUES ('high'); COMMIT;");
ok(wait_gate($node, 'transaction', 'waiting', 2), 'high queued');
my $gap = $node->safe_psql('pccmon',
	"SELECT extract(epoch FROM max(since) - min(since)) FROM pg_concurrency_control_backends()"
	  . " WHERE state = 'waiting'");
ok($gap > 0.8, "high arrived two aging periods after low ($gap s)");
is(release_holder_and_finish('low', 'high'), 'low,high',
	'the aged low waiter goes first');

# ... while a high waiter that arrives within the head start still passes
pcc_reload($node, priority_aging => '30s');
queue_behind_holder('low', 'high');
is(release_holder_and_finish('low', 'high'), 'high,low',
	'a high waiter arriving within the head start passes');

# --- aging 0: arrival order only
pcc_reload($node, priority_aging => '0');
queue_behind_holder('low', 'normal', 'high');
is(release_holder_and_finish('low', 'normal', 'high'), 'low,normal,high',
	'priority_aging = 0 admits in arrival order');
no_problems($node, 'aging');

# --- a block holding a slot is served before everyone on the bigquery gate
pcc_reload($node, priority_aging => '1h', transaction_concurrency => '10');
$holder->query_safe('BEGIN');
$holder->query_safe('/*+bigsql*/ DECLARE c CURSOR FOR SELECT 1');
is(gate_value($node, 'bigquery', 'running'), '1', 'the holder\'s cursor keeps the bigquery slot');
send_sql($s{high}, "INSERT /*+bigsql*/ INTO log (who) VALUES ('high');");
ok(wait_gate($node, 'bigquery', 'waiting', 1), 'a high priority big statement queues');
my $in_block = $s{low};
$in_block->query_safe('BEGIN');
my $block_pid = backend_pid($in_block);
send_sql($in_block, "INSERT /*+bigsql*/ INTO log (who) VALUES ('block');");
ok(wait_gate($node, 'bigquery', 'waiting', 2), 'a low priority block\'s big statement queues');
is( $node->safe_psql('pccmon',
		"SELECT priority FROM pg_concurrency_control_backends() WHERE pid = $block_pid"
		  . " AND state = 'waiting'"),
	'in block', 'backends() shows the block\'s waiter as "in block"');
$holder->query_safe('COMMIT');
finish($in_block);
$in_block->query_safe('COMMIT');
finish($s{high});
is(log_order($node), 'block,high',
	'the block got the bigquery slot first, then the high priority statement');
no_problems($node, 'in-block priority');

# --- cancel and timeout work from every queue
pcc_reload($node, transaction_concurrency => '1');
$holder->query_safe('BEGIN');
$s{high}->query_safe("SET pg_concurrency_control.control_timeout = '200ms'");
send_sql($s{high}, 'BEGIN;');
my (undef, $err) = finish($s{high});
like($err, qr/timed out after \d+ ms waiting for the transaction gate/,
	'a high priority waiter times out like any other');
$s{high}->query_safe('RESET pg_concurrency_control.control_timeout');
send_sql($s{low}, 'BEGIN;');
ok(wait_gate($node, 'transaction', 'waiting', 1), 'low queued');
my $low_pid = $node->safe_psql('pccmon',
	"SELECT pid FROM pg_concurrency_control_backends() WHERE state = 'waiting'");
$node->safe_psql('pccmon', "SELECT pg_cancel_backend($low_pid)");
ok(wait_gate($node, 'transaction', 'waiting', 0), 'the low waiter left on cancel');
(undef, $err) = finish($s{low});
like($err, qr/canceling statement due to user request/, 'the low waiter was cancelled');
$holder->query_safe('COMMIT');
no_problems($node, 'leaving priority queues');

$_->quit for ($holder, values %s);
$node->stop;
done_testing();
