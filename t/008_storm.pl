# A connection storm against the limit does not starve the holders: 800
# connections arrive at once and queue for one transaction slot while the
# holder keeps working, once queued they cost the holder nothing, and with
# the queue full a holder's COMMIT (which
# hands the slot to the next waiter) costs what it costs with no queue.
# Waiters that polled or a release that woke the whole queue would fail
# both measures on two CPUs.
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use PccTest;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;
use JSON::PP;
use Time::HiRes qw(time);

my $storm = 800;
my $node = pcc_node('storm',
	"max_connections = " . ($storm + 60),
	"pg_concurrency_control.transaction_concurrency = 1",
	"deadlock_timeout = '10min'");
$node->safe_psql('postgres',
	'CREATE TABLE adm (ticket bigint, turn bigint); CREATE TABLE w (x int); INSERT INTO w VALUES (0)');
my $pccload = $ENV{PCCLOAD} // "$FindBin::RealBin/../pgbench_scripts/pccload";
my @load = ($pccload, '-h', $node->host, '-p', $node->port, '-U', $ENV{USER} // 'postgres',
	'-j', '2', '-P', '0', '-s', '1', '-w', 'admission-log', '-M', 'prepared');

sub median { my @v = sort { $a <=> $b } @_; return $v[ int(@v / 2) ]; }

# The holder's statement latency in its block, in ms.
my $holder = session($node);
sub holder_ms
{
	my $t0 = time();
	$holder->query_safe('UPDATE w SET x = x + 1');
	return (time() - $t0) * 1000;
}

$holder->query_safe('BEGIN');
my @quiet = map { holder_ms() } 1 .. 50;

# --- the storm arrives while the holder has the only slot
my ($out, $err) = ('', '');
my $bench = IPC::Run::start([ @load, '-c', $storm, '-T', 5 ],
	'>', \$out, '2>', \$err);
my @during;
my $deadline = time() + 120;
while (time() < $deadline)
{
	push @during, holder_ms();
	last if gate_value($node, 'transaction', 'waiting') >= $storm - 10;
}
my $waiting = gate_value($node, 'transaction', 'waiting');
cmp_ok($waiting, '>=', $storm - 10, "$waiting connections queued for the one slot");
cmp_ok(scalar(@during), '>=', 5, scalar(@during) . ' holder statements ran while they arrived');
my @queued = map { holder_ms() } 1 .. 50;
my ($mq, $md, $mf) = (median(@quiet), median(@during), median(@queued));
# Connection start-up takes CPU of its own (on a slow VM, most of it), so
# while they arrive the holder only has to keep going; once they all wait,
# they must take no CPU at all: waiters that polled would take all of it.
cmp_ok($md, '<', 20 * $mq + 500,
	sprintf('the holder keeps running while the storm arrives: median %.2f ms, %.2f ms without it', $md, $mq));
cmp_ok($mf, '<', 5 * $mq + 5,
	sprintf('with %d queued the holder runs at its quiet speed: median %.2f ms, %.2f ms without them',
		$waiting, $mf, $mq));
my $t0 = time();
$holder->query_safe('COMMIT');
my $commit_ms = (time() - $t0) * 1000;
cmp_ok($commit_ms, '<', 10 * $mq + 50,
	sprintf('the holder\'s COMMIT with %d waiting took %.2f ms', $waiting, $commit_ms));

# --- with the queue full, each holder's COMMIT hands the slot on in O(1).
# At one slot, every backend's first (cold: catalog caches, page faults)
# transaction runs alone, 5-8 ms each here: the run lasts long enough for
# the queue to go round once and then some.
$bench->finish;
my $commit = sub {
	my ($json) = @_;
	my $j = decode_json(slurp_file($json));
	my ($end) = grep { $_->{what} eq 'END' } @{ $j->{latency_ms} };
	return $end;
};
my $dir = PostgreSQL::Test::Utils::tempdir();
like($out, qr/tps steady/, 'the storm ran its transactions');
IPC::Run::run([ @load, '-c', $storm, '-T', 8, '--json', "$dir/storm.json" ],
	'>', \$out, '2>', \$err);
IPC::Run::run([ @load, '-c', 1, '-T', 5, '--json', "$dir/alone.json" ],
	'>', \$out, '2>', \$err);
my ($storm_end, $alone_end) = ($commit->("$dir/storm.json"), $commit->("$dir/alone.json"));
cmp_ok($storm_end->{count}, '>', $storm,
	"$storm_end->{count} COMMITs with ~$storm waiting: the queue went round");
cmp_ok($storm_end->{p50}, '<', 5 * $alone_end->{p50} + 2,
	"COMMIT p50 with a full queue $storm_end->{p50} ms, alone $alone_end->{p50} ms");

ok(wait_until($node,
		"SELECT running = 0 AND waiting = 0 FROM pg_concurrency_control WHERE gate = 'transaction'",
		30),
	'the storm drained');
no_problems($node, 'the storm');
$holder->quit;
$node->stop;
done_testing();
