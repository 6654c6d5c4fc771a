# The extended query protocol: pipelines without Sync, a big statement or
# a BEGIN later in one, errors inside them, portals suspended by an Execute
# row limit, closing such a portal and a client vanishing while one is open.
# Every gate admits one at a time, so a slot that is not returned blocks
# the next taker.
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use PccTest;
use PccWire;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = pcc_node('protocol',
	(map { "pg_concurrency_control.${_}_concurrency = 1" }
		qw(query autocommit transaction bigquery)),
	"deadlock_timeout = '10min'");
$node->safe_psql('postgres', 'CREATE TABLE w (x int); INSERT INTO w VALUES (0)');

sub running { return gate_value($node, $_[0], 'running'); }

# A statement of each gate, run by a new session with a short timeout.
my %taker = (
	query => 'SELECT 1',
	autocommit => 'UPDATE w SET x = x',
	transaction => "BEGIN;\nSELECT 1;\nCOMMIT",
	bigquery => '/*+bigsql*/ SELECT 1');

sub gate_free
{
	my ($gate, $what) = @_;
	my ($rc, $out, $err) = $node->psql('postgres',
		"SET statement_timeout = '5s';\n$taker{$gate}");
	is($err, '', "$gate: the next taker gets in at once after $what");
	is(gate_value($node, $gate, "running || '/' || waiting"), '0/0',
		"$gate: running and waiting exact after $what");
	no_problems($node, $what);
}

my $c = PccWire->connect($node, 'postgres');
my $other = PccWire->connect($node, 'postgres');
my $r;

# --- a pipeline without Sync is one implicit transaction: one slot
$c->run('SELECT 1')->run('SELECT 2')->flush;
$r = $c->read_until('C');
$r = $c->read_until('C');
is($r->{code}, '', 'two reads of a pipeline ran');
is(running('query'), '1', 'the pipeline holds one query slot between statements');
$c->run('UPDATE w SET x = x + 1')->flush;
$r = $c->read_until('C');
is($r->{code}, '', 'a write later in the pipeline ran');
is(running('autocommit'), '0', '... in the slot the first statement took');
$c->sync;
$r = $c->read_until('Z');
is(running('query'), '0', 'Sync ends the implicit transaction and returns the slot');
gate_free('query', 'a pipeline');

$c->run('UPDATE w SET x = x + 1')->run('UPDATE w SET x = x + 1')->flush;
$c->read_until('C');
$c->read_until('C');
is(running('autocommit'), '1', 'a pipeline of writes holds one autocommit slot');
$c->sync;
$c->read_until('Z');
gate_free('autocommit', 'a pipeline of writes');

# --- a big statement after the first of a pipeline waits for a bigquery
#     slot of its own, as in a block, and gives it back at its end
$other->run('/*+bigsql*/ SELECT 1')->flush;
$other->read_until('C');
is(running('bigquery'), '1', 'a pipeline whose first statement is big holds a bigquery slot');
$c->run('SELECT 1')->flush;
$c->read_until('C');
$c->run('/*+bigsql*/ SELECT 2')->flush;
ok(wait_gate($node, 'bigquery', 'waiting', 1),
	'a big statement later in another pipeline waits for the bigquery slot');
$other->sync;
$other->read_until('Z');
$r = $c->read_until('C');
is($r->{code}, '', '... and runs once the first pipeline syncs');
is(running('bigquery') . '/' . running('query'), '0/1',
	'... gives the bigquery slot back at its end; the pipeline keeps its query slot');
$c->sync;
$c->read_until('Z');
gate_free('bigquery', 'a big statement later in a pipeline');
gate_free('query', 'a big statement later in a pipeline');

# --- a BEGIN later in a pipeline makes it a block: its slot goes back and
#     it waits for a transaction slot, ahead of newcomers
$other->query('BEGIN');
$other->read_until('Z');
is(running('transaction'), '1', 'another session holds the transaction slot');
$c->run('SELECT 1')->flush;
$c->read_until('C');
$c->run('BEGIN')->flush;
ok(wait_gate($node, 'transaction', 'waiting', 1),
	'a BEGIN later in a pipeline waits for a transaction slot');
is(running('query'), '0', '... having given back the slot its first statement took');
$other->query('COMMIT');
$other->read_until('Z');
$r = $c->read_until('C');
is($r->{code}, '', '... and its block starts once the slot is free');
is(running('transaction') . '/' . running('query'), '1/0',
	'the block holds the transaction slot');
$c->run('SELECT 2')->run('COMMIT')->sync;
$r = $c->read_until('Z');
is($r->{code}, '', 'the block commits at the end of the pipeline');
gate_free('transaction', 'a BEGIN later in a pipeline');
gate_free('query', 'a BEGIN later in a pipeline');

# ... but a pipeline that holds a bigquery slot keeps its slots: given
#     back, an open big portal would run on unbounded
$c->run('/*+bigsql*/ SELECT 1')->flush;
$c->read_until('C');
$c->run('BEGIN')->flush;
$r = $c->read_until('C');
is($r->{code} . running('bigquery') . '/' . running('transaction'), '1/0',
	'a BEGIN after a big first statement keeps its bigquery slot');
$c->run('COMMIT')->sync;
$c->read_until('Z');
gate_free('bigquery', 'a BEGIN after a big first statement');

# --- Sync after every statement: each takes and returns the slot
my $before = gate_value($node, 'query', 'admitted');
$c->run("SELECT $_")->sync for 1 .. 3;
my $rows = 0;
$rows += $c->read_until('Z')->{rows} for 1 .. 3;
is($rows, 3, 'three synced statements in one pipeline ran with a limit of 1');
is(gate_value($node, 'query', 'admitted') - $before, 3, 'each took its own slot');
gate_free('query', 'synced statements');

# --- an error inside a pipeline returns the slot at once, before Sync
$c->run('SELECT 1')->run('SELECT 1/0')->run('SELECT 2')->flush;
$r = $c->read_until('E');
is($r->{code}, '22012', 'the pipeline fails with division by zero');
# the error is sent just before the abort: give the abort a moment
ok(wait_until($node,
		"SELECT running = 0 FROM pg_concurrency_control WHERE gate = 'query'", 10),
	'the failed pipeline returned its slot before Sync');
$c->sync;
$r = $c->read_until('Z');
gate_free('query', 'an error inside a pipeline');

# --- a portal suspended by a row limit keeps its slot until it completes
$c->parse('s1', 'SELECT generate_series(1, 10)')->bind('p1', 's1')->execute('p1', 3)->flush;
$r = $c->read_until('s');
is($r->{rows} . '/' . $r->{suspended}, '3/1', 'Execute with a row limit suspends the portal');
is(running('query'), '1', 'the suspended portal holds the query slot');
$other->run('SELECT 42')->sync;
ok(wait_gate($node, 'query', 'waiting', 1), 'another read waits behind it');
$c->execute('p1', 0)->sync;
$r = $c->read_until('Z');
is($r->{rows}, 7, 'resuming the portal returns the rest');
$r = $other->read_until('Z');
is($r->{rows}, 1, 'the waiting read ran once the portal completed and Sync came');
gate_free('query', 'a suspended portal');

# --- a big portal suspended in a block: Close returns the bigquery slot,
#     the block keeps its transaction slot
$c->query('BEGIN');
$c->read_until('Z');
$c->parse('', '/*+bigsql*/ SELECT generate_series(1, 10)')->bind('p2', '')->execute('p2', 2)->flush;
$r = $c->read_until('s');
is($r->{suspended}, 1, 'a big portal is suspended inside a block');
is(running('bigquery') . '/' . running('transaction'), '1/1',
	'it holds a bigquery slot and its block a transaction slot');
$other->run('/*+bigsql*/ SELECT 43')->sync;
ok(wait_gate($node, 'bigquery', 'waiting', 1), 'another big query waits');
$c->close_portal('p2')->flush;
$r = $c->read_until('3');
is($r->{code}, '', 'the portal is closed');
$r = $other->read_until('Z');
is($r->{rows} . $r->{code}, '1', 'closing it passed the bigquery slot on');
is(running('transaction'), '1', 'the block still holds its transaction slot');

# ... and a big portal left open until COMMIT gives its slot back then
$c->parse('', '/*+bigsql*/ SELECT generate_series(1, 10)')->bind('p3', '')->execute('p3', 2)->sync;
$r = $c->read_until('Z');
is($r->{suspended}, 1, 'another big portal suspended, and Sync inside the block keeps it');
is(running('bigquery'), '1', 'it holds the bigquery slot across Sync');
$c->execute('p3', 2)->sync;
$r = $c->read_until('Z');
is($r->{rows}, 2, 'the portal resumes after Sync');
$c->execute('p3', 0)->sync;
$r = $c->read_until('Z');
is($r->{rows}, 6, 'the portal runs to its end');
is(running('bigquery') . '/' . running('transaction'), '0/1',
	'a big portal run to its end gives the bigquery slot back before it is closed; the block keeps its own');
$c->query('COMMIT');
$r = $c->read_until('Z');
is($r->{code}, '', 'COMMIT with the portal still open');
gate_free('bigquery', 'COMMIT with a suspended big portal');
gate_free('transaction', 'a block with suspended portals');

# --- the client vanishes while its portal is suspended
my $gone = PccWire->connect($node, 'postgres');
$gone->parse('', 'SELECT generate_series(1, 10)')->bind('p4', '')->execute('p4', 1)->flush;
$r = $gone->read_until('s');
is(running('query'), '1', 'the portal of the client about to vanish holds the slot');
$gone->vanish;
ok(wait_until($node,
		"SELECT running = 0 FROM pg_concurrency_control WHERE gate = 'query'", 30),
	'the slot comes back when the client vanishes');
gate_free('query', 'a client vanishing with a suspended portal');

$_->quit for ($c, $other);
$node->stop;
done_testing();
