/*-------------------------------------------------------------------------
 *
 * pcc_auto.h
 *	  Adaptive limits (pcc_auto.c): the controller, what backends report to
 *	  it, and the watchdog's step.  PccAutoState lives in the gate (pcc.h).
 *
 *-------------------------------------------------------------------------
 */
#ifndef PCC_AUTO_H
#define PCC_AUTO_H

#include "pcc.h"

/* What an interval brought: the input of one controller step. */
typedef struct PccAutoSample
{
	uint64		done;			/* slots given back */
	double		service_us;		/* their summed service time */
	double		seconds;		/* length of the interval */
	uint32		running;		/* slots in use now */
	bool		saturated;		/* waiters queued, or every slot in use */
	bool		yield;			/* other gates' work suffers: shrink */
	bool		held;			/* or did within YIELD_HOLD_MS: neither
								 * grow nor try */
} PccAutoSample;

/* the controller itself (also driven by the test model in pcc_sql.c) */
extern void pcc_auto_start(PccAutoState *st, uint32 limit, uint32 min,
						   uint32 max, PccTime now);
extern bool pcc_auto_step(PccAutoState *st, const PccAutoSample *s,
						  uint32 min, uint32 max, PccTime now);

/* backends: holds and statements */
extern void pcc_auto_slot_taken(PccGateId id);
extern void pcc_auto_report(PccGateId id, PccTime since);
extern void pcc_auto_statement_begins(void);
extern void pcc_auto_statement_ends(void);
extern void pcc_auto_transaction_ends(void);

/* the settings' writer and the watchdog */
extern void pcc_auto_switch_on(PccGateId id);
extern bool pcc_auto_tick(PccGateId id, PccTime now, const char *log_as);

#endif							/* PCC_AUTO_H */
