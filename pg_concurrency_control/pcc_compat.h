/*-------------------------------------------------------------------------
 *
 * pcc_compat.h
 *	  Everything that depends on the PostgreSQL major version, in one place.
 *
 * The module targets PostgreSQL 15; the branches below are what 13-17 need
 * so that a port does not require touching the other files.
 *
 *-------------------------------------------------------------------------
 */
#ifndef PCC_COMPAT_H
#define PCC_COMPAT_H

#include "postgres.h"
#include "storage/proc.h"

#if PG_VERSION_NUM < 130000
#error "pg_concurrency_control requires PostgreSQL 13 or later"
#endif

/* PG15 split shared memory requests out of _PG_init into a hook. */
#if PG_VERSION_NUM >= 150000
#define PCC_HAVE_SHMEM_REQUEST_HOOK 1
#endif

/* PG15 renamed EmitWarningsOnPlaceholders. */
#if PG_VERSION_NUM < 150000
#define MarkGUCPrefixReserved(prefix) EmitWarningsOnPlaceholders(prefix)
#endif

/* PG17 replaced PGPROC->pgprocno with MyProcNumber. */
#if PG_VERSION_NUM >= 170000
#define PCC_MY_PROCNO() (MyProcNumber)
#else
#define PCC_MY_PROCNO() (MyProc->pgprocno)
#endif

/* PG14 added readOnlyTree to ProcessUtility. */
#if PG_VERSION_NUM >= 140000
#define PCC_UTILITY_READONLY_PARAM bool readOnlyTree,
#define PCC_UTILITY_READONLY_ARG readOnlyTree,
#else
#define PCC_UTILITY_READONLY_PARAM
#define PCC_UTILITY_READONLY_ARG
#endif

/* PG14 added PGPROC->waitStart, which the deadlock escape reads. */
#if PG_VERSION_NUM >= 140000
#define PCC_PROC_LOCK_WAIT_START(proc) \
	((TimestampTz) pg_atomic_read_u64(&(proc)->waitStart))
#else
#define PCC_PROC_LOCK_WAIT_START(proc) ((TimestampTz) 0)
#endif

#endif							/* PCC_COMPAT_H */
