/*
 * accel-run --prepare (prepare.c): attach accel's XDP steering program to
 * ACCEL_IFACE before the first accelerated process, so that process adopts
 * it instead of loading it (docs/DESIGN.md section 3, "Start-up time").
 */
#ifndef ACCEL_TOOLS_PREPARE_H
#define ACCEL_TOOLS_PREPARE_H

/** Attach the program the configuration in the environment (and
 *  ACCEL_PROFILE) asks for. 0 when it is attached (or the interface has
 *  nothing to prepare), 1 when it cannot be, 2 for a bad configuration;
 *  one line on stderr either way. */
int prep_run(void);

#endif
