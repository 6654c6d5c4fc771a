# Work PostgreSQL runs at COMMIT is never gated: with every gate full and
# control timeouts that raise errors, the deferred foreign-key check and a
# deferred constraint trigger of a transaction that was never admitted
# (DO, CALL, COPY) run at once, and its COMMIT succeeds.
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use PccTest;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time);

my $node = pcc_node('commit_time',
	(map { "pg_concurrency_control.${_}_concurrency = 1" }
	  qw(query bigquery transaction autocommit)),
	"pg_concurrency_control.control_timeout = '500ms'",
	"pg_concurrency_control.bigsql_control_timeout = '500ms'",
	"pg_concurrency_control.timeout_action = 'error'",
	"pg_concurrency_control.bigsql_timeout_action = 'error'",
	"deadlock_timeout = '10min'");

$node->safe_psql('postgres', q{
	CREATE TABLE parent (id int PRIMARY KEY);
	INSERT INTO parent VALUES (1);
	CREATE TABLE child (id int PRIMARY KEY,
		parent int REFERENCES parent DEFERRABLE INITIALLY DEFERRED);
	CREATE FUNCTION recheck() RETURNS trigger LANGUAGE plpgsql AS $$
	BEGIN
		PERFORM count(*) FROM parent;
		UPDATE parent SET id = id WHERE id = NEW.parent;
		RETURN NULL;
	END $$;
	CREATE CONSTRAINT TRIGGER child_recheck AFTER INSERT ON child
		DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION recheck();
	CREATE PROCEDURE add_two(a int, b int) LANGUAGE plpgsql AS $$
	BEGIN
		INSERT INTO child VALUES (a, 1);
		COMMIT;
		INSERT INTO child VALUES (b, 1);
	END $$;
	CREATE TABLE filler (v int);
	INSERT INTO filler VALUES (0);
});

# Fill every gate: a block, a read, a write and a big query, each held.
my %holder;
$holder{$_} = session($node) for qw(transaction query autocommit bigquery);
$holder{transaction}->query_safe('BEGIN');
$holder{transaction}->query_safe('SELECT 1');
send_sql($holder{query}, 'SELECT pg_sleep(60);');
send_sql($holder{autocommit},
	'UPDATE filler SET v = v + 1 WHERE pg_sleep(60) IS NOT NULL;');
send_sql($holder{bigquery}, 'SELECT /*+bigsql*/ pg_sleep(60);');
for my $gate (qw(transaction query autocommit bigquery))
{
	ok(wait_gate($node, $gate, 'running', 1), "the $gate gate is full");
}

my $copy_file = $node->basedir . '/child.data';
open(my $fh, '>', $copy_file) or die;
print $fh "5\t1\n";
close($fh);

my $w = session($node);
for my $case (
	[ 'DO', 'DO $$ BEGIN INSERT INTO child VALUES (1, 1); END $$' ],
	[ 'CALL (a COMMIT inside)', 'CALL add_two(2, 3)' ],
	[ 'COPY', "COPY child FROM '$copy_file'" ])
{
	my ($what, $sql) = @$case;
	my $t0 = time();
	$w->query($sql);
	is($w->{stderr}, '', "$what: its COMMIT runs the deferred checks and succeeds");
	ok(time() - $t0 < 0.5 + 2, "$what: at once, not after a control timeout");
	$w->{stderr} = '';
}
is($node->safe_psql('postgres', 'SET pg_concurrency_control.bypass = on; SELECT count(*) FROM child'), '4',
	'every row is committed');
is( $node->safe_psql('pccmon',
		"SELECT string_agg(gate || ':' || waiting || '/' || queued || '/' || timeouts, ',' ORDER BY gate)"
		  . ' FROM pg_concurrency_control'),
	'autocommit:0/0/0,bigquery:0/0/0,query:0/0/0,transaction:0/0/0',
	'nothing queued, nothing timed out');

# A failing deferred check is the constraint's error, not a gate's.
$w->query('DO $$ BEGIN INSERT INTO child VALUES (9, 99); END $$');
like($w->{stderr}, qr/violates foreign key constraint/,
	'a failing commit-time check reports the constraint');
$w->{stderr} = '';

$node->safe_psql('pccmon',
	"SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE query LIKE '%pg_sleep(60)%' AND pid <> pg_backend_pid()");
$holder{transaction}->query_safe('COMMIT');
ok(wait_until($node,
	'SELECT sum(running) = 0 FROM pg_concurrency_control'), 'the gates drain');
no_problems($node, 'commit-time work');
$_->quit for values %holder;
$w->quit;
done_testing();
