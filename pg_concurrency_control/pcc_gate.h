/*-------------------------------------------------------------------------
 *
 * pcc_gate.h
 *	  Admission gates: take, give back, keep and resume slots (pcc_gate.c).
 *	  The shared state they work on, and its locking rules, are in pcc.h.
 *
 *-------------------------------------------------------------------------
 */
#ifndef PCC_GATE_H
#define PCC_GATE_H

#include "pcc.h"

extern PccAdmission pcc_gate_acquire(PccGateId id, int timeout_ms,
									 PccTimeoutAction action,
									 PccPriority priority,
									 PccTime turn_start);
extern void pcc_gate_release(PccGateId id);
extern bool pcc_gate_held(PccGateId id);
extern void pcc_gate_abandon_wait(void);
extern void pcc_gate_linger(PccGateId id);
extern bool pcc_gate_resume(PccGateId id, PccTime *turn_start);
extern void pcc_gate_grant_waiters(PccGate *gate);
extern int64 pcc_gate_turn_us(PccGate *gate);
extern int64 pcc_gate_turn_budget_us(PccGate *gate);
extern void pcc_gate_reset_stats(PccGate *gate, TimestampTz now);
extern const char *pcc_gate_name(PccGateId id);
extern void pcc_gate_name_copy(PccGateId id, char *buf);
extern const char *pcc_limit_guc_name(PccGateId id);
extern const char *pcc_priority_name(PccPriority priority);

#endif							/* PCC_GATE_H */
