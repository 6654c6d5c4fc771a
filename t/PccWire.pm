# A minimal client of PostgreSQL's v3 wire protocol for the TAP tests: what
# psql cannot send (pipelines without Sync, Execute with a row limit that
# suspends a portal, Close of a portal, a client that vanishes).  Trust
# authentication over the node's Unix socket only.
package PccWire;

use strict;
use warnings;
use IO::Select;
use IO::Socket::UNIX;
use Socket qw(SOCK_STREAM);

my $TIMEOUT = 60;

# Open a session on $db of $node and wait until it is ready for a query.
sub connect
{
	my ($class, $node, $db) = @_;
	my $path = $node->host . '/.s.PGSQL.' . $node->port;
	my $sock = IO::Socket::UNIX->new(Type => SOCK_STREAM, Peer => $path)
	  or die "cannot connect to $path: $!";
	my $user = getpwuid($<);
	my $self = bless { sock => $sock, buf => '' }, $class;
	my $body = pack('N', 196608)
	  . "user\0$user\0database\0$db\0application_name\0pccwire\0\0";
	$self->_write(pack('N', length($body) + 4) . $body);
	my $r = $self->read_until('Z');
	die "startup failed: $r->{error}" if $r->{error};
	$self->{pid} = $r->{pid};
	return $self;
}

sub pid { return $_[0]->{pid}; }

sub _write
{
	my ($self, $data) = @_;
	while (length $data)
	{
		my $n = syswrite($self->{sock}, $data);
		die "write failed: $!" unless defined $n;
		substr($data, 0, $n) = '';
	}
}

sub _msg { my ($self, $type, $body) = @_; $self->_write($type . pack('N', length($body) + 4) . $body); }

# The frontend messages, queued on the socket as they are called.
sub parse { my ($s, $name, $sql) = @_; $s->_msg('P', "$name\0$sql\0" . pack('n', 0)); return $s; }
sub bind { my ($s, $portal, $stmt) = @_; $s->_msg('B', "$portal\0$stmt\0" . pack('nnn', 0, 0, 0)); return $s; }
sub execute { my ($s, $portal, $max) = @_; $s->_msg('E', "$portal\0" . pack('N', $max // 0)); return $s; }
sub close_portal { my ($s, $portal) = @_; $s->_msg('C', "P$portal\0"); return $s; }
sub flush { my ($s) = @_; $s->_msg('H', ''); return $s; }
sub sync { my ($s) = @_; $s->_msg('S', ''); return $s; }
sub query { my ($s, $sql) = @_; $s->_msg('Q', "$sql\0"); return $s; }

# Parse, bind and execute one unnamed statement (no Sync).
sub run { my ($s, $sql, $max) = @_; return $s->parse('', $sql)->bind('', '')->execute('', $max); }

# Read one backend message: (type, body).
sub _read_msg
{
	my ($self) = @_;
	my $sel = IO::Select->new($self->{sock});
	while (1)
	{
		if (length($self->{buf}) >= 5)
		{
			my ($type, $len) = unpack('a N', $self->{buf});
			if (length($self->{buf}) >= $len + 1)
			{
				my $body = substr($self->{buf}, 5, $len - 4);
				substr($self->{buf}, 0, $len + 1) = '';
				return ($type, $body);
			}
		}
		die "no answer from the server within $TIMEOUT s" unless $sel->can_read($TIMEOUT);
		my $n = sysread($self->{sock}, my $chunk, 65536);
		die "read failed: $!" unless defined $n;
		return ('EOF', '') if $n == 0;
		$self->{buf} .= $chunk;
	}
}

# Read until a message of one of the given types ('Z' ready, 's' portal
# suspended, '1' parse complete, '3' close complete, 'C' command complete)
# or the end of the connection.  Returns what came: rows, completions,
# suspensions, the first error's SQLSTATE and message, the last type.
sub read_until
{
	my ($self, @stop) = @_;
	my %r = (rows => 0, completions => 0, suspended => 0, error => '', code => '');
	while (1)
	{
		my ($type, $body) = $self->_read_msg;
		$r{last} = $type;
		$r{rows}++ if $type eq 'D';
		$r{completions}++ if $type eq 'C';
		$r{suspended}++ if $type eq 's';
		$r{pid} = unpack('N', $body) if $type eq 'K';
		if ($type eq 'E' && !$r{code})
		{
			my %f = map { substr($_, 0, 1) => substr($_, 1) } split /\0/, $body;
			($r{code}, $r{error}) = ($f{C} // '', $f{M} // '');
		}
		return \%r if $type eq 'EOF' || grep { $_ eq $type } @stop;
	}
}

# Leave politely, or vanish: close the socket mid-whatever.
sub quit { my ($s) = @_; $s->_msg('X', ''); close($s->{sock}); }
sub vanish { my ($s) = @_; close($s->{sock}); }

1;
