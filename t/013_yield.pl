# Big queries yield: an auto bigquery gate shrinks to auto_min while the
# work of another auto gate suffers, even when the big queries themselves
# do not slow down, and grows again once that work is gone.
#
# The big queries each lock a row of their own and sleep holding it, so
# their service time is the same at any concurrency: on its own, the
# bigquery gate's controller has no reason to shrink.  Short transactions
# that update those rows wait for the locks, so theirs is many times their
# unloaded service time.
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use PccTest;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;
use Time::HiRes qw(usleep time);

my $rows = 12;
my $node = pcc_node('yield',
	"pg_concurrency_control.transaction_concurrency = -1",
	"pg_concurrency_control.bigquery_concurrency = -1",
	"pg_concurrency_control.auto_min = 2",
	"pg_concurrency_control.auto_max = 16",
	"deadlock_timeout = '10min'");
$node->safe_psql('postgres',
	"CREATE TABLE hot (id int PRIMARY KEY, v int);"
	  . " INSERT INTO hot SELECT g, 0 FROM generate_series(1, $rows) g");

my %script = (
	big => "\\set k :client_id % $rows + 1\n"
	  . "SELECT /*+bigsql*/ pg_sleep(0.2) FROM hot WHERE id = :k FOR UPDATE;\n",
	oltp => "\\set k random(1, $rows)\n"
	  . "BEGIN;\nUPDATE hot SET v = v + 1 WHERE id = :k;\nCOMMIT;\n");

# Start pgbench with a script for $secs seconds.
sub start_load
{
	my ($name, $clients, $secs) = @_;
	my $file = $node->basedir . "/$name.sql";
	open(my $fh, '>', $file) or die;
	print $fh $script{$name};
	close $fh;
	my %run = (out => '', err => '');
	$run{h} = IPC::Run::start(
		[ 'pgbench', '-n', '-h', $node->host, '-p', $node->port,
		  '-c', $clients, '-j', '2', '-T', $secs, '-f', $file, 'postgres' ],
		'>', \$run{out}, '2>', \$run{err});
	return \%run;
}

sub finish_load
{
	my ($run, $what) = @_;
	$run->{h}->finish;
	like($run->{out}, qr/tps = /, "$what: pgbench ran") or diag($run->{err});
}

# Sample the bigquery gate every 100 ms for $secs seconds: its limits,
# sorted, and the share of samples that found it yielding.
sub sample_bigquery
{
	my ($secs) = @_;
	my @limits;
	my $yielding = 0;
	my $t0 = time();
	while (time() - $t0 < $secs)
	{
		my ($l, $y) = split /\|/,
		  gate_value($node, 'bigquery', "max_concurrency || '|' || coalesce(yielding, false)");
		push @limits, $l;
		$yielding++ if $y eq 'true';
		usleep(100_000);
	}
	return ([ sort { $a <=> $b } @limits ], $yielding / @limits);
}

sub median { my ($v) = @_; return $v->[ int(@$v / 2) ]; }

is(gate_value($node, 'bigquery', "auto || '/' || (max_concurrency BETWEEN 2 AND 16)"),
	'true/true', 'the bigquery gate is auto, its limit within the bounds');

# --- big queries alone do not slow each other: their limit stays up
my $big = start_load('big', $rows, 8);
sleep 3;
my ($limits, $share) = sample_bigquery(4);
finish_load($big, 'big queries alone');
ok(median($limits) >= 8,
	'big queries alone: the limit stays up (median ' . median($limits) . ')');
ok($share == 0, 'big queries alone: the gate never yields');

# --- short transactions first set their floor, then the big queries
# make them wait: the bigquery gate yields down to auto_min
my $oltp = start_load('oltp', 8, 16);
sleep 4;
$big = start_load('big', $rows, 12);
sleep 5;
($limits, $share) = sample_bigquery(5);
ok($share > 0, 'with suffering transactions: the bigquery gate yields');
ok($share >= 0.95,
	sprintf('with suffering transactions: it yields throughout (%.2f of the samples)', $share));
is(median($limits), 2,
	"with suffering transactions: its limit falls to auto_min (@$limits[0]..@$limits[-1])");
finish_load($oltp, 'short transactions');
finish_load($big, 'big queries beside them');
no_problems($node, 'the mixed load');

# --- the transactions are gone: the big queries take their slots back
$big = start_load('big', $rows, 10);
sleep 6;
($limits, $share) = sample_bigquery(3);
finish_load($big, 'big queries alone again');
ok(median($limits) >= 8,
	'alone again: the limit has grown back (median ' . median($limits) . ')');
ok($share == 0, 'alone again: the gate no longer yields');
no_problems($node, 'the big queries alone');

$node->stop;
done_testing();
