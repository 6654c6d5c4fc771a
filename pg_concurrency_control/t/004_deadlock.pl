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

$_->quit for ($holder, $waiter);
$node->stop;
done_testing();
