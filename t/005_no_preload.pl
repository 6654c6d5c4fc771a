# Without shared_preload_libraries the extension refuses, saying how to fix it.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('nopreload');
$node->init;
$node->start;
my ($ret, $out, $err) =
  $node->psql('postgres', 'CREATE EXTENSION pg_concurrency_control');
isnt($ret, 0, 'CREATE EXTENSION fails without the preload');
like($err, qr/must be loaded via shared_preload_libraries/, 'the error says why');
like($err, qr/HINT:  Add pg_concurrency_control to shared_preload_libraries/,
	'the hint says how to fix it');
is($node->safe_psql('postgres',
		"SELECT count(*) FROM pg_extension WHERE extname = 'pg_concurrency_control'"),
	'0', 'nothing was left installed');
$node->stop;
done_testing();
