/*
 * C code that uses the runtime the way a C program would: through SelectorForwarding.h only.
 * CInteropTests (Swift) calls these and asserts on what they report.
 */
#ifndef CINTEROP_FIXTURES_H
#define CINTEROP_FIXTURES_H

#include <SelectorForwarding.h>
#include "fx_process.h"
#include "ConformanceFixtures.h"
#include "CAPIScenarios.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- method implementations, for Swift to install as IMPs ---- */

typedef struct fx_point { double x, y; } fx_point;              /* {fx_point=dd}: two SSE registers */
typedef struct fx_quad { long long a, b, c, d; } fx_quad;       /* {fx_quad=qqqq}: through memory */
typedef struct fx_mixed { char c; int i; double d; } fx_mixed;  /* {fx_mixed=cid}: padded */

long fx_add(sf_id self, sf_sel cmd, long a, long b);                   /* q@:qq */
double fx_scale(sf_id self, sf_sel cmd, double x, double k);           /* d@:dd */
float fx_half_float(sf_id self, sf_sel cmd, float x);                  /* f@:f */
signed char fx_negate_char(sf_id self, sf_sel cmd, signed char c);     /* c@:c */
long fx_widen_char(sf_id self, sf_sel cmd, signed char c);             /* q@:c */
unsigned short fx_ushort_max(sf_id self, sf_sel cmd);                  /* S@: */
bool fx_is_positive(sf_id self, sf_sel cmd, double x);                 /* B@:d */
fx_point fx_point_scale(sf_id self, sf_sel cmd, fx_point p, double k); /* {fx_point=dd}@:{fx_point=dd}d */
/* A variadic method, - (double)sum:(int)n, ...: adds n doubles read with va_arg, which finds the
 * ones passed in registers only when the caller set %al (vector registers used) above 0. */
double fx_sum_doubles(sf_id self, sf_sel cmd, int n, ...);
/* fx_sum_doubles as an IMP (Swift does not import variadic C functions). */
sf_imp fx_sum_doubles_imp(void);
fx_quad fx_quad_reverse(sf_id self, sf_sel cmd, fx_quad q);            /* {fx_quad=qqqq}@:{fx_quad=qqqq} */
double fx_mixed_sum(sf_id self, sf_sel cmd, fx_mixed m);               /* d@:{fx_mixed=cid} */
const char *fx_class_name_of(sf_id self, sf_sel cmd);                  /* *@: */
sf_id fx_return_self(sf_id self, sf_sel cmd);                          /* @@: (+1) */
sf_sel fx_return_cmd(sf_id self, sf_sel cmd);                          /* :@: */
sf_class_t fx_class_of(sf_id self, sf_sel cmd, sf_id other);           /* #@:@ */
long fx_sum6(sf_id self, sf_sel cmd, long a, long b, long c, long d, long e, long f); /* q@:qqqqqq: stack args */

/* A call of an IMP with up to three integer arguments, for fx_call_keeping_registers. */
typedef struct fx_call {
    const void *imp;
    sf_id obj;
    sf_sel sel;
    long args[3];
    long result;
} fx_call;
/* Calls call->imp with marker values in every callee-saved register; 1 when all came back
 * (x86-64 Linux only: registers.S). */
int fx_call_keeping_registers(fx_call *call);

/* ---- scenarios: 0 on success, else the line of the first failed check ---- */

/* What the first failed check said (file-local; the scenarios run on one thread at a time). */
const char *fx_failure(void);

int fx_scenario_class_pair(const char *name);
int fx_scenario_methods_and_lookup(const char *name);
int fx_scenario_replace_exchange(const char *name);
int fx_scenario_msg_send(const char *name);
int fx_scenario_missing_methods(const char *name);
int fx_scenario_bad_inputs(const char *name);
int fx_scenario_objects(const char *name);
int fx_scenario_weak_and_associated(const char *name);
int fx_scenario_ivars(const char *name);
int fx_scenario_class_methods(const char *name);
int fx_scenario_many_objects(const char *name, int count);

/* ---- single calls, for Swift to check values against its own sends ---- */

/* Looks `sel` up with sf_msg_lookup and calls it as long (*)(id, SEL, long, long);
 * returns `fallback` and leaves sf_last_error() set when the lookup fails. */
long fx_call_long2(sf_id obj, const char *sel, long a, long b, long fallback);
/* sf_msg_lookup's result for `sel`, as sf_last_error() reports it afterwards. */
sf_status fx_lookup_status(sf_id obj, const char *sel);
/* sf_msg_send with two long arguments and a long result. */
sf_status fx_send_long2(sf_id obj, const char *sel, long a, long b, long *out);
/* Calls a method that returns an object (+1) through sf_msg_lookup and releases the result. */
uintptr_t fx_call_object_and_release(sf_id obj, const char *sel);

#ifdef __cplusplus
}
#endif

#endif
