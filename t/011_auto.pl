# Adaptive limits (a limit GUC set to -1): the watchdog tunes the limit
# from the service time of admitted work, within auto_min and auto_max.
# Work that runs in parallel without slowing down (sleeps) takes the limit
# to auto_max; so does work whose holders wait for their clients, waits
# that service time leaves out.  Work serialised on one row lock, whose
# service time grows with every holder, keeps it low.  Switching back to a
# static limit and to auto again works at reload.  With log_auto on (and
# only then), the watchdog logs the controller's probes and trials.
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use PccTest;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;
use Time::HiRes qw(usleep time);

my $clients = 24;
my $node = pcc_node('auto',
	"pg_concurrency_control.transaction_concurrency = -1",
	"pg_concurrency_control.auto_min = 2",
	"pg_concurrency_control.auto_max = 16",
	"deadlock_timeout = '10min'");
$node->safe_psql('postgres',
	'CREATE TABLE hot (id int PRIMARY KEY, v int); INSERT INTO hot VALUES (1, 0)');

is(gate_value($node, 'transaction', 'auto'), 't', 'the transaction gate is auto');
my $limit = gate_value($node, 'transaction', 'max_concurrency');
ok($limit >= 2 && $limit <= 16, "its limit starts within the bounds ($limit)");
is(gate_value($node, 'query', 'auto || \'/\' || max_concurrency'), 'false/64',
	'the other gates keep their static limits');

# Start a pgbench script for $secs seconds with $clients clients in the
# background; $out and $err receive its output.
sub start_load
{
	my ($name, $script, $secs, $out, $err) = @_;
	my $file = $node->basedir . "/$name.sql";
	open(my $fh, '>', $file) or die;
	print $fh $script;
	close $fh;
	return IPC::Run::start(
		[ 'pgbench', '-n', '-h', $node->host, '-p', $node->port,
		  '-c', $clients, '-j', '2', '-T', $secs, '-f', $file, 'postgres' ],
		'>', $out, '2>', $err);
}

# Run a pgbench script for $secs seconds with $clients clients; sample the
# transaction gate's limit every 100 ms.  Returns the samples of the second
# half, sorted, and the lowest and highest of all.
sub run_load
{
	my ($name, $script, $secs) = @_;
	my ($out, $err) = ('', '');
	my $bench = start_load($name, $script, $secs, \$out, \$err);
	my (@all, @late);
	my $t0 = time();
	while (time() - $t0 < $secs)
	{
		my $l = gate_value($node, 'transaction', 'max_concurrency');
		push @all, $l;
		push @late, $l if time() - $t0 > $secs / 2;
		usleep(100_000);
	}
	$bench->finish;
	like($out, qr/number of failed transactions: 0|tps = /, "$name: pgbench ran")
	  or diag($err);
	@late = sort { $a <=> $b } @late;
	@all = sort { $a <=> $b } @all;
	return (\@late, $all[0], $all[-1]);
}

sub median { my ($v) = @_; return $v->[ int(@$v / 2) ]; }

# --- parallel work that does not slow down: the limit climbs to auto_max
my ($late, $low, $high) = run_load('sleep',
	"BEGIN;\nSELECT pg_sleep(0.02);\nCOMMIT;\n", 8);
ok($low >= 2 && $high <= 16, "sleep: the limit stayed within [2, 16] ($low..$high)");
is(median($late), 16, 'sleep: the limit reached auto_max');
my ($baseline, $service, $tput) = split /\|/, $node->safe_psql('pccmon',
	"SELECT round(baseline_ms), round(service_ms), round(throughput)"
	  . " FROM pg_concurrency_control WHERE gate = 'transaction'");
ok($baseline >= 20 && $baseline < 200,
	"sleep: the baseline is the service time of one transaction ($baseline ms)");
ok($tput > 0, "sleep: throughput is shown ($tput/s)");
is(gate_value($node, 'transaction', 'ceiling') . '/' . gate_value($node, 'transaction', 'floor'),
	'16/2', 'sleep: work under 1000 releases a second runs no throughput trials (ceiling auto_max, floor auto_min)');
no_problems($node, 'the sleep load');

# --- holders waiting for their client (pgbench's \sleep, between
# statements) load nothing: their service time leaves the wait out
($late, $low, $high) = run_load('think',
	"BEGIN;\nSELECT 1;\n\\sleep 20 ms\nSELECT 2;\nCOMMIT;\n", 6);
is(median($late), 16, 'client think time: the limit reached auto_max');
($baseline, $service) = split /\|/, $node->safe_psql('pccmon',
	"SELECT round(baseline_ms::numeric, 1), round(service_ms::numeric, 1)"
	  . " FROM pg_concurrency_control WHERE gate = 'transaction'");
ok($service < 10 && $baseline < 10,
	"client think time: service time ($service ms) and baseline ($baseline ms) leave out the 20 ms wait");
no_problems($node, 'the think-time load');

# --- work serialised on one row: every holder slows the others down
($late, $low, $high) = run_load('hot',
	"BEGIN;\nUPDATE hot SET v = v + 1 WHERE id = 1;\nSELECT pg_sleep(0.02);\nCOMMIT;\n", 8);
ok($low >= 2 && $high <= 16, "hot row: the limit stayed within [2, 16] ($low..$high)");
my $m = median($late);
ok($m <= 10, "hot row: the limit settled low (median $m of auto_max 16)");
($baseline, $service) = split /\|/, $node->safe_psql('pccmon',
	"SELECT round(baseline_ms), round(service_ms)"
	  . " FROM pg_concurrency_control WHERE gate = 'transaction'");
ok($service >= $baseline,
	"hot row: service time ($service ms) is above the baseline ($baseline ms)");
no_problems($node, 'the hot-row load');

# --- a static limit at reload stops the controller; auto resumes it
pcc_reload($node, transaction_concurrency => '5');
is(gate_value($node, 'transaction', 'auto || \'/\' || max_concurrency'), 'false/5',
	'a static limit replaces the auto limit at reload');
is(gate_value($node, 'transaction', 'baseline_ms IS NULL'), 't',
	'a static gate shows no controller state');
pcc_reload($node, transaction_concurrency => '-1', auto_max => '3');
ok( wait_until($node,
		"SELECT auto AND max_concurrency BETWEEN 2 AND 3 FROM pg_concurrency_control"
		  . " WHERE gate = 'transaction'", 10),
	'auto again, within the new bounds');
# bounds changed later apply at once, also on a gate with no work to measure
sleep 3;	# (the controller's first probe gives up after 2 s without work)
pcc_reload($node, auto_min => '6', auto_max => '8');
ok( wait_until($node,
		"SELECT auto AND max_concurrency BETWEEN 6 AND 8 FROM pg_concurrency_control"
		  . " WHERE gate = 'transaction'", 3),
	'a raised auto_min applies at once to an idle auto gate');
pcc_reload($node, auto_min => '2', auto_max => '3');
ok( wait_until($node,
		"SELECT auto AND max_concurrency BETWEEN 2 AND 3 FROM pg_concurrency_control"
		  . " WHERE gate = 'transaction'", 3),
	'a lowered auto_max applies at once to an idle auto gate');
# a raised auto_max lets the limit grow to it (sleeps, under 1000 releases
# a second, run no trials that would lift the ceiling the start set)
pcc_reload($node, auto_max => '16');
($late, $low, $high) = run_load('wider', "BEGIN;\nSELECT pg_sleep(0.02);\nCOMMIT;\n", 8);
is(median($late), 16, 'a raised auto_max: the limit grows to it');
is(gate_value($node, 'transaction', 'ceiling'), '16', 'the ceiling is the new auto_max');
no_problems($node, 'switching modes');

# --- log_auto: the controller's decisions in the server log, only when on
my $logged = qr/pg_concurrency_control: \w+ gate: /;
unlike(slurp_file($node->logfile), $logged,
	'log_auto off (the default): the controller logs nothing');
my ($rout, $rerr) = ('', '');
my $reader = start_load('reads', "SELECT 1;\n", 120, \$rout, \$rerr);
my $log_offset = -s $node->logfile;
pcc_reload($node, query_concurrency => '-1', log_auto => 'on');
my $log = '';
for (my $t0 = time(); time() - $t0 < 30; usleep(200_000))
{
	$log = slurp_file($node->logfile, $log_offset);
	last if $log =~ /query gate: limit \d+ tried against/;
}
like($log, qr/LOG:  pg_concurrency_control: query gate: limit held at 2 \(was \d+\) to measure the baseline: the controller starts/,
	'log_auto: the first probe is logged');
like($log, qr/query gate: baseline [\d.]+ ms/,
	'log_auto: the baseline the probe measured is logged');
like($log,
	qr/query gate: limit \d+ tried against \d+ for [\d.]+ s: (\d+|none) releases\/s at \d+, (\d+|none) at \d+(?: \(pairs: mean [+-][\d.]+%, standard error [\d.]+%\))?; [a-z :]+, limit (stays|now) \d+ \(ceiling \d+, floor \d+\)/,
	'log_auto: a trial\'s throughputs, verdict and limit are logged');
# off at reload: the controller, restarted, probes again, silently
pcc_reload($node, log_auto => 'off', query_concurrency => '64');
sleep 1;	# a scan of the watchdog (every 100 ms here) stops the controller
$log_offset = -s $node->logfile;
pcc_reload($node, query_concurrency => '-1');
ok( wait_until($node,
		"SELECT auto AND baseline_ms IS NOT NULL FROM pg_concurrency_control WHERE gate = 'query'", 30),
	'log_auto off: the restarted controller measured a baseline');
sleep 3;	# and a trial that started then has its verdict
$reader->kill_kill;
unlike(slurp_file($node->logfile, $log_offset), $logged,
	'log_auto off at reload: the controller logs nothing more');
$node->poll_query_until('postgres',
	"SELECT count(*) = 0 FROM pg_stat_activity WHERE application_name = 'pgbench'")
  or die 'pgbench sessions did not end';
no_problems($node, 'the logged load');

$node->stop;
done_testing();
