# The postgres_exporter queries file (monitoring/postgres_exporter.yaml)
# against the real exporter: under a queueing load the gauges show the
# queue, the counters move, and a control timeout is counted.
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use PccTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use HTTP::Tiny;
use Time::HiRes qw(usleep);

my $exporter = $ENV{PCC_EXPORTER} // '';
plan skip_all => 'PCC_EXPORTER does not name the postgres_exporter binary'
  unless -x $exporter;
my $queries = "$FindBin::RealBin/../monitoring/postgres_exporter.yaml";

my $node = pcc_node('prometheus',
	"pg_concurrency_control.query_concurrency = 1",
	"deadlock_timeout = '10min'");
my $port = PostgreSQL::Test::Cluster::get_free_port();
my $dsn = 'host=' . $node->host . ' port=' . $node->port
  . " user=$ENV{USER} dbname=pccmon sslmode=disable";
my $h = IPC::Run::start(
	[ $exporter, "--web.listen-address=127.0.0.1:$port",
		"--extend.query-path=$queries", '--disable-default-metrics',
		'--disable-settings-metrics' ],
	'<', \undef, '>', $node->basedir . '/exporter.log', '2>&1',
	init => sub { $ENV{DATA_SOURCE_NAME} = $dsn });

# One scrape's text, or undef.
sub scrape_all
{
	my ($at) = @_;
	my $r = HTTP::Tiny->new(timeout => 10)->get("http://127.0.0.1:$at/metrics");
	return $r->{success} ? $r->{content} : undef;
}

# One series' value from a scrape, or undef.
sub scrape
{
	my ($metric, $gate) = @_;
	my $content = scrape_all($port);
	return undef unless defined $content;
	return $1
	  if $content =~ /^pg_concurrency_control_${metric}\{[^}]*gate="$gate"[^}]*\} (\S+)$/m;
	return undef;
}

sub scrape_until
{
	my ($metric, $gate, $want) = @_;
	for (1 .. 100)
	{
		my $v = scrape($metric, $gate);
		return $v if defined $v && $want->($v);
		usleep(100_000);
	}
	return scrape($metric, $gate);
}

my $limit = scrape_until('max_concurrency', 'query', sub { 1 });
is($limit, '1', 'the exporter serves the gate\'s limit');
my $admitted0 = scrape('admitted', 'query');
ok(defined $admitted0, 'and its counters');

my $a = session($node);
my $b = session($node);
my $c = session($node);
send_sql($a, 'SELECT pg_sleep(2);');
ok(wait_gate($node, 'query', 'running', 1), 'a read holds the slot');
send_sql($b, 'SELECT 1;');
$c->query_safe("SET pg_concurrency_control.control_timeout = '200ms'");
$c->query_safe("SET pg_concurrency_control.timeout_action = 'wait'");
send_sql($c, 'SELECT 2;');
ok(wait_gate($node, 'query', 'waiting', 2), 'two reads queue');
is(scrape_until('waiting', 'query', sub { $_[0] == 2 }), '2', 'waiting shows the queue');
is(scrape('running', 'query'), '1', 'running shows the holder');
finish($a);
finish($b);
finish($c);
ok(scrape_until('queued', 'query', sub { $_[0] >= 2 }) >= 2, 'queued counts both waits');
ok(scrape('timeouts', 'query') >= 1, 'timeouts counts the expired control timeout');
ok(scrape('wait_seconds', 'query') > 0, 'wait_seconds grows');
ok(scrape('admitted', 'query') > $admitted0, 'admitted grows');
is(scrape_until('waiting', 'query', sub { $_[0] == 0 }), '0', 'the queue drains');
like(scrape('baseline_seconds', 'query'), qr/NaN/, 'a static gate has no adaptive inputs');
is(scrape('turn_budget_seconds', 'query'), '0.3',
	'turn_budget_seconds is max_turn_wait (300 ms) while the mean wait is short');

# With --auto-discover-databases the gates are still one set of series: the
# query runs in the database the exporter connects to, not in every one
# (the others lack the extension, and would repeat the server's gates).
$node->safe_psql('postgres', 'CREATE DATABASE pccother');
my $port2 = PostgreSQL::Test::Cluster::get_free_port();
my $h2 = IPC::Run::start(
	[ $exporter, "--web.listen-address=127.0.0.1:$port2",
		"--extend.query-path=$queries", '--disable-default-metrics',
		'--disable-settings-metrics', '--auto-discover-databases' ],
	'<', \undef, '>', $node->basedir . '/exporter2.log', '2>&1',
	init => sub { $ENV{DATA_SOURCE_NAME} = $dsn });
my $all;
for (1 .. 100)
{
	$all = scrape_all($port2);
	last if defined $all && $all =~ /^pg_concurrency_control_max_concurrency\{/m;
	usleep(100_000);
}
$all //= '';
my @limits = ($all =~ /^pg_concurrency_control_max_concurrency\{[^}]*gate="query"/mg);
is(scalar @limits, 1, 'with databases discovered, one series per gate');
like($all, qr/^pg_exporter_last_scrape_error 0$/m, 'and the scrape has no error');

$h->kill_kill;
$h2->kill_kill;
$_->quit for ($a, $b, $c);
done_testing();
