/*
 * Process-level abuse for the reliability tests: fork() while other threads use the runtime,
 * and sends from a real signal handler.
 */
#ifndef FX_PROCESS_H
#define FX_PROCESS_H

#include <SelectorForwarding.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef int (*fx_child_fn)(void *context);

/* Forks; the child runs fn(context) under an alarm of `seconds` and _exits with its result.
 * Returns the child's exit status (0-255), 128 + the signal that killed it (SIGALRM: it
 * hung), or -1 if fork failed. */
int fx_fork_and_run(fx_child_fn fn, void *context, unsigned seconds);

/* Installs a SIGUSR1 handler on the calling process that sends `sel` (long (*)(id, SEL, long))
 * to `obj` through sf_msg_lookup and adds the result to a counter. */
void fx_signal_send_install(sf_id obj, sf_sel sel);
void fx_signal_send_uninstall(void);
/* Handler runs so far, and how many of them got a NULL IMP. */
long fx_signal_send_count(void);
/* Blocks until one more handler run has finished (each run is counted once), or `seconds`
 * have passed: 1 if it ran, 0 on the timeout (a handler that hung or a signal never taken). */
int fx_signal_send_wait(unsigned seconds);
long fx_signal_send_failures(void);
/* The sum of what the handler's sends returned. */
long fx_signal_send_sum(void);

/* Two C IMPs of type long (*)(id, SEL, long) returning x + 1, for swapping under senders. */
long fx_plus_one(sf_id self, sf_sel cmd, long x);
long fx_plus_one_again(sf_id self, sf_sel cmd, long x);

/* Sends `sel` (an fx_plus_one-like method) to `obj` through sf_msg_lookup in a loop until
 * *stop is set; returns how many calls returned a wrong value or failed. */
long fx_send_loop(sf_id obj, sf_sel sel, const int *stop, long *calls);
/* Atomic store and load of a flag shared with fx_send_loop. */
void fx_flag_store(int *flag, int value);
int fx_flag_load(const int *flag);

#ifdef __cplusplus
}
#endif

#endif
