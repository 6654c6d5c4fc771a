# Across nodes: two sessions each hold their own node's only transaction
# slot and read the other node through postgres_fdw.  Each remote
# transaction needs the slot the other session holds: a wait cycle that no
# lock manager and no deadlock escape sees.  The documented setup gates at
# the entry node only: the role the fan-out connects as bypasses the gates
# on the nodes it reaches, and both transactions finish at once.
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use PccTest;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time);

my %node;
for my $n (qw(a b))
{
	$node{$n} = pcc_node("fdw_$n",
		"pg_concurrency_control.transaction_concurrency = 1",
		"pg_concurrency_control.query_concurrency = 1",
		"deadlock_timeout = '10min'");
	$node{$n}->safe_psql('postgres', qq{
		CREATE TABLE t_$n (v int);
		INSERT INTO t_$n VALUES (1);
		CREATE ROLE fanout LOGIN;
		GRANT SELECT ON t_$n TO fanout;
		CREATE EXTENSION postgres_fdw;
	});
}
for my $pair ([ 'a', 'b' ], [ 'b', 'a' ])
{
	my ($local, $remote) = @$pair;
	my $r = $node{$remote};
	$node{$local}->safe_psql('postgres', qq{
		CREATE SERVER node_$remote FOREIGN DATA WRAPPER postgres_fdw
			OPTIONS (host '@{[ $r->host ]}', port '@{[ $r->port ]}', dbname 'postgres');
		CREATE USER MAPPING FOR CURRENT_USER SERVER node_$remote OPTIONS (user 'fanout');
		CREATE FOREIGN TABLE t_$remote (v int) SERVER node_$remote;
	});
}

# Each session holds its node's transaction slot, then reads the other node.
sub crossing
{
	my ($timeout) = @_;
	my $sa = session($node{a});
	my $sb = session($node{b});
	for my $s ($sa, $sb)
	{
		$s->query_safe("SET pg_concurrency_control.control_timeout = '$timeout'");
		$s->query_safe("SET pg_concurrency_control.timeout_action = 'error'");
		$s->query_safe('BEGIN');
	}
	my $t0 = time();
	send_sql($sa, 'SELECT v FROM t_b;');
	send_sql($sb, 'SELECT v FROM t_a;');
	my (undef, $ea) = finish($sa);
	my (undef, $eb) = finish($sb);
	$sa->query('COMMIT');
	$sb->query('COMMIT');
	$_->quit for ($sa, $sb);
	return (time() - $t0, "$ea$eb");
}

# The fan-out's remote sessions are gated like any: the cycle holds until
# a control timeout breaks it (the remote session's own, 2 s here, set for
# the role on the remote node).
$node{$_}->safe_psql('postgres',
	"ALTER ROLE fanout SET pg_concurrency_control.control_timeout = '2s'")
  for qw(a b);
my ($secs, $err) = crossing('1h');
like($err, qr/timed out after \d+ ms waiting for the transaction gate/,
	'gated on both nodes, the crossing transactions wait for each other until a timeout');
ok($secs >= 2, 'they waited for the timeout');

# The documented setup: the fan-out role bypasses the gates where it lands.
for my $n (qw(a b))
{
	$node{$n}->safe_psql('postgres',
		'ALTER ROLE fanout SET pg_concurrency_control.bypass = on');
}
($secs, $err) = crossing('1h');
is($err, '', 'with bypass for the fan-out role, both crossing transactions finish');
ok($secs < 2, 'at once, without waiting for a timeout');
no_problems($node{$_}, "crossing transactions on node $_") for qw(a b);

# Rows of a foreign table that a statement locks make it a write: the
# planner copies them (ROW_MARK_COPY), and postgres_fdw locks them remotely.
$node{b}->safe_psql('postgres', 'GRANT UPDATE ON t_b TO fanout');
$node{a}->safe_psql('postgres', 'SELECT pg_concurrency_control_reset()');
$node{a}->safe_psql('postgres', 'SELECT v FROM t_b FOR UPDATE');
is( $node{a}->safe_psql('pccmon',
		"SELECT string_agg(gate || ' ' || admitted, ', ' ORDER BY gate)"
		  . " FROM pg_concurrency_control WHERE admitted > 0"),
	'autocommit 1', 'SELECT ... FOR UPDATE of a foreign table takes an autocommit slot');
done_testing();
