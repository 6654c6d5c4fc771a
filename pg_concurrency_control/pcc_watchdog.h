/*-------------------------------------------------------------------------
 *
 * pcc_watchdog.h
 *	  The watchdog worker (pcc_watchdog.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef PCC_WATCHDOG_H
#define PCC_WATCHDOG_H

extern void pcc_register_watchdog(void);
extern PGDLLEXPORT void pcc_watchdog_main(Datum main_arg);

#endif							/* PCC_WATCHDOG_H */
