# Helpers shared by the TAP tests of pg_concurrency_control.
package PccTest;

use strict;
use warnings;
use Exporter 'import';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);

our @EXPORT = qw(pcc_node pcc_reload wait_applied session send_sql finish gate_value
  wait_gate wait_until no_problems backend_pid create_log log_order read_behind_read
  watchdog_pid new_watchdog);

# A started node with the module preloaded and the extension created.
# Extra settings come as a list of lines for postgresql.conf, after an
# optional hash of options for init (allows_streaming => 1, say).
sub pcc_node
{
	my ($name, @conf) = @_;
	my %init = ref $conf[0] eq 'HASH' ? %{ shift @conf } : ();
	my $node = PostgreSQL::Test::Cluster->new($name);
	$node->init(%init);
	$node->append_conf('postgresql.conf',
		join("\n",
			"shared_preload_libraries = 'pg_concurrency_control'",
			"max_connections = 60",
			"max_prepared_transactions = 4",
			"log_min_messages = warning",
			@conf));
	$node->start;
	# monitoring queries run in their own database, which is never gated
	$node->safe_psql('postgres', 'CREATE EXTENSION pg_concurrency_control');
	$node->safe_psql('postgres', 'CREATE DATABASE pccmon');
	$node->safe_psql('postgres',
		'ALTER DATABASE pccmon SET pg_concurrency_control.bypass = on');
	$node->safe_psql('pccmon', 'CREATE EXTENSION pg_concurrency_control');
	return $node;
}

# Change settings and wait until they are in force: a new session sees the
# new values, and the watchdog, which alone writes them into the gates, has
# applied the configuration the postmaster loaded.
sub pcc_reload
{
	my ($node, %set) = @_;
	$node->append_conf('postgresql.conf',
		join("\n", map { "pg_concurrency_control.$_ = '$set{$_}'" } sort keys %set));
	$node->reload;
	for my $name (sort keys %set)
	{
		$node->poll_query_until('postgres',
			"SELECT current_setting('pg_concurrency_control.$name') = '$set{$name}'"
			  . " OR current_setting('pg_concurrency_control.$name')::text = '$set{$name}'")
		  or die "setting $name was not applied";
	}
	wait_applied($node);
}

# Wait until the watchdog has applied the configuration the postmaster
# last loaded.
sub wait_applied
{
	my ($node) = @_;
	$node->poll_query_until('pccmon',
		'SELECT pg_concurrency_control_config_loaded() >= pg_conf_load_time()')
	  or die "the watchdog did not apply the configuration";
}

# A psql session that keeps going after errors.
sub session
{
	my ($node) = @_;
	return $node->background_psql('postgres', on_error_stop => 0);
}

# Send SQL without waiting for it to finish.
sub send_sql
{
	my ($s, $sql) = @_;
	$s->{stdin} .= "$sql\n";
	$s->{run}->pump_nb;
}

# Wait until everything sent so far has run; returns its output and
# clears the session's error output.
sub finish
{
	my ($s) = @_;
	my $out = $s->query("SELECT 'finished'");
	my $err = $s->{stderr};
	$s->{stderr} = '';
	return wantarray ? ($out, $err) : $out;
}

sub backend_pid
{
	my ($s) = @_;
	return $s->query_safe('SELECT pg_backend_pid()');
}

# One column of a gate's status row.
sub gate_value
{
	my ($node, $gate, $column) = @_;
	return $node->safe_psql('pccmon',
		"SELECT $column FROM pg_concurrency_control WHERE gate = '$gate'");
}

# Wait until a status column reaches a value.
sub wait_gate
{
	my ($node, $gate, $column, $value) = @_;
	return $node->poll_query_until('pccmon',
		"SELECT $column FROM pg_concurrency_control WHERE gate = '$gate'",
		$value);
}

# With a query limit of 1: $holder in a new session until it holds the
# query slot, then $waiter in another until it queues behind it.  Returns
# both sessions, their statements still running.
sub read_behind_read
{
	my ($node, $holder, $waiter, $label) = @_;
	my ($a, $b) = (session($node), session($node));
	send_sql($a, $holder);
	ok(wait_gate($node, 'query', 'running', 1), "${label}a read holds the query slot");
	send_sql($b, $waiter);
	ok(wait_gate($node, 'query', 'waiting', 1), "${label}another read waits for it");
	return ($a, $b);
}

# Poll a query (in the ungated database) until it returns 't', for at most $secs.
sub wait_until
{
	my ($node, $query, $secs) = @_;
	my $deadline = time() + ($secs // 30);
	while (time() < $deadline)
	{
		my $r = $node->safe_psql('pccmon', $query);
		return 1 if $r eq 't';
		usleep(50_000);
	}
	return 0;
}

# The watchdog's pid, as a DBA finds it in pg_stat_activity, waiting up
# to $secs (default: no wait) for it to be there; '' if it is not.
sub watchdog_pid
{
	my ($node, $secs) = @_;
	my $deadline = time() + ($secs // 0);
	for (;;)
	{
		my $pid = $node->safe_psql('pccmon',
			"SELECT pid FROM pg_stat_activity WHERE backend_type = 'pg_concurrency_control watchdog'");
		return $pid if $pid ne '' || time() >= $deadline;
		usleep(50_000);
	}
}

# The pid of a watchdog other than $old, once one runs (up to 10 s); ''
# if none came.
sub new_watchdog
{
	my ($node, $old) = @_;
	for (1 .. 200)
	{
		my $pid = watchdog_pid($node);
		return $pid if $pid && $pid ne $old;
		usleep(50_000);
	}
	return '';
}

# A table in which sessions log who ran, to see the order they were admitted.
sub create_log
{
	my ($node) = @_;
	$node->safe_psql('postgres',
		'CREATE TABLE log (seq serial, who text, at timestamptz DEFAULT clock_timestamp())');
}

# Who ran, in order ("a,b,c"); empties the log.
sub log_order
{
	my ($node) = @_;
	my $r = $node->safe_psql('postgres',
		"SELECT string_agg(who, ',' ORDER BY seq) FROM log");
	$node->safe_psql('postgres', 'TRUNCATE log');
	return $r;
}

# The consistency check finds nothing.
sub no_problems
{
	my ($node, $what) = @_;
	my $problems = $node->safe_psql('pccmon',
		"SELECT string_agg(gate || ': ' || problem, '; ') FROM pg_concurrency_control_check()");
	is($problems, '', "counters consistent after $what");
}

1;
