# Workload groups: a session in a group (pg_concurrency_control.workload_group)
# takes its group's slot before its gate's, both released together; groups
# are defined at reload (pg_concurrency_control.groups), and removing one
# admits its waiters, as does enabled = off; a group that finds no place
# is applied once a removed group's place drains.
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use PccTest;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = pcc_node('groups',
	"pg_concurrency_control.transaction_concurrency = 10",
	"pg_concurrency_control.groups = 'reporting=1, batch=2'",
	"deadlock_timeout = '10min'");
$node->safe_psql('postgres', q{
	CREATE TABLE log (seq serial, who text);
	CREATE ROLE rep LOGIN;
	ALTER ROLE rep SET pg_concurrency_control.workload_group = 'reporting';
	GRANT ALL ON log, log_seq_seq TO rep;
});

is( $node->safe_psql('pccmon',
		"SELECT string_agg(gate || '=' || max_concurrency, ',' ORDER BY gate)"
		  . " FROM pg_concurrency_control WHERE gate LIKE 'group:%'"),
	'group:batch=2,group:reporting=1', 'the status lists each group with its limit');
is( $node->safe_psql('postgres', 'SHOW pg_concurrency_control.workload_group',
		extra_params => [ '-U', 'rep' ]),
	'reporting', 'ALTER ROLE puts the role\'s sessions in the group');

sub member
{
	my ($group) = @_;
	my $s = session($node);
	$s->query_safe("SET pg_concurrency_control.workload_group = '$group'") if $group;
	return $s;
}

sub rows_of
{
	my ($pid) = @_;
	return $node->safe_psql('pccmon',
		"SELECT string_agg(gate || ' ' || state, ', ' ORDER BY gate)"
		  . " FROM pg_concurrency_control_backends() WHERE pid = $pid");
}

# --- the group's limit holds while the gate has room
my ($r1, $r2, $other) = (member('reporting'), member('reporting'), member(''));
my ($r1_pid, $r2_pid) = (backend_pid($r1), backend_pid($r2));
$r1->query_safe('BEGIN');
is(rows_of($r1_pid), 'group:reporting running, transaction running',
	'a member holds its group\'s slot and the gate\'s');
send_sql($r2, "BEGIN; INSERT INTO log (who) VALUES ('r2');");
ok(wait_gate($node, 'group:reporting', 'waiting', 1), 'a second member queues on its group');
is(rows_of($r2_pid), 'group:reporting waiting',
	'it waits for the group and takes no gate slot meanwhile');
$other->query_safe('BEGIN');
is(gate_value($node, 'transaction', 'running'), '2',
	'a session in no group is admitted past the full group');
$other->query_safe('COMMIT');
no_problems($node, 'a full group');

$r1->query_safe('COMMIT');
ok(wait_gate($node, 'group:reporting', 'waiting', 0), 'the member\'s COMMIT admits the next');
finish($r2);
is(rows_of($r2_pid), 'group:reporting running, transaction running',
	'the next member holds both');
$r2->query_safe('COMMIT');
is( $node->safe_psql('pccmon',
		"SELECT string_agg(running::text, ',' ORDER BY gate) FROM pg_concurrency_control"
		  . " WHERE gate IN ('group:reporting', 'transaction')"),
	'0,0', 'both slots are given back together');
no_problems($node, 'group hand-off');

# --- an autocommit statement takes the group's slot for its run too
$r1->query_safe('BEGIN');
send_sql($r2, 'SELECT pg_sleep(0);');
ok(wait_gate($node, 'group:reporting', 'waiting', 1), 'an autocommit statement queues on its group');
$r1->query_safe('COMMIT');
finish($r2);
no_problems($node, 'an autocommit member');

# --- members never keep a slot between transactions
pcc_reload($node, quantum => '1min');
$r1->query_safe('BEGIN');
send_sql($r2, 'BEGIN;');
ok(wait_gate($node, 'group:reporting', 'waiting', 1), 'a member queued behind a turn');
$r1->query_safe('COMMIT');
ok(wait_gate($node, 'group:reporting', 'waiting', 0),
	'with a quantum, a member still hands its slots on at COMMIT');
is(gate_value($node, 'transaction', 'lingering'), '0', 'and keeps none');
finish($r2);
$r2->query_safe('COMMIT');
pcc_reload($node, quantum => '0');

# --- cancel and timeout on a group
$r1->query_safe('BEGIN');
$r2->query_safe("SET pg_concurrency_control.control_timeout = '200ms'");
send_sql($r2, 'BEGIN;');
my (undef, $err) = finish($r2);	# (its SELECT times out too)
like($err, qr/timed out after \d+ ms waiting for the group:reporting gate/,
	'a group wait times out like a gate wait');
like($err, qr/pg_concurrency_control\.groups/, 'the hint names the groups setting');
$r2->query_safe('RESET pg_concurrency_control.control_timeout');
send_sql($r2, 'BEGIN;');
ok(wait_gate($node, 'group:reporting', 'waiting', 1), 'queued again');
$node->safe_psql('pccmon', "SELECT pg_cancel_backend($r2_pid)");
ok(wait_gate($node, 'group:reporting', 'waiting', 0), 'cancel leaves the group queue');
is(gate_value($node, 'transaction', 'running'), '1', 'and took no gate slot');
$r1->query_safe('COMMIT');
(undef, $err) = finish($r2);	# its every statement waits for the group
like($err, qr/canceling statement due to user request/, 'the member was cancelled');
no_problems($node, 'leaving a group queue');

# --- removing a group admits its waiters; its slot drains, then it goes
$r1->query_safe('BEGIN');
send_sql($r2, 'BEGIN;');
ok(wait_gate($node, 'group:reporting', 'waiting', 1), 'a member queued');
pcc_reload($node, groups => 'batch=2');
ok(wait_gate($node, 'group:reporting', 'waiting', 0), 'a removed group admits its waiters');
finish($r2);
is(gate_value($node, 'group:reporting', 'max_concurrency || \'/\' || running'), '0/1',
	'the removed group has no limit while its slots drain');
is(rows_of($r2_pid), 'transaction running',
	'the waiter it admits, in no group now, gives its slot back');
$r1->query_safe('COMMIT');
$r2->query_safe('COMMIT');
no_problems($node, 'removing a group');
pcc_reload($node, groups => 'batch=2, adhoc=3');
is( $node->safe_psql('pccmon',
		"SELECT string_agg(gate || '=' || max_concurrency, ',' ORDER BY gate)"
		  . " FROM pg_concurrency_control WHERE gate LIKE 'group:%'"),
	'group:adhoc=3,group:batch=2', 'once drained it is gone and its slot reused');
is(gate_value($node, 'group:adhoc', 'admitted || \'/\' || queued'), '0/0',
	'a new group starts with its own totals');
$r1->query_safe('BEGIN');
is(rows_of($r1_pid), 'transaction running', 'a session of a removed group is in none');
$r1->query_safe('COMMIT');
no_problems($node, 'redefining groups');

# --- enabled = off admits everyone queued, also behind a group member
# idle in its transaction; on again, the group's limit holds again
pcc_reload($node, groups => 'batch=2, adhoc=1');
my ($a1, $a2) = (member('adhoc'), member('adhoc'));
$a1->query_safe('BEGIN');
$a1->query_safe('SELECT 1');
send_sql($a2, 'BEGIN; SELECT 1;');
ok(wait_gate($node, 'group:adhoc', 'waiting', 1),
	'a member queues behind one idle in its transaction');
pcc_reload($node, enabled => 'off');
ok(wait_gate($node, 'group:adhoc', 'waiting', 0),
	'enabled = off admits the waiters of a full group');
finish($a2);
$a2->query_safe('COMMIT');
is(gate_value($node, 'group:adhoc', 'max_concurrency'), '0',
	'the group has no limit while the module is off');
pcc_reload($node, enabled => 'on');
is(gate_value($node, 'group:adhoc', 'max_concurrency'), '1',
	'on again, the group has its limit again');
send_sql($a2, 'BEGIN; SELECT 1;');
ok(wait_gate($node, 'group:adhoc', 'waiting', 1), 'and its members queue again');
$a1->query_safe('COMMIT');
ok(wait_gate($node, 'group:adhoc', 'waiting', 0), 'until the holder commits');
finish($a2);
$a2->query_safe('COMMIT');
no_problems($node, 'enabled off and on with a full group');

# A member's admission that fails while it waits for the gate, inside a
# savepoint of a chained block, keeps the group slot it took; the retry
# takes only the gate's, and the transaction's end gives both back once.
pcc_reload($node, transaction_concurrency => 1);
my $gate_holder = session($node);
my $m = member('batch');

# $m's chained block times out in a savepoint waiting for the gate, which
# $gate_holder holds from then on; returns the error.
sub fail_admission_in_savepoint
{
	$m->query_safe('BEGIN');
	$m->query_safe('COMMIT AND CHAIN');
	$gate_holder->query_safe('BEGIN');
	$m->query_safe('SAVEPOINT a');
	$m->query_safe("SET LOCAL statement_timeout = '300ms'");
	$m->query('SELECT 1');
	my $err = $m->{stderr};
	$m->{stderr} = '';
	return $err;
}
like(fail_admission_in_savepoint(), qr/canceling statement due to statement timeout/,
	'the chained block\'s first statement times out waiting for the gate');
is(gate_value($node, 'group:batch', 'running'), '1', 'its group slot is still taken');
$m->query_safe('ROLLBACK TO a');
$m->query_safe('RESET statement_timeout');
send_sql($m, 'SELECT 1;');
ok(wait_gate($node, 'transaction', 'waiting', 1), 'the retry waits for the gate');
is(gate_value($node, 'group:batch', 'running'), '1', 'without taking the group slot again');
$gate_holder->query_safe('COMMIT');
finish($m);
$m->query_safe('COMMIT');
is(gate_value($node, 'group:batch', 'running'), '0', 'both slots given back once');
no_problems($node, 'a failed admission in a savepoint');

# A member that has changed group since such a failed admission gives the
# old group's slot back before it takes the new one's: two sessions that
# had swapped groups would each hold the slot the other waits for.
my $m_pid = backend_pid($m);
like(fail_admission_in_savepoint(), qr/statement timeout/, 'again a failed admission');
$m->query_safe('ROLLBACK TO a');
$m->query_safe('RESET statement_timeout');
$m->query_safe("SET pg_concurrency_control.workload_group = 'adhoc'");
send_sql($m, 'SELECT 1;');
ok(wait_gate($node, 'transaction', 'waiting', 1), 'in its new group, the retry waits for the gate');
is(rows_of($m_pid), 'group:adhoc running, transaction waiting',
	'holding its new group\'s slot, and no longer its old group\'s');
$gate_holder->query_safe('COMMIT');
finish($m);
$m->query_safe('COMMIT');
$m->query_safe('RESET pg_concurrency_control.workload_group');
is( $node->safe_psql('pccmon',
		"SELECT string_agg(running::text, ',' ORDER BY gate) FROM pg_concurrency_control"
		  . " WHERE gate IN ('group:adhoc', 'group:batch')"),
	'0,0', 'both groups\' slots given back');
no_problems($node, 'a change of group after a failed admission');

# --- a group that finds every place taken (16, one by a removed group
# still held) is applied once that place drains, without a reload
my @sixteen = ('batch=2', 'adhoc=1', map { "g$_=1" } 3 .. 16);
pcc_reload($node, groups => join(', ', @sixteen));
my $g16 = member('g16');
$g16->query_safe('BEGIN');
$g16->query_safe('SELECT 1');
is(gate_value($node, 'group:g16', 'running'), '1', 'a member holds a slot of group g16');
my $offset = -s $node->logfile;
pcc_reload($node, groups => join(', ', @sixteen[0 .. 14], 'late=1'));
my $late_shown = "SELECT count(*) = 1 FROM pg_concurrency_control WHERE gate = 'group:late'";
is($node->safe_psql('pccmon', $late_shown), 'f',
	'g16 removed while held: the new group finds no place');
my $late = member('late');
$late->query_safe('SELECT 1');	# resolves its group: none yet
sleep 1;	# the watchdog's scans try again meanwhile
my @said = slurp_file($node->logfile, $offset) =~ /1 group\(s\) not applied yet/g;
is(scalar @said, 1, 'the log says so once, not at every scan');
$g16->query_safe('COMMIT');
ok(wait_until($node, $late_shown), 'once g16\'s slot is given back, the new group is applied');
is(gate_value($node, 'group:late', 'max_concurrency'), '1', 'with its limit');
ok($node->wait_for_log(qr/every group is applied/, $offset), 'the log says so too');
$late->query_safe('BEGIN');
is(rows_of(backend_pid($late)), 'group:late running, transaction running',
	'a member that found no group before takes the new group\'s slot');
$late->query_safe('COMMIT');
no_problems($node, 'a group applied after a place drained');

$_->quit for ($r1, $r2, $other, $gate_holder, $m, $a1, $a2, $g16, $late);
$node->stop;
done_testing();
