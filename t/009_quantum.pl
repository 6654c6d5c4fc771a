# pg_concurrency_control.quantum: a session keeps its transaction slot
# between the transactions of its turn while others wait, and gives it back
# when the turn ends, when it runs something needing another gate (where
# its turn goes on ahead of new turns, ranked by its priority), and when it
# exits or is terminated.
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use PccTest;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time usleep);

my $node = pcc_node('quantum',
	"pg_concurrency_control.transaction_concurrency = 1",
	"pg_concurrency_control.quantum = 0",
	# each rule alone: turn_grace and max_turn_wait (on by default) are
	# turned on by their own sections below
	"pg_concurrency_control.turn_grace = 0",
	"pg_concurrency_control.max_turn_wait = 0",
	"deadlock_timeout = '10min'");
create_log($node);

sub txn
{
	my ($who) = @_;
	return "BEGIN; INSERT INTO log (who) VALUES ('$who'); COMMIT;";
}

# Open a turn in s, queue one waiter behind it, end s's first transaction.
sub turn_with_waiter
{
	my ($s, $w, $who) = @_;
	$s->query_safe('BEGIN');
	send_sql($w, txn($who));
	ok(wait_gate($node, 'transaction', 'waiting', 1), "$who queues");
	$s->query_safe('COMMIT');
}

# Seconds until the transaction gate has nobody waiting.
sub seconds_until_admitted
{
	my $t0 = time();
	wait_gate($node, 'transaction', 'waiting', 0) or return 999;
	return time() - $t0;
}

my $s = session($node);
my $s_pid = backend_pid($s);	# a query now would end the turns below
my @w = map { session($node) } 1 .. 3;

# --- quantum 0: every COMMIT hands the slot to the next waiter
turn_with_waiter($s, $w[0], 'w');
$s->query_safe(txn('s'));
finish($w[0]);
is(log_order($node), 'w,s', 'quantum 0: the waiter goes before the next transaction');
is(gate_value($node, 'transaction', 'lingering || \'/\' || resumed'), '0/0',
	'quantum 0: nothing kept, nothing resumed');
no_problems($node, 'quantum 0');

# --- within its turn a session keeps the slot; waiters keep FIFO order
pcc_reload($node, quantum => '1min');
$s->query_safe('BEGIN');
for my $i (0 .. 2)
{
	# each waiter ends its own turn with a query, which gives the slot back
	send_sql($w[$i], txn("w$i") . ' SELECT 1;');
	ok(wait_gate($node, 'transaction', 'waiting', $i + 1), "waiter $i queued");
}
$s->query_safe('COMMIT');
is(gate_value($node, 'transaction', 'running || \'/\' || lingering'), '1/1',
	'after COMMIT the slot is kept, still counted as running');
is( $node->safe_psql('pccmon',
		'SELECT state FROM pg_concurrency_control_backends() WHERE pid = '
		  . $s_pid),
	'lingering', 'backends() shows the session as lingering');
no_problems($node, 'a kept slot');
$s->query_safe(txn('s1'));
$s->query_safe(txn('s2'));
is(gate_value($node, 'transaction', 'waiting || \'/\' || resumed'), '3/2',
	'two transactions continued the turn while three waited');
no_problems($node, 'resumed transactions');
$node->safe_psql('pccmon', 'SELECT pg_concurrency_control_reset()');
is(gate_value($node, 'transaction', 'resumed'), '0', 'reset zeroes resumed');
$s->query_safe('SELECT 1');
my $secs = seconds_until_admitted();
ok($secs < 5, "a query on another gate gives the kept slot back at once ($secs s)");
finish($_) for @w;
is(log_order($node), 's1,s2,w0,w1,w2', 'the turn ran first, then the waiters in FIFO order');
is(gate_value($node, 'transaction', 'running || \'/\' || lingering'), '0/0',
	'every slot returned');
no_problems($node, 'FIFO after a turn');

# --- no waiter, no keeping: the slot is free for the fast path
$s->query_safe(txn('alone'));
is(gate_value($node, 'transaction', 'running || \'/\' || lingering'), '0/0',
	'nobody waiting: COMMIT gives the slot back');
log_order($node);

# --- an idle session's kept slot is freed when its turn ends
pcc_reload($node, quantum => '1s');
$s->query_safe('BEGIN');
my $turn_start = $s->query_safe('SELECT now()');
send_sql($w[0], txn('w'));
ok(wait_gate($node, 'transaction', 'waiting', 1), 'waiter queued behind a 1 s turn');
$s->query_safe('COMMIT');
finish($w[0]);
my $waited = $node->safe_psql('postgres',
	"SELECT extract(epoch FROM at - '$turn_start') FROM log WHERE who = 'w'");
ok($waited >= 0.99 && $waited < 3,
	"the waiter got the idle session's slot when the turn ended ($waited s)");
log_order($node);
no_problems($node, 'an expired turn');

# --- a busy session keeps the slot for its quantum, then must queue
$s->query_safe('BEGIN');
$turn_start = $s->query_safe('SELECT now()');
send_sql($w[0], txn('w'));
ok(wait_gate($node, 'transaction', 'waiting', 1), 'waiter queued behind a busy turn');
$s->query_safe('COMMIT');
$s->query_safe(join(' ',
	map { "BEGIN; INSERT INTO log (who) VALUES ('s'); SELECT pg_sleep(0.05); COMMIT;" } 1 .. 40));
finish($w[0]);
my ($before, $w_at, $after) = split /\|/, $node->safe_psql('postgres',
	"SELECT count(*) FILTER (WHERE l.seq < w.seq), extract(epoch FROM min(w.at) - '$turn_start'),"
	  . " count(*) FILTER (WHERE l.seq > w.seq)"
	  . " FROM log l, (SELECT seq, at FROM log WHERE who = 'w') w WHERE l.who = 's'");
ok($before >= 10, "the session ran $before transactions of its turn first");
ok($w_at >= 0.95 && $w_at < 1.8, "the waiter was admitted when the 1 s turn ended ($w_at s)");
is($before + $after, 40, 'then the session continued after the waiter');
log_order($node);
no_problems($node, 'a busy turn');

# --- exit and termination give a kept slot back at once
pcc_reload($node, quantum => '1min');
for my $how ('exit', 'pg_terminate_backend')
{
	my $holder = session($node);
	my $pid = backend_pid($holder);
	$holder->query_safe('SET application_name = holder');	# no slot needed
	turn_with_waiter($holder, $w[0], 'w');
	is(gate_value($node, 'transaction', 'lingering'), '1', "$how: the slot is kept");
	if ($how eq 'exit')
	{
		$holder->quit;
	}
	else
	{
		$node->safe_psql('pccmon', "SELECT pg_terminate_backend($pid)");
		$holder->quit;
	}
	$secs = seconds_until_admitted();
	ok($secs < 5, "$how: the waiter is admitted at once ($secs s)");
	finish($w[0]);
	$w[0]->query_safe('SELECT 1');	# end the waiter's own turn
	is(gate_value($node, 'transaction', 'running || \'/\' || lingering'), '0/0',
		"$how: every slot returned");
	no_problems($node, $how);
	log_order($node);
}

# --- ROLLBACK ends a transaction of the turn as COMMIT does; an error
# that aborts a block gives its slot back at once, kept for no turn
$node->safe_psql('pccmon', 'SELECT pg_concurrency_control_reset()');
$s->query_safe('BEGIN');
send_sql($w[0], txn('w'));
ok(wait_gate($node, 'transaction', 'waiting', 1), 'a waiter queued behind a block');
$s->query_safe('ROLLBACK');
is(gate_value($node, 'transaction', 'lingering'), '1', 'after ROLLBACK the slot is kept');
$s->query_safe('BEGIN');
is(gate_value($node, 'transaction', 'waiting || \'/\' || resumed'), '1/1',
	'the next block continues the turn');
$s->query('SELECT 1/0');
like($s->{stderr}, qr/division by zero/, 'an error aborts the block');
$s->{stderr} = '';
$secs = seconds_until_admitted();
ok($secs < 5, "the failed block's slot goes to the waiter before its ROLLBACK ($secs s)");
is(gate_value($node, 'transaction', 'lingering'), '0', 'and is not kept');
finish($w[0]);
$s->query_safe('ROLLBACK');
$w[0]->query_safe('SELECT 1');	# end the waiter's own turn
is(gate_value($node, 'transaction', 'running || \'/\' || lingering'), '0/0',
	'every slot returned after an error');
no_problems($node, 'an error in a turn');
log_order($node);

# --- when the last waiter leaves, the kept slot is freed before the turn ends
turn_with_waiter($s, $w[0], 'w');
is(gate_value($node, 'transaction', 'lingering'), '1', 'cancel: the slot is kept');
my $w_pid = $node->safe_psql('pccmon',
	"SELECT pid FROM pg_concurrency_control_backends() WHERE state = 'waiting'");
$node->safe_psql('pccmon', "SELECT pg_cancel_backend($w_pid)");
my $t0 = time();
ok(wait_until($node,
		"SELECT running = 0 AND lingering = 0 FROM pg_concurrency_control WHERE gate = 'transaction'", 10),
	'the waiter cancelled, nobody waits: the kept slot is freed');
$secs = time() - $t0;
ok($secs < 5, "freed long before the 1 min turn ends ($secs s)");
my (undef, $err) = finish($w[0]);
like($err, qr/canceling statement due to user request/, 'the waiter was cancelled');
no_problems($node, 'the last waiter leaving');
log_order($node);

# --- turn_grace: a session that sends nothing within the grace gives its
# kept slot back long before its turn ends; one that comes straight back
# continues its turn
pcc_reload($node, quantum => '1min', turn_grace => '200ms');
turn_with_waiter($s, $w[0], 'w');
$t0 = time();
ok(wait_until($node,
		"SELECT waiting = 0 AND lingering = 0 FROM pg_concurrency_control WHERE gate = 'transaction'", 10),
	'turn_grace: the idle session\'s kept slot goes to the waiter');
$secs = time() - $t0;
ok($secs < 5, "after the grace, not at the end of the 1 min turn ($secs s)");
finish($w[0]);
is(log_order($node), 'w', 'the waiter ran');
$s->query_safe('BEGIN');
send_sql($w[0], txn('w'));
ok(wait_gate($node, 'transaction', 'waiting', 1), 'w queues again');
$s->query_safe('COMMIT; ' . txn('s'));
finish($w[0]);
is(log_order($node), 's,w', 'back within the grace, the session continues its turn');
no_problems($node, 'turn_grace');

# --- turn_grace_max: a session whose client usually comes back within half
# of it earns a grace of twice its usual reply time; one slower thinks and
# keeps turn_grace.  A fresh session pauses 300 ms after each COMMIT.
sub pause_round
{
	my ($c, $who) = @_;
	turn_with_waiter($c, $w[0], 'w');
	usleep(300_000);
	$c->query_safe(txn($who));
	my $secs = seconds_until_admitted();
	finish($w[0]);
	return (log_order($node), $secs);
}
pcc_reload($node, quantum => '1min', turn_grace => '20ms', turn_grace_max => '1s');
my $c = session($node);
my ($order, $late) = pause_round($c, 'c1');
is($order, 'w,c1', 'turn_grace_max: no reply time known yet, turn_grace ends the turn');
($order, $late) = pause_round($c, 'c2');
is($order, 'c2,w', 'back after 300 ms, a grace of twice that keeps the turn');
ok($late < 5, "the earned grace still ends the idle turn ($late s)");
pcc_reload($node, turn_grace_max => '500ms');
($order, $late) = pause_round($c, 'c3');
is($order, 'w,c3', 'twice its reply time over turn_grace_max: a thinking client, turn_grace');
$c->quit;
no_problems($node, 'turn_grace_max');

# --- a session keeps its slot only if its client, replying as usual, comes
# back before its turn ends: after that the turn does not go on, and the
# slot would only idle.  r pauses 3 s after each COMMIT, its turns last
# 5 s, and no grace ends them (turn_grace 0).  Its first transaction keeps
# the slot (no reply known yet), the next resumes the turn 3 s in and
# gives the slot to w at its COMMIT; before this rule it kept it idle for
# the 2 s left.  In 1 min turns the same pauses keep the slot.
pcc_reload($node, quantum => '5s', turn_grace => '0');
my $r = session($node);

# r's turn with a waiter: r pauses 3 s after its first COMMIT, then runs
# one more transaction; returns the gate's lingering count after it
sub paused_turn
{
	turn_with_waiter($r, $w[0], 'w');
	is(gate_value($node, 'transaction', 'lingering'), '1', 'r keeps its slot at first');
	usleep(3_000_000);
	$r->query_safe(txn('r'));
	return gate_value($node, 'transaction', 'lingering');
}
is(paused_turn(), '0',
	'its usual reply would come after its turn ends: r gives the slot back at COMMIT');
$secs = seconds_until_admitted();
ok($secs < 1.2, "the waiter is admitted at once, not when the turn ends ($secs s)");
finish($w[0]);
is(log_order($node), 'r,w', 'r resumed its turn, then w ran');
pcc_reload($node, quantum => '1min');
is(paused_turn(), '1', 'the same pauses within a 1 min turn: r keeps its slot');
$r->quit;	# exit gives it back
finish($w[0]);
is(log_order($node), 'r,w', 'r resumed its turn, then w ran once r left');
no_problems($node, 'the usual reply within the turn');

# --- max_turn_wait: a turn shrinks as the queue grows, so that a queued
# session waits about max_turn_wait (or longer where the gate's recent
# mean wait is long, see below: it is 0 here, as every wait counted 0
# while max_turn_wait was 0) for the turns ahead of it: with four waiters
# for one slot, a 1 min quantum and 8 s, a turn lasts 2 s
pcc_reload($node, turn_grace => '0', max_turn_wait => '8s');
push @w, session($node);
$s->query_safe('BEGIN');
$turn_start = $s->query_safe('SELECT now()');
for my $i (0 .. 3)
{
	send_sql($w[$i], txn("w$i"));
	ok(wait_gate($node, 'transaction', 'waiting', $i + 1), "waiter w$i queued");
}
# COMMIT and the next transactions in one string: no client pause
$s->query_safe(join(' ', 'COMMIT;',
	map { "BEGIN; INSERT INTO log (who) VALUES ('s'); SELECT pg_sleep(0.05); COMMIT;" } 1 .. 100));
finish($_) for @w;
($before, $w_at) = split /\|/, $node->safe_psql('postgres',
	"SELECT count(*) FILTER (WHERE l.seq < w.seq), extract(epoch FROM min(w.at) - '$turn_start')"
	  . " FROM log l, (SELECT min(seq) AS seq, min(at) AS at FROM log WHERE who LIKE 'w%') w WHERE l.who = 's'");
ok($before >= 5, "the session ran $before transactions of its turn first");
ok($w_at >= 1.9 && $w_at < 3.5,
	"the first waiter was admitted after a 2 s turn, not 8 s or 1 min ($w_at s)");
like(log_order($node), qr/^(s,)+w0,w1,w2,w3(,s)+$/,
	'the waiters went in FIFO order, then the session, queued behind them');
no_problems($node, 'max_turn_wait');

# --- max_turn_wait bounds the wait itself: a session that queued before
# the turn ahead of it began is admitted once it has waited 3 s, though
# that turn is 3 s long by the queue.  w1 queues while s holds the slot
# for 2 s, then w0's turn begins: before this rule w1 waited 5 s.  The
# waits above leave a recent mean wait of about 1.6 s (see the section
# on a long mean wait below), under two thirds of 3 s: the turn budget is
# 3 s.
my @w_pid = map { backend_pid($_) } @w[0, 1];

# The transaction gate's turn budget now, in seconds.
sub turn_budget
{
	return gate_value($node, 'transaction', 'turn_budget_ms') / 1000;
}

# Seconds w1 waited: from when it queued to when it ran.
sub w1_waited
{
	my ($w1_queued) = @_;
	return $node->safe_psql('postgres',
		"SELECT extract(epoch FROM at - '$w1_queued') FROM log WHERE who = 'w1'");
}

# Open a block in s and queue $first (sending $first_sql), then w1,
# behind it.
sub queue_two_behind_s
{
	my ($first, $first_sql) = @_;
	$s->query_safe('BEGIN');
	send_sql($first, $first_sql);
	ok(wait_gate($node, 'transaction', 'waiting', 1), 'w0 queues');
	send_sql($w[1], txn('w1'));
	ok(wait_gate($node, 'transaction', 'waiting', 2), 'w1 queues behind it');
}

# Queue w0 (sending $w0_sql), then w1, behind s's open block; hold it
# $hold_s s.  Returns when w1 queued.
sub queue_behind_s
{
	my ($w0_sql, $hold_s) = @_;
	queue_two_behind_s($w[0], $w0_sql);
	my $w1_queued = $node->safe_psql('pccmon',
		"SELECT since FROM pg_concurrency_control_backends() WHERE pid = $w_pid[1]");
	usleep($hold_s * 1_000_000);
	$s->query_safe('COMMIT');
	ok(wait_gate($node, 'transaction', 'waiting', 1), 'w0 is admitted');
	return $w1_queued;
}

# w0 runs one transaction and keeps its slot idle (turn_grace 0), w1
# queued behind s and w0 ($hold_s s).  Returns how long w1 waited and the
# turn budget once w0 was admitted.
sub w1_behind_idle_turn
{
	my ($hold_s) = @_;
	my $w1_queued = queue_behind_s(txn('w0'), $hold_s);
	my $budget = turn_budget();
	# w1 first: a query from w0 would end its turn
	finish($_) for ($w[1], $w[0]);
	return (w1_waited($w1_queued), $budget);
}

pcc_reload($node, max_turn_wait => '3s');
# w0 busy: its turn ends at the first COMMIT after w1 has waited 3 s
my $w1_queued = queue_behind_s(join(' ',
	map { "BEGIN; INSERT INTO log (who) VALUES ('w0'); SELECT pg_sleep(0.05); COMMIT;" } 1 .. 100), 2);
# the mean falls as w0's transactions resume (they waited 0)
my $budget = turn_budget();
finish($_) for ($w[1], $w[0]);
my $w0_first = $node->safe_psql('postgres',
	"SELECT count(*) FROM log WHERE who = 'w0' AND seq < (SELECT seq FROM log WHERE who = 'w1')");
ok($w0_first >= 5, "w0 ran $w0_first transactions of its turn first");
$waited = w1_waited($w1_queued);
ok($waited >= 2.95 && $waited < 4.5,
	"w1 was admitted once it had waited 3 s in all, not 5 s ($waited s, budget $budget s)");
log_order($node);
# w0 idle (turn_grace 0: no grace ends its turn): the watchdog frees its
# kept slot once w1 has waited 3 s, not when the turn ends (5 s)
($waited, $budget) = w1_behind_idle_turn(2);
ok($waited >= 2.95 && $waited >= $budget - 0.05 && $waited < $budget + 1.5,
	"w1 was admitted once it had waited 3 s, though w0 kept its slot idle ($waited s, budget $budget s)");
is(log_order($node), 'w0,w1', 'w0 went first');
no_problems($node, 'max_turn_wait bounds the wait');

# --- a session keeps its slot only if the next in line would not be
# overdue by the end of its grace: s commits when w0 has waited 2.1 s of
# the 3 s budget, with a 1 s grace.  w0 is admitted at once; before this
# rule the slot stayed kept, idle, until w0 had waited 3 s
pcc_reload($node, turn_grace => '1s');
$s->query_safe('BEGIN');
send_sql($w[0], txn('w0'));
ok(wait_gate($node, 'transaction', 'waiting', 1), 'w0 queues behind s');
usleep(2_100_000);
$budget = turn_budget();
ok($budget <= 3.05, "the turn budget is max_turn_wait ($budget s)");
$s->query_safe('COMMIT');
is(gate_value($node, 'transaction', 'waiting || \'/\' || lingering'), '0/0',
	'w0, overdue before s\'s grace would end, got the slot at COMMIT');
finish($w[0]);
is(log_order($node), 'w0', 'w0 ran');
pcc_reload($node, turn_grace => '0');
no_problems($node, 'overdue before the grace ends');

# --- where the gate's recent mean wait is long (with thousands of
# sessions each waits about the mean anyway), turns may add a third of
# max_turn_wait to it.  Three transactions that waited 4 s raise the mean
# by about 0.7 s to about 1.5 s (each weighs 1/16, counted up to the turn
# budget: 10 s here; a 1 ms grace ends the idle turns).  Then, with
# max_turn_wait 600 ms, s and w0 each keep their slot idle (turn_grace 0),
# and w1, queued behind them, is admitted once it has waited the mean and
# 200 ms (the turn budget, about 1.6 s), not after 600 ms, as before this
# rule
pcc_reload($node, max_turn_wait => '10s', turn_grace => '1ms');
$s->query_safe('BEGIN');
for my $i (0 .. 2)
{
	send_sql($w[$i], txn("m$i"));
	ok(wait_gate($node, 'transaction', 'waiting', $i + 1), "m$i queues");
}
usleep(4_000_000);
$s->query_safe('COMMIT');
finish($_) for @w[0 .. 2];
is(log_order($node), 'm0,m1,m2', 'the three ran, in order');
pcc_reload($node, max_turn_wait => '600ms', turn_grace => '0');
($waited, $budget) = w1_behind_idle_turn(0.2);
ok($budget >= 1.2, "the turn budget is the mean wait and a third of max_turn_wait ($budget s)");
ok($waited >= 1.15 && $waited >= $budget - 0.05 && $waited < $budget + 1.0,
	"w1 was admitted once it had waited the turn budget, not after 600 ms ($waited s, budget $budget s)");
is(log_order($node), 'w0,w1', 'w0 went first');
no_problems($node, 'a turn budget over the mean wait');

# --- a turn goes on at another gate: a session that kept the transaction
# slot and now writes outside a block gives it back and is ranked at the
# autocommit gate as if it had queued when its turn began, ahead of a
# session that queued there after that
pcc_reload($node, quantum => '10s', max_turn_wait => '0',
	autocommit_concurrency => '1');
my $hold = session($node);
turn_with_waiter($s, $w[0], 'w0');
is(gate_value($node, 'transaction', 'lingering'), '1', 's keeps the transaction slot');
# the query after it gives the autocommit slot back at once
send_sql($hold, "INSERT INTO log (who) SELECT 'hold' FROM pg_sleep(3); SELECT 1;");
ok(wait_gate($node, 'autocommit', 'running', 1), 'hold takes the autocommit slot');
send_sql($w[1], "INSERT INTO log (who) VALUES ('w1');");
ok(wait_gate($node, 'autocommit', 'waiting', 1), 'w1 queues for it');
send_sql($s, "INSERT INTO log (who) VALUES ('s');");
ok(wait_gate($node, 'autocommit', 'waiting', 2), 's queues for it after w1');
is( $node->safe_psql('pccmon',
		"SELECT state || ' ' || priority FROM pg_concurrency_control_backends() WHERE pid = $s_pid"),
	'waiting in turn', 'backends() shows s waiting in its turn');
ok(wait_until($node,
		"SELECT state || ' ' || priority = 'lingering in turn' FROM pg_concurrency_control_backends()"
		  . " WHERE pid = $s_pid AND gate = 'autocommit'", 30),
	's got the autocommit slot and keeps it in its turn (class in turn)');
# finish() runs a query, which gives a kept autocommit slot back
finish($_) for ($w[0], $s, $hold, $w[1]);
is(log_order($node), 'w0,hold,s,w1',
	'the transaction slot went to w0, the autocommit slot to s ahead of w1');
is(gate_value($node, 'autocommit', 'running || \'/\' || lingering'), '0/0',
	'every autocommit slot returned');
no_problems($node, 'a turn across gates');

# --- but not ahead of a session that queued before its turn began
send_sql($hold, "INSERT INTO log (who) SELECT 'hold' FROM pg_sleep(3); SELECT 1;");
ok(wait_gate($node, 'autocommit', 'running', 1), 'hold takes the autocommit slot again');
send_sql($w[1], "INSERT INTO log (who) VALUES ('w1');");
ok(wait_gate($node, 'autocommit', 'waiting', 1), 'w1 queues for it');
turn_with_waiter($s, $w[0], 'w0');
send_sql($s, "INSERT INTO log (who) VALUES ('s');");
ok(wait_gate($node, 'autocommit', 'waiting', 2), 's, whose turn began after, queues too');
finish($_) for ($w[0], $hold, $w[1], $s);
is(log_order($node), 'w0,hold,w1,s', 'w1 went first: it queued before s\'s turn began');
no_problems($node, 'a turn across gates, queued before');

# --- a turn that ends while its session waits at another gate does not go
# on there: the slot it gets starts a new turn, which it keeps while others
# wait.  A fresh session t (its client's reply not yet known) begins a 2 s
# turn, then queues in it for the autocommit slot that hold keeps for
# 4 s, ahead of w1.  Admitted after its turn ended, t keeps the slot, and
# its next write runs before w1.  Before this rule the slot served t one
# write in a turn already over and went to w1.  The sections below run
# with 10 s turns again.
pcc_reload($node, quantum => '2s');
my $t = session($node);
my $t_pid = backend_pid($t);
send_sql($hold, "INSERT INTO log (who) SELECT 'hold' FROM pg_sleep(4); SELECT 1;");
ok(wait_gate($node, 'autocommit', 'running', 1), 'hold takes the autocommit slot');
turn_with_waiter($t, $w[0], 'w0');
send_sql($t, "INSERT INTO log (who) VALUES ('t');");
ok(wait_gate($node, 'autocommit', 'waiting', 1), 't queues for the autocommit slot');
is( $node->safe_psql('pccmon',
		"SELECT state || ' ' || priority FROM pg_concurrency_control_backends() WHERE pid = $t_pid"),
	'waiting in turn', 't waits in its turn');
send_sql($w[1], "INSERT INTO log (who) VALUES ('w1');");
ok(wait_gate($node, 'autocommit', 'waiting', 2), 'w1 queues after t');
ok(wait_until($node,
		"SELECT state = 'lingering' FROM pg_concurrency_control_backends()"
		  . " WHERE pid = $t_pid AND gate = 'autocommit'", 30),
	't, admitted after its turn ended, keeps the autocommit slot in a new turn');
send_sql($t, "INSERT INTO log (who) VALUES ('t2');");
finish($_) for ($w[0], $hold, $t, $w[1]);
is(log_order($node), 'w0,hold,t,t2,w1', 't\'s next write went before w1');
no_problems($node, 'a turn that ends while waiting at another gate');
$t->quit;
pcc_reload($node, quantum => '10s');

# --- each "in turn" waiter is ranked by its own session's priority: a
# high-priority session whose turn goes on passes a low-priority one that
# queued in its turn before it (two waiters at the transaction gate, so
# that hi's slot stays kept, its turn on, after lo gives its slot to w0)
pcc_reload($node, transaction_concurrency => '2', priority_aging => '1h');
my ($lo, $hi) = (session($node), session($node));
$lo->query_safe("SET pg_concurrency_control.priority = 'low'");
$hi->query_safe("SET pg_concurrency_control.priority = 'high'");
$lo->query_safe('BEGIN');
$hi->query_safe('BEGIN');
send_sql($w[0], txn('w0'));
ok(wait_gate($node, 'transaction', 'waiting', 1), 'w0 queues behind lo and hi');
send_sql($w[1], txn('w1'));
ok(wait_gate($node, 'transaction', 'waiting', 2), 'then w1');
$lo->query_safe('COMMIT');
$hi->query_safe('COMMIT');
is(gate_value($node, 'transaction', 'lingering'), '2', 'lo and hi keep their transaction slots');
send_sql($hold, "INSERT INTO log (who) SELECT 'hold' FROM pg_sleep(5); SELECT 1;");
ok(wait_gate($node, 'autocommit', 'running', 1), 'hold takes the autocommit slot');
send_sql($lo, "INSERT INTO log (who) VALUES ('lo');");
ok(wait_gate($node, 'autocommit', 'waiting', 1), 'lo queues in its turn');
send_sql($hi, "INSERT INTO log (who) VALUES ('hi');");
ok(wait_gate($node, 'autocommit', 'waiting', 2), 'hi queues in its turn after lo');
is( $node->safe_psql('pccmon',
		"SELECT count(*) FROM pg_concurrency_control_backends()"
		  . " WHERE gate = 'autocommit' AND state || ' ' || priority = 'waiting in turn'"),
	'2', 'backends() shows both waiting in turn');
# hi keeps the autocommit slot in its turn: its query gives it back to lo
finish($_) for ($w[0], $w[1], $hold, $hi, $lo);
is(log_order($node), 'w0,w1,hold,hi,lo', 'hi went ahead of lo, which queued before it');
no_problems($node, 'turns across gates in two priorities');

# --- without a grace (turn_grace 0), a kept slot nobody resumes goes
# back when its turn ends even where nothing else moves: keeping the first
# slot wakes the watchdog, which would otherwise sleep out its pass (up to
# 250 ms) before it polls.  Eight times a fresh keeper (a known reply time
# may keep none) queues behind s, is admitted at s's COMMIT and keeps its
# slot idle through a 20 ms turn with w1 queued behind; w1 follows the
# turn's end by the watchdog's 10 ms poll.  s holds its block a random
# while, so that the watchdog's pass falls anywhere in the turns.
pcc_reload($node, transaction_concurrency => '1', quantum => '20ms', turn_grace => '0',
	max_turn_wait => '0');
my @turn;
for my $i (1 .. 8)
{
	my $keeper = session($node);
	queue_two_behind_s($keeper, txn('w0'));
	usleep(50_000 + int(rand(250_000)));
	$s->query_safe("INSERT INTO log (who) VALUES ('s'); COMMIT;");
	finish($_) for ($w[1], $keeper);
	my $ran = $node->safe_psql('postgres',
		"SELECT round(extract(epoch FROM w1.at - s.at) * 1000) "
		  . "FROM log s, log w1 WHERE s.who = 's' AND w1.who = 'w1'");
	push @turn, $ran;
	is(log_order($node), 's,w0,w1', 'the keeper ran before w1');
	$keeper->quit;
}
ok((grep { $_ >= 19 } @turn) == 8,
	"each keeper kept its slot for its turn (ms from s's COMMIT to w1: @turn)");
my $mean_late = 0;
$mean_late += ($_ - 20) / @turn for @turn;
ok($mean_late < 60,
	"an idle kept slot went back soon after its turn ended (mean $mean_late ms late)");
no_problems($node, 'kept slot without a grace');

$_->quit for ($s, $hold, @w, $lo, $hi);
$node->stop;
done_testing();
