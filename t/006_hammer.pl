# 200 connections hammer one gate (limit 3) with short transactions while
# random backends are cancelled and terminated.  Afterwards every counter
# balances and the waiters that were not interrupted were admitted in
# exactly the order they joined the queue.
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use PccTest;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;
use Time::HiRes qw(usleep time);

my $clients = 200;
my $seconds = 15;
my $node = pcc_node('hammer',
	"max_connections = 260",
	"pg_concurrency_control.transaction_concurrency = 3",
	"deadlock_timeout = '10min'");
$node->safe_psql('postgres',
	'CREATE TABLE adm (ticket bigint, turn bigint)');
$node->safe_psql('pccmon', 'SELECT pg_concurrency_control_reset()');

# The load: pccload from pgbench_scripts (built by scripts/test.sh), which
# rolls back after an error and reconnects after a termination, so the
# hammer keeps its 200 connections.  Each block that waited logs the ticket
# it drew on joining the queue and the turn it was granted, both numbered
# by the gate under its spinlock.
my $pccload = $ENV{PCCLOAD} // "$FindBin::RealBin/../pgbench_scripts/pccload";
ok(-x $pccload, "load generator at $pccload");
my ($out, $err) = ('', '');
my $bench = IPC::Run::start(
	[ $pccload, '-h', $node->host, '-p', $node->port, '-U', $ENV{USER} // 'postgres',
	  '-c', $clients, '-j', '2', '-T', $seconds, '-P', '0', '-s', '1',
	  '-w', 'admission-log', '-M', 'simple', '--reconnect' ],
	'>', \$out, '2>', \$err);

# wait for every connection, then interrupt random ones while it runs
wait_until($node,
	"SELECT count(*) >= $clients FROM pg_stat_activity WHERE datname = 'postgres'", 60);
my $victims = "FROM pg_stat_activity WHERE datname = 'postgres'"
  . " AND backend_type = 'client backend' ORDER BY random() LIMIT 3";
my ($cancels, $terms) = (0, 0);
my $deadline = time() + $seconds - 1;
while (time() < $deadline)
{
	if ($cancels % 8 == 7)
	{
		$node->safe_psql('pccmon', "SELECT pg_terminate_backend(pid) $victims");
		$terms++;
	}
	else
	{
		$node->safe_psql('pccmon', "SELECT pg_cancel_backend(pid) $victims");
	}
	$cancels++;
	usleep(50_000);
}
$bench->finish;
like($out, qr/SQLSTATE 57014: \d+/, 'statements were cancelled');
like($out, qr/SQLSTATE (57P01|08006): \d+/, 'connections were terminated');

ok(wait_until($node,
		"SELECT running = 0 AND waiting = 0 FROM pg_concurrency_control WHERE gate = 'transaction'",
		30),
	'after the hammer nothing runs and nothing waits');
no_problems($node, 'the hammer');
my ($admitted, $queued) = split /\|/, $node->safe_psql('pccmon',
	"SELECT admitted, queued FROM pg_concurrency_control WHERE gate = 'transaction'");
cmp_ok($admitted, '>', 1000, "the gate admitted $admitted transactions");
cmp_ok($queued, '>', 500, "$queued of them waited in the queue");
cmp_ok($cancels, '>', 50, "$cancels cancel and $terms terminate rounds ran");

# FIFO: a block overtook another if it drew a later ticket but was granted
# an earlier turn.  Both numbers come from the gate itself, so with fifo
# there must be none at all; cancelled and terminated waiters drew tickets
# but never log, which leaves gaps, not inversions.
sub overtaken
{
	my ($logged, $inverted) = split /\|/, $node->safe_psql('postgres', q{
		SELECT count(*), count(*) FILTER (WHERE earlier > turn)
		FROM (SELECT turn, max(turn) OVER (ORDER BY ticket
				ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS earlier
			  FROM adm) s});
	return ($logged, $inverted);
}
my ($logged, $inverted) = overtaken();
cmp_ok($logged, '>', 1000, "$logged committed blocks waited in the queue");
is($inverted, 0, 'FIFO: no block was granted before one with an earlier ticket');

# The same measure sees a non-FIFO order: newest first, no starvation bound.
$node->safe_psql('postgres', 'TRUNCATE adm');
pcc_reload($node, queue_order => 'warm', warm_max_wait => '10s');
IPC::Run::run(
	[ $pccload, '-h', $node->host, '-p', $node->port, '-U', $ENV{USER} // 'postgres',
	  '-c', $clients, '-j', '2', '-T', 5, '-P', '0', '-s', '1',
	  '-w', 'admission-log', '-M', 'simple' ],
	'>', \$out, '2>', \$err);
($logged, $inverted) = overtaken();
cmp_ok($inverted, '>', $logged / 10,
	"the measure detects newest-first order ($inverted of $logged overtaken)");

$node->stop;
done_testing();
