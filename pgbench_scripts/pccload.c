/*
 * pccload: a load generator for PostgreSQL at thousands of connections.
 *
 * libpq in non-blocking mode driven by epoll, one thread per core by
 * default, so that the client is never the bottleneck.  Runs pgbench's
 * TPC-B-like, select-only and simple-update scripts in prepared or simple
 * protocol mode and measures three phases apart: connect-all (opened at a
 * bounded rate; as in pgbench, no transaction starts before every
 * connection is up, so that connecting is not slowed by the load), steady
 * state (a fixed time, counted only while every connection is up, after
 * an optional warm-up with the load running) and disconnect-all (until the
 * server has no session of ours left).
 * Latencies per transaction and per statement come from log-bucketed
 * histograms of constant size; errors are counted by SQLSTATE.
 * With --wide-scale N, SIGUSR1 makes the accounts drawn range over those
 * of scale N (branches and tellers stay), SIGUSR2 narrows them back: a
 * working set that outgrows memory and shrinks again, mid-run.
 *
 *   pccload -h /tmp -p 5432 -U postgres -c 1024 -T 60 -w tpcb -M prepared
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <libpq-fe.h>

#define MAX_STMTS		8
#define MAX_PARAMS		5
/*
 * Latencies in µs: exact below HIST_SUB, above it HIST_SUB buckets per
 * power of two (each under 0.8% wide; a percentile is its bucket's middle).
 */
#define HIST_SHIFT		7
#define HIST_SUB		(1 << HIST_SHIFT)
#define HIST_BUCKETS	(HIST_SUB * 36)
#define MAX_ERRCODES	32
#define APP_NAME		"pccload"
#define Min(a, b)		((a) < (b) ? (a) : (b))

/* The parameters a script draws per transaction. */
enum { P_AID, P_BID, P_TID, P_DELTA, P_KEY2 };

/* One statement of a script: SQL for both protocols and its parameters. */
typedef struct Statement
{
	const char *prepared;		/* with $n placeholders */
	const char *simple;			/* printf format, %d per parameter */
	int			nparams;
	int			params[MAX_PARAMS];
} Statement;

typedef struct Script
{
	const char *name;
	int			nstmts;
	Statement	stmts[MAX_STMTS];
} Script;

#define ST_BEGIN {"BEGIN", "BEGIN", 0, {0}}
#define ST_END {"END", "END", 0, {0}}
#define ST_UPD_ACC {"UPDATE pgbench_accounts SET abalance = abalance + $1 WHERE aid = $2", \
	"UPDATE pgbench_accounts SET abalance = abalance + %d WHERE aid = %d", 2, {P_DELTA, P_AID}}
#define ST_SEL_ACC {"SELECT abalance FROM pgbench_accounts WHERE aid = $1", \
	"SELECT abalance FROM pgbench_accounts WHERE aid = %d", 1, {P_AID}}
#define ST_INS_HIST {"INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES ($1, $2, $3, $4, CURRENT_TIMESTAMP)", \
	"INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (%d, %d, %d, %d, CURRENT_TIMESTAMP)", \
	4, {P_TID, P_BID, P_AID, P_DELTA}}

/* pgbench's built-in scripts, statement for statement. */
static const Script scripts[] = {
	{"tpcb", 7, {ST_BEGIN, ST_UPD_ACC, ST_SEL_ACC,
			{"UPDATE pgbench_tellers SET tbalance = tbalance + $1 WHERE tid = $2",
			"UPDATE pgbench_tellers SET tbalance = tbalance + %d WHERE tid = %d", 2, {P_DELTA, P_TID}},
			{"UPDATE pgbench_branches SET bbalance = bbalance + $1 WHERE bid = $2",
			"UPDATE pgbench_branches SET bbalance = bbalance + %d WHERE bid = %d", 2, {P_DELTA, P_BID}},
	ST_INS_HIST, ST_END}},
	{"simple-update", 5, {ST_BEGIN, ST_UPD_ACC, ST_SEL_ACC, ST_INS_HIST, ST_END}},
	{"select-only", 1, {ST_SEL_ACC}},
	/* for the soak: an autocommit write and a big query */
	{"autocommit-update", 1, {{"UPDATE pgbench_accounts SET abalance = abalance + $1 WHERE aid = $2",
			"UPDATE pgbench_accounts SET abalance = abalance + %d WHERE aid = %d", 2, {P_DELTA, P_AID}}}},
	{"bigsql", 1, {{"SELECT /*+bigsql*/ sum(abalance) FROM pgbench_accounts WHERE aid BETWEEN $1 AND $2 + 20000",
			"SELECT /*+bigsql*/ sum(abalance) FROM pgbench_accounts WHERE aid BETWEEN %d AND %d + 20000",
			2, {P_AID, P_AID}}}},
	/*
	 * Single-row autocommit mix on a hash-partitioned table (see
	 * partition_mix.sql): a read and an update of one key, and a delete and
	 * re-insert of another, so the table keeps its size.
	 */
	{"partition-mix", 4, {
			{"SELECT v FROM pcc_part WHERE id = $1", "SELECT v FROM pcc_part WHERE id = %d", 1, {P_AID}},
			{"UPDATE pcc_part SET v = v + $1 WHERE id = $2",
			"UPDATE pcc_part SET v = v + %d WHERE id = %d", 2, {P_DELTA, P_AID}},
			{"DELETE FROM pcc_part WHERE id = $1", "DELETE FROM pcc_part WHERE id = %d", 1, {P_KEY2}},
			{"INSERT INTO pcc_part (id, v) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING",
			"INSERT INTO pcc_part (id, v) VALUES (%d, %d) ON CONFLICT (id) DO NOTHING", 2, {P_KEY2, P_DELTA}}}},
	/* for the FIFO test: the queue ticket and grant turn of each block */
#define ADM_LOG "INSERT INTO adm SELECT ticket, turn FROM pg_concurrency_control_backends()" \
	" WHERE pid = pg_backend_pid() AND gate = 'transaction' AND ticket IS NOT NULL"
	{"admission-log", 3, {ST_BEGIN, {ADM_LOG, ADM_LOG, 0, {0}}, ST_END}},
};

/* Log-bucketed latency histogram in microseconds. */
typedef struct Histogram
{
	uint64_t	count;
	double		sum;
	double		sumsq;
	uint64_t	max;
	uint64_t	buckets[HIST_BUCKETS];
} Histogram;

/*
 * Connection states:
 *   CONNECTING  PQconnectPoll in progress
 *   PREPARING   sending the script's PREPAREs, one at a time
 *   READY       up and prepared, waiting for every other connection
 *   BUSY        a statement was sent; waiting for all its results
 *   THINKING    between two transactions, for --think ms (on its thread's
 *               queue of thinkers, which wake in the order they started)
 *   DONE        finished, or failed to connect
 */
typedef enum ConnState
{
	CONNECTING, PREPARING, READY, BUSY, THINKING, DONE
} ConnState;

typedef struct Conn
{
	PGconn	   *pg;
	ConnState	state;
	int			sock;			/* registered with epoll, or -1 */
	uint32_t	events;			/* registered interest */
	int			stmt;			/* script position */
	bool		failed;			/* an error in this transaction */
	bool		rollback;		/* the statement in flight is a ROLLBACK */
	int			values[MAX_PARAMS];
	uint64_t	txn_start;
	uint64_t	stmt_start;
	uint64_t	wake_at;		/* THINKING: when to start the next one */
} Conn;

typedef struct ErrorCount
{
	char		code[6];
	uint64_t	n;
} ErrorCount;

/* Per-thread state and statistics, merged after the threads join. */
typedef struct Thread
{
	pthread_t	tid;
	int			index;
	int			nconns;
	Conn	   *conns;
	Conn	  **thinkers;		/* ring of THINKING conns, oldest first */
	int			think_head;		/* next to wake */
	int			nthinking;
	int			epfd;
	uint64_t	rng;
	int			next_to_open;
	int			connecting;
	_Atomic uint64_t txns_total;	/* completed, any phase */
	_Atomic uint64_t txns_steady;	/* completed in the steady phase */
	uint64_t	txns_failed;
	_Atomic uint64_t connect_failures;
	Histogram	txn_hist;
	Histogram	stmt_hist[MAX_STMTS];
	ErrorCount	errors[MAX_ERRCODES];
	int			nerrors;
	double		cpu_seconds;
} Thread;

/* Phases, set by the main thread. */
/* PH_WARMUP runs the load with every connection up but counts nothing. */
enum { PH_CONNECT, PH_WARMUP, PH_STEADY, PH_DRAIN, PH_CLOSE };

static struct
{
	const char *conninfo;
	int			clients;
	int			threads;
	int			duration;
	int			progress;
	int			connect_inflight;	/* concurrent connection attempts per thread */
	int			scale;
	int			wide_scale;		/* accounts' scale after SIGUSR1, 0 if none */
	bool		prepared;
	const Script *script;
	const char *csv;
	const char *json;
	const char *label;
	bool		wait_close;		/* count the close until the server has none left */
	bool		reconnect;		/* reopen connections lost while running */
	uint64_t	think_us;		/* pause between a client's transactions */
	int			warmup;			/* seconds of load before the steady phase */
	bool		term_ends_steady;	/* SIGTERM ends the steady phase */
} opt = {NULL, 64, 0, 60, 5, 16, 0, 0, true, &scripts[0], NULL, NULL, "", true, false, 0, 0, false};

static _Atomic int phase = PH_CONNECT;
static _Atomic int connected = 0;
static _Atomic int finished = 0;	/* connections past their last txn */
static volatile sig_atomic_t accounts_scale;	/* the scale aid ranges over */
static volatile sig_atomic_t stop_requested;	/* SIGTERM: end the steady phase */

static uint64_t
now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t) ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static int
hist_index(uint64_t v)
{
	int			e;

	if (v < HIST_SUB)
		return (int) v;
	e = 63 - __builtin_clzll(v);	/* v >= 2^e, e >= HIST_SHIFT */
	int			i = HIST_SUB * (e - HIST_SHIFT + 1) +
		(int) ((v >> (e - HIST_SHIFT)) & (HIST_SUB - 1));

	return i < HIST_BUCKETS ? i : HIST_BUCKETS - 1;
}

/* Lower bound of a bucket. */
static uint64_t
hist_value(int i)
{
	int			e;

	if (i < HIST_SUB)
		return (uint64_t) i;
	e = i / HIST_SUB + HIST_SHIFT - 1;
	return ((uint64_t) 1 << e) + ((uint64_t) (i % HIST_SUB) << (e - HIST_SHIFT));
}

static void
hist_add(Histogram *h, uint64_t v)
{
	h->count++;
	h->sum += v;
	h->sumsq += (double) v * v;
	if (v > h->max)
		h->max = v;
	h->buckets[hist_index(v)]++;
}

static void
hist_merge(Histogram *into, const Histogram *h)
{
	into->count += h->count;
	into->sum += h->sum;
	into->sumsq += h->sumsq;
	if (h->max > into->max)
		into->max = h->max;
	for (int i = 0; i < HIST_BUCKETS; i++)
		into->buckets[i] += h->buckets[i];
}

static double
hist_percentile(const Histogram *h, double p)
{
	uint64_t	want = (uint64_t) ceil(h->count * p);
	uint64_t	seen = 0;

	if (h->count == 0)
		return 0;
	for (int i = 0; i < HIST_BUCKETS; i++)
	{
		seen += h->buckets[i];
		if (seen >= want)
			return i < HIST_SUB || i == HIST_BUCKETS - 1 ? hist_value(i) / 1000.0 :
				Min((hist_value(i) + hist_value(i + 1)) / 2.0, (double) h->max) / 1000.0;
	}
	return h->max / 1000.0;
}

static double
hist_mean(const Histogram *h)
{
	return h->count ? h->sum / h->count / 1000.0 : 0;
}

static double
hist_stddev(const Histogram *h)
{
	double		m;

	if (h->count < 2)
		return 0;
	m = h->sum / h->count;
	return sqrt(fmax(0, h->sumsq / h->count - m * m)) / 1000.0;
}

static uint64_t
rng_next(Thread *t)
{
	t->rng ^= t->rng << 13;
	t->rng ^= t->rng >> 7;
	t->rng ^= t->rng << 17;
	return t->rng;
}

static int
rng_range(Thread *t, int lo, int hi)
{
	return lo + (int) (rng_next(t) % (uint64_t) (hi - lo + 1));
}

static void
count_error(Thread *t, const char *code)
{
	for (int i = 0; i < t->nerrors; i++)
		if (strcmp(t->errors[i].code, code) == 0)
		{
			t->errors[i].n++;
			return;
		}
	if (t->nerrors < MAX_ERRCODES)
	{
		snprintf(t->errors[t->nerrors].code, 6, "%s", code);
		t->errors[t->nerrors++].n = 1;
	}
}

/* Keep the epoll registration in line with what libpq needs next. */
static void
watch(Thread *t, Conn *c, uint32_t events)
{
	int			sock = c->pg ? PQsocket(c->pg) : -1;
	struct epoll_event ev = {.events = events, .data.ptr = c};

	if (sock != c->sock && c->sock >= 0)
	{
		epoll_ctl(t->epfd, EPOLL_CTL_DEL, c->sock, NULL);
		c->sock = -1;
	}
	if (sock < 0 || events == 0)
	{
		if (c->sock >= 0)
			epoll_ctl(t->epfd, EPOLL_CTL_DEL, c->sock, NULL);
		c->sock = -1;
		c->events = 0;
		return;
	}
	if (c->sock < 0)
		epoll_ctl(t->epfd, EPOLL_CTL_ADD, sock, &ev);
	else if (c->events != events)
		epoll_ctl(t->epfd, EPOLL_CTL_MOD, sock, &ev);
	c->sock = sock;
	c->events = events;
}

static void
close_conn(Thread *t, Conn *c)
{
	watch(t, c, 0);
	if (c->pg)
		PQfinish(c->pg);
	c->pg = NULL;
	if (c->state != DONE)
		atomic_fetch_add(&finished, 1);
	c->state = DONE;
}

static void poll_connect(Thread *t, Conn *c);

/* The server closed the connection: reopen it while the run lasts. */
static void
lost_conn(Thread *t, Conn *c, const char *code)
{
	count_error(t, code);
	if (!opt.reconnect || atomic_load(&phase) >= PH_DRAIN)
	{
		close_conn(t, c);
		return;
	}
	watch(t, c, 0);
	PQfinish(c->pg);
	atomic_fetch_sub(&connected, 1);
	c->pg = PQconnectStart(opt.conninfo);
	c->state = CONNECTING;
	t->connecting++;
	poll_connect(t, c);
}

/* Send a command; wait for writability if libpq could not flush it all. */
static void
sent(Thread *t, Conn *c, int ok)
{
	if (!ok)
	{
		lost_conn(t, c, "08000");
		return;
	}
	c->stmt_start = now_us();
	watch(t, c, PQflush(c->pg) == 1 ? EPOLLIN | EPOLLOUT : EPOLLIN);
}

static void
send_statement(Thread *t, Conn *c)
{
	const Statement *st = &opt.script->stmts[c->stmt];
	int			v[MAX_PARAMS] = {0};

	for (int i = 0; i < st->nparams; i++)
		v[i] = c->values[st->params[i]];
	c->state = BUSY;
	c->rollback = false;
	if (opt.prepared)
	{
		char		name[8];
		char		buf[MAX_PARAMS][16];
		const char *vals[MAX_PARAMS];

		snprintf(name, sizeof(name), "s%d", c->stmt);
		for (int i = 0; i < st->nparams; i++)
		{
			snprintf(buf[i], sizeof(buf[i]), "%d", v[i]);
			vals[i] = buf[i];
		}
		sent(t, c, PQsendQueryPrepared(c->pg, name, st->nparams, vals, NULL, NULL, 0));
	}
	else
	{
		char		sql[256];

		snprintf(sql, sizeof(sql), st->simple, v[0], v[1], v[2], v[3], v[4]);
		sent(t, c, PQsendQuery(c->pg, sql));
	}
}

/* Start a transaction, or stop this connection when the run is over. */
static void
start_transaction(Thread *t, Conn *c)
{
	int			naccounts = accounts_scale * 100000;

	if (atomic_load(&phase) == PH_CONNECT)
	{
		watch(t, c, 0);
		c->state = READY;
		return;
	}
	if (atomic_load(&phase) >= PH_DRAIN)
	{
		watch(t, c, 0);
		atomic_fetch_add(&finished, 1);
		c->state = DONE;		/* kept open until the close phase */
		return;
	}
	c->values[P_AID] = rng_range(t, 1, naccounts);
	c->values[P_BID] = rng_range(t, 1, opt.scale);
	c->values[P_TID] = rng_range(t, 1, opt.scale * 10);
	c->values[P_DELTA] = rng_range(t, -5000, 5000);
	c->values[P_KEY2] = rng_range(t, 1, naccounts);
	c->stmt = 0;
	c->failed = false;
	c->txn_start = now_us();
	send_statement(t, c);
}

static void
send_prepare(Thread *t, Conn *c)
{
	char		name[8];

	snprintf(name, sizeof(name), "s%d", c->stmt);
	c->state = PREPARING;
	sent(t, c, PQsendPrepare(c->pg, name, opt.script->stmts[c->stmt].prepared,
							 opt.script->stmts[c->stmt].nparams, NULL));
}

static void
on_connected(Thread *t, Conn *c)
{
	PQsetnonblocking(c->pg, 1);
	t->connecting--;
	atomic_fetch_add(&connected, 1);
	c->stmt = 0;
	if (opt.prepared)
		send_prepare(t, c);
	else
		start_transaction(t, c);
}

static void
poll_connect(Thread *t, Conn *c)
{
	switch (PQconnectPoll(c->pg))
	{
		case PGRES_POLLING_READING:
			watch(t, c, EPOLLIN);
			break;
		case PGRES_POLLING_WRITING:
			watch(t, c, EPOLLOUT);
			break;
		case PGRES_POLLING_OK:
			on_connected(t, c);
			break;
		default:
			fprintf(stderr, "connection failed: %s", PQerrorMessage(c->pg));
			t->connect_failures++;
			t->connecting--;
			close_conn(t, c);
	}
}

/* Open connections up to the per-thread bound on attempts in flight. */
static void
open_more(Thread *t)
{
	while (t->next_to_open < t->nconns && t->connecting < opt.connect_inflight)
	{
		Conn	   *c = &t->conns[t->next_to_open++];

		c->sock = -1;
		c->pg = PQconnectStart(opt.conninfo);
		t->connecting++;
		if (c->pg == NULL || PQstatus(c->pg) == CONNECTION_BAD)
		{
			t->connect_failures++;
			t->connecting--;
			close_conn(t, c);
			continue;
		}
		poll_connect(t, c);
	}
}

/*
 * The client thinks before its next transaction.  Every client thinks
 * equally long, so the ring stays in wake-up order.
 */
static void
think(Thread *t, Conn *c, uint64_t now)
{
	c->state = THINKING;
	c->wake_at = now + opt.think_us;
	watch(t, c, 0);
	t->thinkers[(t->think_head + t->nthinking++) % t->nconns] = c;
}

/* Start the transactions of the clients done thinking; ms until the next. */
static int
wake_thinkers(Thread *t)
{
	uint64_t	now = now_us();

	while (t->nthinking > 0)
	{
		Conn	   *c = t->thinkers[t->think_head];

		if (c->wake_at > now)
			return (int) ((c->wake_at - now + 999) / 1000);
		t->think_head = (t->think_head + 1) % t->nconns;
		t->nthinking--;
		if (c->state == THINKING)
			start_transaction(t, c);
	}
	return 50;
}

/* One statement's results are all in: account and move on. */
static void
statement_done(Thread *t, Conn *c)
{
	uint64_t	now = now_us();
	bool		steady = atomic_load(&phase) == PH_STEADY;

	if (c->state == PREPARING)
	{
		if (++c->stmt < opt.script->nstmts)
			send_prepare(t, c);
		else
			start_transaction(t, c);
		return;
	}
	if (steady && !c->failed)
		hist_add(&t->stmt_hist[c->stmt], now - c->stmt_start);

	/* after an error inside a block, roll it back, then start afresh */
	if (c->failed && !c->rollback && c->stmt > 0 &&
		c->stmt < opt.script->nstmts - 1 && opt.script->nstmts > 1)
	{
		c->rollback = true;
		sent(t, c, PQsendQuery(c->pg, "ROLLBACK"));
		return;
	}
	if (!c->failed && ++c->stmt < opt.script->nstmts)
	{
		send_statement(t, c);
		return;
	}
	if (c->failed)
		t->txns_failed++;
	else
	{
		atomic_fetch_add(&t->txns_total, 1);
		if (steady)
		{
			atomic_fetch_add(&t->txns_steady, 1);
			hist_add(&t->txn_hist, now - c->txn_start);
		}
	}
	if (opt.think_us > 0)
		think(t, c, now);
	else
		start_transaction(t, c);
}

/* Socket ready: flush, read, and take every complete result. */
static void
on_event(Thread *t, Conn *c, uint32_t events)
{
	PGresult   *res;

	if (c->state == CONNECTING)
	{
		poll_connect(t, c);
		return;
	}
	if (c->state != BUSY && c->state != PREPARING)
		return;
	if ((events & EPOLLOUT) && PQflush(c->pg) == 0)
		watch(t, c, EPOLLIN);
	if (!(events & (EPOLLIN | EPOLLERR | EPOLLHUP)))
		return;
	if (!PQconsumeInput(c->pg))
	{
		lost_conn(t, c, "08006");
		return;
	}
	while (!PQisBusy(c->pg))
	{
		res = PQgetResult(c->pg);
		if (res == NULL)
		{
			statement_done(t, c);
			return;
		}
		if (PQresultStatus(res) == PGRES_FATAL_ERROR)
		{
			const char *code = PQresultErrorField(res, PG_DIAG_SQLSTATE);

			count_error(t, code ? code : "?????");
			if (c->state == PREPARING)
			{
				fprintf(stderr, "prepare failed: %s", PQresultErrorMessage(res));
				PQclear(res);
				close_conn(t, c);
				return;
			}
			c->failed = true;
		}
		PQclear(res);
	}
}

static void *
thread_main(void *arg)
{
	Thread	   *t = arg;
	struct epoll_event events[256];
	struct timespec cpu;
	bool		started = false;

	t->epfd = epoll_create1(0);
	while (atomic_load(&phase) < PH_CLOSE)
	{
		int			n;

		if (atomic_load(&phase) <= PH_STEADY)
			open_more(t);
		if (!started && atomic_load(&phase) >= PH_WARMUP)
		{
			started = true;
			for (int i = 0; i < t->nconns; i++)
				if (t->conns[i].state == READY)
					start_transaction(t, &t->conns[i]);
		}
		n = epoll_wait(t->epfd, events, 256, Min(50, wake_thinkers(t)));
		for (int i = 0; i < n; i++)
			on_event(t, events[i].data.ptr, events[i].events);
	}
	for (int i = 0; i < t->nconns; i++)
		close_conn(t, &t->conns[i]);
	close(t->epfd);
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu);
	t->cpu_seconds = cpu.tv_sec + cpu.tv_nsec / 1e9;
	return NULL;
}

static uint64_t
sum_txns(Thread *th, bool steady)
{
	uint64_t	n = 0;

	for (int i = 0; i < opt.threads; i++)
		n += atomic_load(steady ? &th[i].txns_steady : &th[i].txns_total);
	return n;
}

/* Sessions of ours the server still has, via a separate connection. */
static int
server_sessions(PGconn *mon)
{
	PGresult   *r = PQexec(mon, "SELECT count(*) FROM pg_stat_activity WHERE application_name = '" APP_NAME "'");
	int			n = PQresultStatus(r) == PGRES_TUPLES_OK ? atoi(PQgetvalue(r, 0, 0)) : -1;

	PQclear(r);
	return n;
}

static void
usage(void)
{
	fprintf(stderr,
			"usage: pccload [options]\n"
			"  -h HOST -p PORT -U USER -d DB   connection (Unix socket directory for -h)\n"
			"  -c N        connections (64)\n"
			"  -j N        threads (one per CPU)\n"
			"  -T SECS     steady-state duration (60)\n"
			"  -w NAME     tpcb | simple-update | select-only | partition-mix (partition_mix.sql)\n"
			"              | autocommit-update | bigsql\n"
			"              | admission-log (needs a table adm (ticket, turn bigint))\n"
			"  -M MODE     prepared | simple (prepared)\n"
			"  -s SCALE    scale (read from pgbench_branches)\n"
			"  -r N        connection attempts in flight per thread (16)\n"
			"  -P SECS     progress every SECS, 0 for none (5)\n"
			"  -L LABEL    label for the CSV/JSON rows\n"
			"  --csv FILE  append a CSV row (header when the file is new)\n"
			"  --json FILE write the result as JSON\n"
			"  --no-wait-close  time the close on the client only (behind a pooler,\n"
			"              whose server sessions outlive the clients)\n"
			"  --reconnect reopen connections the server closes while running\n"
			"  --wide-scale N  SIGUSR1 draws accounts from scale N, SIGUSR2 from\n"
			"              the scale again (a working set that grows and shrinks)\n"
			"  --think MS  each client pauses MS (fractions allowed) between its\n"
			"              transactions, as an application thinks\n"
			"  --warmup S  run the load S seconds with every connection up before\n"
			"              the steady phase, counting nothing (backends' caches\n"
			"              warm up; 0 by default)\n"
			"  --term-ends-steady  SIGTERM in the steady phase ends it and prints\n"
			"              the summary, as -T would (for a driver that ends the\n"
			"              load itself)\n");
	exit(2);
}

static void
parse_args(int argc, char **argv)
{
	static char conninfo[1024];
	const char *host = "/tmp", *port = "5432", *user = "postgres", *db = "postgres";
	static struct option longopts[] = {
		{"csv", required_argument, NULL, 1},
		{"json", required_argument, NULL, 2},
		{"no-wait-close", no_argument, NULL, 3},
		{"reconnect", no_argument, NULL, 4},
		{"wide-scale", required_argument, NULL, 5},
		{"think", required_argument, NULL, 6},
		{"warmup", required_argument, NULL, 7},
		{"term-ends-steady", no_argument, NULL, 8},
		{NULL, 0, NULL, 0}
	};
	int			ch;

	while ((ch = getopt_long(argc, argv, "h:p:U:d:c:j:T:w:M:s:r:P:L:", longopts, NULL)) != -1)
	{
		switch (ch)
		{
			case 'h': host = optarg; break;
			case 'p': port = optarg; break;
			case 'U': user = optarg; break;
			case 'd': db = optarg; break;
			case 'c': opt.clients = atoi(optarg); break;
			case 'j': opt.threads = atoi(optarg); break;
			case 'T': opt.duration = atoi(optarg); break;
			case 's': opt.scale = atoi(optarg); break;
			case 'r': opt.connect_inflight = atoi(optarg); break;
			case 'P': opt.progress = atoi(optarg); break;
			case 'L': opt.label = optarg; break;
			case 1: opt.csv = optarg; break;
			case 2: opt.json = optarg; break;
			case 3: opt.wait_close = false; break;
			case 4: opt.reconnect = true; break;
			case 5: opt.wide_scale = atoi(optarg); break;
			case 6: opt.think_us = (uint64_t) (atof(optarg) * 1000); break;
			case 7: opt.warmup = atoi(optarg); break;
			case 8: opt.term_ends_steady = true; break;
			case 'M':
				if (strcmp(optarg, "prepared") != 0 && strcmp(optarg, "simple") != 0)
					usage();
				opt.prepared = strcmp(optarg, "prepared") == 0;
				break;
			case 'w':
				opt.script = NULL;
				for (size_t i = 0; i < sizeof(scripts) / sizeof(scripts[0]); i++)
					if (strcmp(optarg, scripts[i].name) == 0)
						opt.script = &scripts[i];
				if (opt.script == NULL)
					usage();
				break;
			default:
				usage();
		}
	}
	if (opt.clients < 1 || opt.duration < 1 || opt.connect_inflight < 1 ||
		opt.warmup < 0)
		usage();
	if (opt.threads <= 0)
		opt.threads = (int) sysconf(_SC_NPROCESSORS_ONLN);
	if (opt.threads > opt.clients)
		opt.threads = opt.clients;
	snprintf(conninfo, sizeof(conninfo),
			 "host=%s port=%s user=%s dbname=%s application_name=" APP_NAME,
			 host, port, user, db);
	opt.conninfo = conninfo;
}

/* The scale, from pgbench_branches unless given. */
static void
read_scale(PGconn *mon)
{
	PGresult   *r;

	if (opt.scale > 0)
		return;
	r = PQexec(mon, "SELECT count(*) FROM pgbench_branches");
	if (PQresultStatus(r) != PGRES_TUPLES_OK)
	{
		fprintf(stderr, "cannot read the scale: %s", PQerrorMessage(mon));
		exit(1);
	}
	opt.scale = atoi(PQgetvalue(r, 0, 0));
	PQclear(r);
}

/* SIGUSR1 and SIGUSR2 (--wide-scale): widen or narrow the accounts drawn. */
static void
on_scale_signal(int sig)
{
	accounts_scale = sig == SIGUSR1 ? opt.wide_scale : opt.scale;
}

/*
 * --term-ends-steady: SIGTERM in the steady phase ends it early, so that a
 * driver that stops the load when its own phases are over still gets the
 * summary (failed transactions included); outside the steady phase, or a
 * second time, it ends the process as it always does.
 */
static void
on_term(int sig)
{
	if (stop_requested || atomic_load(&phase) != PH_STEADY)
	{
		signal(SIGTERM, SIG_DFL);
		raise(SIGTERM);
		return;
	}
	stop_requested = 1;
}

/* Run handler on signal sig, restarting interrupted system calls. */
static void
catch_signal(int sig, void (*handler) (int))
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = handler;
	sa.sa_flags = SA_RESTART;
	sigaction(sig, &sa, NULL);
}

static void
install_term_signal(void)
{
	if (opt.term_ends_steady)
		catch_signal(SIGTERM, on_term);
}

static void
install_scale_signals(void)
{
	accounts_scale = opt.scale;
	if (opt.wide_scale <= 0)
		return;
	catch_signal(SIGUSR1, on_scale_signal);
	catch_signal(SIGUSR2, on_scale_signal);
}

typedef struct Result
{
	double		connect_s;
	double		steady_s;
	double		close_s;
	double		total_s;
	uint64_t	txns_total;
	uint64_t	txns_steady;
	uint64_t	txns_failed;
	uint64_t	connect_failures;
	double		client_cpu_s;
	Histogram	txn;
	Histogram	stmt[MAX_STMTS];
	ErrorCount	errors[MAX_ERRCODES];
	int			nerrors;
} Result;

static void
merge_results(Thread *th, Result *r)
{
	for (int i = 0; i < opt.threads; i++)
	{
		Thread	   *t = &th[i];

		r->txns_failed += t->txns_failed;
		r->connect_failures += t->connect_failures;
		r->client_cpu_s += t->cpu_seconds;
		hist_merge(&r->txn, &t->txn_hist);
		for (int s = 0; s < opt.script->nstmts; s++)
			hist_merge(&r->stmt[s], &t->stmt_hist[s]);
		for (int e = 0; e < t->nerrors; e++)
		{
			int			k;

			for (k = 0; k < r->nerrors; k++)
				if (strcmp(r->errors[k].code, t->errors[e].code) == 0)
					break;
			if (k == r->nerrors && r->nerrors < MAX_ERRCODES)
				r->errors[r->nerrors++] = t->errors[e];
			else if (k < r->nerrors)
				r->errors[k].n += t->errors[e].n;
		}
	}
	r->txns_total = sum_txns(th, false);
	r->txns_steady = sum_txns(th, true);
}

static void
print_result(const Result *r)
{
	printf("workload %s, protocol %s, scale %d, %d connections, %d threads\n",
		   opt.script->name, opt.prepared ? "prepared" : "simple", opt.scale,
		   opt.clients, opt.threads);
	printf("connect all: %.2f s   steady: %.1f s   disconnect all: %.2f s\n",
		   r->connect_s, r->steady_s, r->close_s);
	printf("tps steady (all connections up): %.1f\n", r->txns_steady / r->steady_s);
	printf("tps raw (whole run, as pgbench): %.1f\n", r->txns_total / r->total_s);
	printf("failed transactions: %lu   connection failures: %lu\n",
		   (unsigned long) r->txns_failed, (unsigned long) r->connect_failures);
	for (int e = 0; e < r->nerrors; e++)
		printf("  SQLSTATE %s: %lu\n", r->errors[e].code, (unsigned long) r->errors[e].n);
	printf("client CPU: %.1f s (%.0f%% of one core over the run)\n",
		   r->client_cpu_s, 100.0 * r->client_cpu_s / r->total_s);
	printf("%-10s %10s %9s %9s %9s %9s %9s %10s  %s\n", "latency ms", "count", "mean",
		   "stddev", "p50", "p95", "p99", "max", "");
	printf("%-10s %10lu %9.3f %9.3f %9.3f %9.3f %9.3f %10.3f  %s\n", "txn",
		   (unsigned long) r->txn.count, hist_mean(&r->txn), hist_stddev(&r->txn),
		   hist_percentile(&r->txn, 0.5), hist_percentile(&r->txn, 0.95),
		   hist_percentile(&r->txn, 0.99), r->txn.max / 1000.0, "");
	for (int s = 0; s < opt.script->nstmts; s++)
	{
		const Histogram *h = &r->stmt[s];

		printf("%-10s %10lu %9.3f %9.3f %9.3f %9.3f %9.3f %10.3f  %.60s\n", s == 0 ? "statement" : "",
			   (unsigned long) h->count, hist_mean(h), hist_stddev(h),
			   hist_percentile(h, 0.5), hist_percentile(h, 0.95),
			   hist_percentile(h, 0.99), h->max / 1000.0, opt.script->stmts[s].prepared);
	}
}

/* Statement RT excluding BEGIN: the mean of the other statements, summed. */
static double
sql_rt_ms(const Result *r)
{
	double		sum = 0;

	for (int s = 0; s < opt.script->nstmts; s++)
		if (strcmp(opt.script->stmts[s].prepared, "BEGIN") != 0)
			sum += hist_mean(&r->stmt[s]);
	return sum;
}

static void
write_csv(const Result *r)
{
	FILE	   *f;
	bool		fresh = access(opt.csv, F_OK) != 0;

	if ((f = fopen(opt.csv, "a")) == NULL)
	{
		perror(opt.csv);
		return;
	}
	if (fresh)
		fprintf(f, "label,workload,protocol,scale,clients,threads,connect_s,steady_s,close_s,"
				"tps_steady,tps_raw,txn_mean_ms,txn_stddev_ms,txn_p50_ms,txn_p95_ms,txn_p99_ms,"
				"txn_max_ms,sql_rt_ms,begin_mean_ms,failed,connect_failures,client_cpu_s\n");
	fprintf(f, "%s,%s,%s,%d,%d,%d,%.3f,%.3f,%.3f,%.2f,%.2f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%lu,%lu,%.2f\n",
			opt.label, opt.script->name, opt.prepared ? "prepared" : "simple", opt.scale,
			opt.clients, opt.threads, r->connect_s, r->steady_s, r->close_s,
			r->txns_steady / r->steady_s, r->txns_total / r->total_s,
			hist_mean(&r->txn), hist_stddev(&r->txn), hist_percentile(&r->txn, 0.5),
			hist_percentile(&r->txn, 0.95), hist_percentile(&r->txn, 0.99), r->txn.max / 1000.0,
			sql_rt_ms(r),
			strcmp(opt.script->stmts[0].prepared, "BEGIN") == 0 ? hist_mean(&r->stmt[0]) : 0.0,
			(unsigned long) r->txns_failed, (unsigned long) r->connect_failures, r->client_cpu_s);
	fclose(f);
}

static void
write_json(const Result *r)
{
	FILE	   *f = fopen(opt.json, "w");

	if (f == NULL)
	{
		perror(opt.json);
		return;
	}
	fprintf(f, "{\"label\": \"%s\", \"workload\": \"%s\", \"protocol\": \"%s\", \"scale\": %d,"
			" \"clients\": %d, \"threads\": %d, \"connect_s\": %.3f, \"steady_s\": %.3f,"
			" \"close_s\": %.3f, \"tps_steady\": %.2f, \"tps_raw\": %.2f, \"failed\": %lu,"
			" \"client_cpu_s\": %.2f, \"errors\": {",
			opt.label, opt.script->name, opt.prepared ? "prepared" : "simple", opt.scale,
			opt.clients, opt.threads, r->connect_s, r->steady_s, r->close_s,
			r->txns_steady / r->steady_s, r->txns_total / r->total_s,
			(unsigned long) r->txns_failed, r->client_cpu_s);
	for (int e = 0; e < r->nerrors; e++)
		fprintf(f, "%s\"%s\": %lu", e ? ", " : "", r->errors[e].code, (unsigned long) r->errors[e].n);
	fprintf(f, "}, \"latency_ms\": [");
	for (int s = -1; s < opt.script->nstmts; s++)
	{
		const Histogram *h = s < 0 ? &r->txn : &r->stmt[s];

		fprintf(f, "%s{\"what\": \"%s\", \"count\": %lu, \"mean\": %.3f, \"stddev\": %.3f,"
				" \"p50\": %.3f, \"p95\": %.3f, \"p99\": %.3f, \"max\": %.3f}",
				s < 0 ? "" : ", ", s < 0 ? "transaction" : opt.script->stmts[s].prepared,
				(unsigned long) h->count, hist_mean(h), hist_stddev(h), hist_percentile(h, 0.5),
				hist_percentile(h, 0.95), hist_percentile(h, 0.99), h->max / 1000.0);
	}
	fprintf(f, "]}\n");
	fclose(f);
}

int
main(int argc, char **argv)
{
	Thread	   *th;
	PGconn	   *mon;
	Result		r = {0};
	uint64_t	t_start, t_connected = 0, t_steady = 0, t_steady_end, t_closed, last_report;
	uint64_t	last_txns = 0;
	struct rlimit rl;

	parse_args(argc, argv);
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max)
	{
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < (rlim_t) opt.clients + 64)
	{
		fprintf(stderr, "open-files limit %lu is too low for %d connections\n",
				(unsigned long) rl.rlim_cur, opt.clients);
		return 1;
	}
	mon = PQconnectdb(opt.conninfo);
	if (PQstatus(mon) != CONNECTION_OK)
	{
		fprintf(stderr, "%s", PQerrorMessage(mon));
		return 1;
	}
	PQexec(mon, "SET application_name = 'pccload monitor'");
	read_scale(mon);
	install_scale_signals();
	install_term_signal();

	th = calloc(opt.threads, sizeof(Thread));
	for (int i = 0; i < opt.threads; i++)
	{
		th[i].index = i;
		th[i].nconns = opt.clients / opt.threads + (i < opt.clients % opt.threads);
		th[i].conns = calloc(th[i].nconns, sizeof(Conn));
		th[i].thinkers = calloc(th[i].nconns, sizeof(Conn *));
		th[i].rng = 0x9E3779B97F4A7C15ULL * (i + 1) ^ (uint64_t) now_us();
	}
	t_start = last_report = now_us();
	for (int i = 0; i < opt.threads; i++)
		pthread_create(&th[i].tid, NULL, thread_main, &th[i]);

	for (;;)
	{
		uint64_t	now;

		usleep(10000);
		now = now_us();
		if (atomic_load(&phase) == PH_CONNECT)
		{
			int			failures = 0;

			for (int i = 0; i < opt.threads; i++)
				failures += (int) atomic_load(&th[i].connect_failures);
			if (atomic_load(&connected) + failures >= opt.clients)
			{
				t_connected = now;
				atomic_store(&phase, PH_WARMUP);
			}
		}
		if (atomic_load(&phase) == PH_WARMUP &&
			now - t_connected >= (uint64_t) opt.warmup * 1000000)
		{
			t_steady = now;
			atomic_store(&phase, PH_STEADY);
		}
		if (atomic_load(&phase) == PH_STEADY &&
			(stop_requested ||
			 now - t_steady >= (uint64_t) opt.duration * 1000000))
			break;
		if (opt.progress > 0 && now - last_report >= (uint64_t) opt.progress * 1000000)
		{
			uint64_t	txns = sum_txns(th, false);

			fprintf(stderr, "progress: %.1f s, %d connected, %.1f tps, %s\n",
					(now - t_start) / 1e6, atomic_load(&connected),
					(txns - last_txns) / ((now - last_report) / 1e6),
					atomic_load(&phase) == PH_CONNECT ? "connecting" :
					atomic_load(&phase) == PH_WARMUP ? "warm-up" : "steady");
			last_txns = txns;
			last_report = now;
		}
	}
	t_steady_end = now_us();
	atomic_store(&phase, PH_DRAIN);
	while (atomic_load(&finished) < opt.clients)
		usleep(10000);
	r.total_s = (now_us() - t_start) / 1e6;
	/* the raw count stops here, as pgbench's does */
	atomic_store(&phase, PH_CLOSE);
	{
		uint64_t	t_close = now_us();

		for (int i = 0; i < opt.threads; i++)
			pthread_join(th[i].tid, NULL);
		while (opt.wait_close && server_sessions(mon) > 0 &&
			   now_us() - t_close < 300 * 1000000ULL)
			usleep(10000);
		t_closed = now_us();
		r.close_s = (t_closed - t_close) / 1e6;
	}
	r.connect_s = (t_connected - t_start) / 1e6;
	r.steady_s = (t_steady_end - t_steady) / 1e6;
	merge_results(th, &r);
	print_result(&r);
	if (opt.csv)
		write_csv(&r);
	if (opt.json)
		write_json(&r);
	PQfinish(mon);
	return r.txns_steady > 0 ? 0 : 1;
}
