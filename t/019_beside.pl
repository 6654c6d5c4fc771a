# Beside pg_stat_statements and auto_explain, in either order in
# shared_preload_libraries: the hooks chain, pg_stat_statements counts every
# statement (those that waited too), auto_explain logs them, and each
# statement is admitted once.
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use PccTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

for my $order ('pg_stat_statements, auto_explain, pg_concurrency_control',
	'pg_concurrency_control, auto_explain, pg_stat_statements')
{
	my $name = $order =~ /^pg_con/ ? 'first' : 'last';
	my $node = pcc_node("beside_$name",
		"pg_concurrency_control.query_concurrency = 1",
		"auto_explain.log_min_duration = 0",
		"deadlock_timeout = '10min'");
	# pcc_node preloads the module alone: name the three, in this order
	$node->append_conf('postgresql.conf', "shared_preload_libraries = '$order'");
	$node->restart;
	$node->safe_psql('postgres', 'CREATE EXTENSION pg_stat_statements');
	$node->safe_psql('pccmon', 'SELECT pg_concurrency_control_reset()');

	my ($a, $b) = read_behind_read($node, 'SELECT pg_sleep(1) AS held;',
		'SELECT 42 AS waited;', "$name: ");
	finish($a);
	my $out = finish($b);
	like($out, qr/^42$/m, "$name: the waiting statement ran");
	# a's finishing query may queue behind b's too
	is(gate_value($node, 'query', "admitted || '/' || (queued BETWEEN 1 AND 2)"), '4/true',
		"$name: one admission per statement (the two reads, two finishes), the waiter queued");
	is( $node->safe_psql('postgres',
			"SELECT calls FROM pg_stat_statements WHERE query = 'SELECT \$1 AS waited'"),
		'1', "$name: pg_stat_statements counted the statement that waited");
	like(slurp_file($node->logfile), qr/Query Text: SELECT 42 AS waited/,
		"$name: auto_explain logged its plan");
	no_problems($node, "$name: three modules");
	$a->quit;
	$b->quit;
	$node->stop;
}
done_testing();
