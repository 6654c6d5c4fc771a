# The deadlock the lock manager cannot see: a queued backend holds a lock
# that every slot holder waits for.  Holders blocked on a heavyweight lock
# past deadlock_timeout stop counting against the limit, so the waiter is
# admitted instead of everything hanging.
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use PccTest;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time);

my $node = pcc_node('deadlock',
	"pg_concurrency_control.bigquery_concurrency = 1",
	"pg_concurrency_control.autocommit_concurrency = 1",
	"deadlock_timeout = '200ms'");
$node->safe_psql('postgres', q{
	CREATE TABLE lk (x int);
	INSERT INTO lk VALUES (1);
	CREATE TABLE sink (x int);
	CREATE FUNCTION lock_lk_later() RETURNS int LANGUAGE plpgsql AS $$
	BEGIN
		PERFORM pg_sleep(0.5);
		LOCK TABLE lk IN ACCESS EXCLUSIVE MODE;
		RETURN 1;
	END $$;
	CREATE TABLE many (x int);
	CREATE FUNCTION share_many_when(n int) RETURNS int LANGUAGE plpgsql AS $$
	BEGIN
		WHILE (SELECT count(*) FROM pg_stat_activity
			   WHERE wait_event_type = 'Extension' AND backend_type = 'client backend') < n
		LOOP
			PERFORM pg_sleep(0.01);
		END LOOP;
		LOCK TABLE many IN SHARE MODE;
		RETURN 1;
	END $$;
});

my $holder = session($node);
my $waiter = session($node);

# --- a block holds a lock, then queues for a big-query slot whose holder
#     needs that lock
send_sql($holder, 'SELECT /*+bigsql*/ lock_lk_later();');
ok(wait_gate($node, 'bigquery', 'running', 1), 'holder has the only bigquery slot');
$waiter->query_safe('BEGIN');
$waiter->query_safe('SELECT count(*) FROM lk');
send_sql($waiter, 'SELECT /*+bigsql*/ 2;');
ok(wait_until($node,
		"SELECT count(*) = 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%lock_lk_later%'",
		10),
	'the holder now waits for the lock the waiter holds');
ok(wait_until($node,
		"SELECT waiting = 0 FROM pg_concurrency_control WHERE gate = 'bigquery'", 10),
	'the waiter is admitted within seconds, not never');
my ($out, $err) = finish($waiter);
like($out, qr/^2$/m, 'its statement ran');
is(gate_value($node, 'bigquery', 'lock_escapes'), '1', 'counted as a lock escape');
$waiter->query_safe('COMMIT');
finish($holder);
ok(wait_gate($node, 'bigquery', 'running', 0), 'both finished and gave their slots back');
no_problems($node, 'bigquery deadlock escape');

# --- an autocommit statement queues holding the lock it took while
#     parsing; the holder needs a conflicting lock
send_sql($holder, 'INSERT INTO sink SELECT lock_lk_later();');
ok(wait_gate($node, 'autocommit', 'running', 1), 'holder has the only autocommit slot');
send_sql($waiter, 'UPDATE lk SET x = x + 1;');
ok(wait_until($node,
		"SELECT waiting = 1 FROM pg_concurrency_control WHERE gate = 'autocommit'", 10),
	'the UPDATE queues with its table lock');
ok(wait_until($node,
		"SELECT waiting = 0 AND lock_escapes = 1 FROM pg_concurrency_control WHERE gate = 'autocommit'",
		10),
	'the UPDATE is admitted past the lock-blocked holder');
($out, $err) = finish($waiter);
is($err, '', 'the UPDATE succeeded');
finish($holder);
ok(wait_gate($node, 'autocommit', 'running', 0), 'slots returned');
is($node->safe_psql('postgres', 'SELECT count(*) FROM sink'), '1', 'the holder finished too');
no_problems($node, 'autocommit deadlock escape');

# --- under load: many queued blocks each hold a lock the holder needs.
#     The holder is escaped once, then the waiters pass one after another
#     at full speed, not one deadlock_timeout each.
my $n = 30;
my @many = map { session($node) } 1 .. $n;
send_sql($holder, "SELECT /*+bigsql*/ share_many_when($n);");
ok(wait_gate($node, 'bigquery', 'running', 1), 'holder has the only bigquery slot');
for my $s (@many)
{
	$s->query_safe('BEGIN');
	$s->query_safe('INSERT INTO many VALUES (1)');	# ROW EXCLUSIVE on many
	send_sql($s, "SELECT /*+bigsql*/ 1;\nCOMMIT;");
}
ok(wait_until($node,
		"SELECT count(*) = 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%share_many_when%'",
		20),
	"the holder waits for the locks of $n queued blocks");
my $t0 = time();
ok(wait_until($node,
		"SELECT running = 0 AND waiting = 0 FROM pg_concurrency_control WHERE gate = 'bigquery'",
		30),
	'every waiter and the holder finished');
my $took = time() - $t0;
cmp_ok($took, '<', 0.2 + 0.25 + 2.5,
	"$n hidden deadlocks resolved in $took s: deadlock_timeout + a watchdog pass + the work");
finish($_) for @many;
is($node->safe_psql('postgres', 'SELECT count(*) FROM many'), $n, 'every queued block committed');
cmp_ok(gate_value($node, 'bigquery', 'lock_escapes'), '>=', 2, 'admissions past the holder were counted');
no_problems($node, 'deadlock escape under load');
$_->quit for @many;

$_->quit for ($holder, $waiter);
$node->stop;
done_testing();
