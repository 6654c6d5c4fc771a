# On a streaming standby the module works as on a primary: reads are gated,
# the status functions answer, the watchdog runs (in pg_stat_activity) and
# applies reloads, nothing needs a writable catalog; after promotion writes are
# gated too.  A write that a read-only transaction rejects (every transaction
# on a standby; on a primary, one made read only by default or by SET
# TRANSACTION) fails at once instead of queuing first.
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use PccTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);

my $primary = pcc_node('primary', { allows_streaming => 1 },
	"pg_concurrency_control.query_concurrency = 1",
	"pg_concurrency_control.transaction_concurrency = 1",
	"pg_concurrency_control.autocommit_concurrency = 1",
	"deadlock_timeout = '10min'");
$primary->safe_psql('postgres', 'CREATE TABLE t (id int PRIMARY KEY, v int); INSERT INTO t VALUES (1, 0); '
	. 'CREATE MATERIALIZED VIEW mv AS SELECT * FROM t');
$primary->backup('b');
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'b', has_streaming => 1);
$standby->start;
$primary->wait_for_catchup($standby);
is($standby->safe_psql('pccmon', 'SELECT pg_is_in_recovery()'), 't', 'the standby is in recovery');

# --- reads are gated on the standby
my ($a, $b) = read_behind_read($standby, 'SELECT pg_sleep(1.5);', 'SELECT v FROM t;',
	'standby: ');
my $out = finish($b);
like($out, qr/^0$/m, 'and runs once the first is done');
finish($a);
$b->query_safe('BEGIN READ ONLY');
is(gate_value($standby, 'transaction', 'running'), '1', 'a read-only block holds a transaction slot');

# A write in a read-only transaction (made so by $setup in its session, or
# by $prefix in the same query string) fails at once, not after queuing for
# the transaction slot it would need, which a read-only block holds.
sub write_fails_unqueued
{
	my ($node, $label, $setup, $prefix) = @_;
	$prefix //= '';
	for my $write ('UPDATE t SET v = v + 1', 'REFRESH MATERIALIZED VIEW mv')
	{
		my $w = session($node);
		my $pid = backend_pid($w);
		$w->query_safe($setup) if $setup;
		send_sql($w, "$prefix$write \\; SELECT 1;");
		my $deadline = time() + 10;
		while ($w->{stderr} !~ /read-only/ && time() < $deadline)
		{
			$w->{run}->pump_nb;
			usleep(50_000);
		}
		like($w->{stderr}, qr/cannot execute \S.* in a read-only transaction/,
			"$label: $write (an implicit block) fails at once, the transaction slot held");
		is(gate_value($node, 'transaction', 'waiting'), '0', 'it never queued');
		$node->safe_psql('pccmon', "SELECT pg_cancel_backend($pid)");	# if it did
		finish($w);
		$w->quit;
	}
}

# --- on the standby a write fails at once; a MERGE that only does nothing
# asks no more than a read, runs there, and is gated
write_fails_unqueued($standby, 'standby');
$b->query_safe('COMMIT');
my $m = session($standby);
send_sql($m, 'MERGE INTO t USING (SELECT 1 AS id FROM pg_sleep(1.5)) s ON t.id = s.id '
	. 'WHEN MATCHED THEN DO NOTHING;');
ok(wait_until($standby,
		"SELECT running = 1 FROM pg_concurrency_control WHERE gate = 'autocommit'", 10),
	'standby: a MERGE that does nothing holds an autocommit slot');
my (undef, $merr) = finish($m);
is($merr, '', 'and runs');
$m->quit;

# --- the same on a primary, in transactions read only by
# default_transaction_read_only; a write to a temporary table runs there,
# gated
my $h = session($primary);
$h->query_safe('BEGIN READ ONLY');
is(gate_value($primary, 'transaction', 'running'), '1', 'primary: a read-only block holds the transaction slot');
write_fails_unqueued($primary, 'primary, default_transaction_read_only',
	'SET default_transaction_read_only = on');
write_fails_unqueued($primary, 'primary, SET TRANSACTION READ ONLY', undef,
	'SET TRANSACTION READ ONLY \\; ');
$h->query_safe('COMMIT');
$m = session($primary);
$m->query_safe('CREATE TEMP TABLE tt (x int); SET default_transaction_read_only = on');
is($m->query_safe('SHOW transaction_read_only'), 'on', 'primary: the next session is read only');
send_sql($m, 'INSERT INTO tt SELECT 1 FROM pg_sleep(1.5);');
ok(wait_until($primary,
		"SELECT running = 1 FROM pg_concurrency_control WHERE gate = 'autocommit'", 10),
	'primary, read only: a write to a temporary table holds an autocommit slot');
(undef, $merr) = finish($m);
is($merr, '', 'and runs');
no_problems($primary, 'read-only transactions on a primary');
$m->quit;
$h->quit;

# --- the watchdog runs on the hot standby: it applies a reload
pcc_reload($standby, query_concurrency => 2);
is(gate_value($standby, 'query', 'max_concurrency'), '2', 'a reload on the standby changes its limit');
like(watchdog_pid($standby), qr/^\d+$/, 'the standby\'s watchdog (one) is in its pg_stat_activity');
is($standby->safe_psql('pccmon',
	"SELECT count(*) FROM pg_concurrency_control_backends()"), '0',
	'the status functions answer');
$standby->safe_psql('pccmon', 'SELECT pg_concurrency_control_reset()');
no_problems($standby, 'reads on a standby');

# --- after promotion, writes are gated
$standby->promote;
$standby->poll_query_until('pccmon', 'SELECT NOT pg_is_in_recovery()') or die;
send_sql($a, 'UPDATE t SET v = v + 1 WHERE pg_sleep(1) IS NOT NULL;');
ok(wait_gate($standby, 'autocommit', 'running', 1), 'a write holds the promoted node\'s autocommit slot');
send_sql($b, 'UPDATE t SET v = v + 1;');
ok(wait_gate($standby, 'autocommit', 'waiting', 1), 'a second write waits for it');
finish($b);
finish($a);
is($standby->safe_psql('postgres', 'SET pg_concurrency_control.bypass = on; SELECT v FROM t'),
	'2', 'both writes ran');
no_problems($standby, 'promotion');
$a->quit;
$b->quit;
done_testing();
