# pg_upgrade carries a cluster that uses the module, every limit at 1, over
# to a new one: its check of the libraries passes (in a new cluster that
# does not preload it yet, the library loads and does nothing), and the
# extension, a view built on the module's view, its grant and a database's
# bypass setting come across.  The new cluster then gates as the old one
# did.  Both clusters are of the version under test: a major upgrade runs
# the same steps between two installations.
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use PccTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $extversion_sql =
  "SELECT extversion FROM pg_extension WHERE extname = 'pg_concurrency_control'";
my @limits = map { "pg_concurrency_control.${_}_concurrency = 1" }
  qw(query bigquery transaction autocommit);
my $old = pcc_node('old', @limits);
$old->safe_psql('postgres',
	'CREATE TABLE t (id int PRIMARY KEY, v int); '
	  . 'INSERT INTO t SELECT g, 0 FROM generate_series(1, 1000) g; '
	  . 'CREATE ROLE watcher; '
	  . 'CREATE VIEW gates AS SELECT gate, max_concurrency FROM pg_concurrency_control; '
	  . 'GRANT SELECT ON gates TO watcher');
my $version = $old->safe_psql('postgres', $extversion_sql);
$old->stop;

# pg_upgrade writes its logs under the new data directory, and its script
# to delete the old cluster in the current one
chdir PostgreSQL::Test::Utils::tempdir;

# Upgrade the old cluster (copied, so it can be upgraded again) into a new
# one, whose configuration preloads the module during the upgrade or only
# after it (pg_upgrade then LOADs the library, which must load quietly).
sub upgrade_to
{
	my ($name, $preload_during) = @_;
	my $preload = "shared_preload_libraries = 'pg_concurrency_control'";
	my $new = PostgreSQL::Test::Cluster->new($name);
	$new->init;
	$new->append_conf('postgresql.conf',
		join("\n", "max_connections = 60", "max_prepared_transactions = 4", @limits));
	$new->append_conf('postgresql.conf', $preload) if $preload_during;
	my $bindir = $new->config_data('--bindir');
	command_ok(
		[
			'pg_upgrade', '--no-sync',
			'-d', $old->data_dir, '-D', $new->data_dir,
			'-b', $bindir, '-B', $bindir,
			'-s', $new->host, '-p', $old->port, '-P', $new->port,
			'--jobs', '2'
		],
		"$name: pg_upgrade, the module preloaded in the old cluster"
		  . ($preload_during ? ' and the new' : ' only'));
	$new->append_conf('postgresql.conf', $preload) unless $preload_during;
	$new->start;
	return $new;
}

my $unloaded = upgrade_to('unloaded', 0);
is($unloaded->safe_psql('postgres', $extversion_sql),
	$version, 'unloaded: the extension came across');
$unloaded->stop;
my $new = upgrade_to('preloaded', 1);
is($new->safe_psql('postgres', $extversion_sql),
	$version, 'preloaded: the extension came across');
is($new->safe_psql('postgres', 'SELECT count(*) FROM t'), '1000', 'and the data');
is($new->safe_psql('postgres',
		"SET ROLE watcher; SELECT string_agg(gate || '=' || max_concurrency, ',' ORDER BY gate) FROM gates"),
	'autocommit=1,bigquery=1,query=1,transaction=1',
	'a view on the module\'s view answers, its grant kept');
is($new->safe_psql('pccmon', 'SHOW pg_concurrency_control.bypass'), 'on',
	'a database\'s bypass setting came across');

# --- the new cluster gates
my ($a, $b) = (session($new), session($new));
$a->query_safe('BEGIN');
is(gate_value($new, 'transaction', 'running'), '1', 'a block holds the new cluster\'s transaction slot');
send_sql($b, 'BEGIN;');
ok(wait_gate($new, 'transaction', 'waiting', 1), 'a second block waits for it');
$a->query_safe('COMMIT');
finish($b);
$b->query_safe('COMMIT');
no_problems($new, 'the upgrade');
$a->quit;
$b->quit;
done_testing();
