/*
 * ForwardingBench.m - what Objective-C message forwarding costs on Linux
 * with GNUstep Base and the GCC Objective-C runtime (Debian's libobjc).
 *
 * Reference point for SelectorForwarding's libffi-based forwarding.
 * Every case calls the same `add:to:` (a + b) in a tight loop and sums the
 * results, so the work is identical and the sum can be checked.
 *
 * Build and run: bash Benchmarks/objc/run.sh
 */
#import <Foundation/Foundation.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define STR_(x) #x
#define STR(x) STR_(x)

/* The method every case ends up calling. */
@interface Adder : NSObject
- (long) add: (long)a to: (long)b;
@end

@implementation Adder
- (long) add: (long)a to: (long)b
{
  return a + b;
}
@end

/* Lacks add:to:; the runtime asks it for a replacement receiver. */
@interface TargetForwarder : NSObject
{
  id target;
}
- (id) initWithTarget: (id)aTarget;
@end

@implementation TargetForwarder
- (id) initWithTarget: (id)aTarget
{
  if ((self = [super init]) != nil)
    target = [aTarget retain];
  return self;
}
- (void) dealloc
{
  [target release];
  [super dealloc];
}
- (id) forwardingTargetForSelector: (SEL)sel
{
  return [target respondsToSelector: sel] ? target : nil;
}
@end

/* Lacks add:to:; goes through the full NSInvocation round trip. */
@interface InvocationForwarder : NSObject
{
  id target;
}
- (id) initWithTarget: (id)aTarget;
@end

@implementation InvocationForwarder
- (id) initWithTarget: (id)aTarget
{
  if ((self = [super init]) != nil)
    target = [aTarget retain];
  return self;
}
- (void) dealloc
{
  [target release];
  [super dealloc];
}
- (NSMethodSignature *) methodSignatureForSelector: (SEL)sel
{
  NSMethodSignature *sig = [super methodSignatureForSelector: sel];
  return sig != nil ? sig : [target methodSignatureForSelector: sel];
}
- (void) forwardInvocation: (NSInvocation *)inv
{
  if ([target respondsToSelector: [inv selector]])
    [inv invokeWithTarget: target];
  else
    [super forwardInvocation: inv];
}
@end

/* The textbook proxy: NSProxy implements almost nothing, so everything
 * is forwarded. */
@interface AdderProxy : NSProxy
{
  id target;
}
- (id) initWithTarget: (id)aTarget;
@end

@implementation AdderProxy
- (id) initWithTarget: (id)aTarget
{
  target = [aTarget retain];
  return self;
}
- (void) dealloc
{
  [target release];
  [super dealloc];
}
- (NSMethodSignature *) methodSignatureForSelector: (SEL)sel
{
  return [target methodSignatureForSelector: sel];
}
- (void) forwardInvocation: (NSInvocation *)inv
{
  [inv invokeWithTarget: target];
}
@end

/* ---- the measured loops ------------------------------------------------ */

static long add_c(long a, long b) { return a + b; }

/* volatile so the compiler must load and call through it every time. */
static long (*volatile direct_fn)(long, long) = add_c;

/* Receivers; plain `id` so every send is a real dynamic dispatch. */
static id adder, targetForwarder, invocationForwarder, proxy;
static long (*cached_imp)(id, SEL, long, long);

/* Forwarding may autorelease temporaries (invocations, signatures), so
 * loops run in chunks with a pool each. Same for every case, so the cost
 * (one pool per CHUNK calls) is included everywhere and is negligible. */
#define CHUNK 4096

#define BENCH_LOOP(name, CALL)                                       \
  static long name(long n)                                           \
  {                                                                  \
    long sum = 0, i = 0;                                             \
    while (i < n)                                                    \
      {                                                              \
        NSAutoreleasePool *pool = [NSAutoreleasePool new];           \
        long end = (n - i > CHUNK) ? i + CHUNK : n;                  \
        for (; i < end; i++)                                         \
          sum += (CALL);                                             \
        [pool drain];                                                \
      }                                                              \
    return sum;                                                      \
  }

BENCH_LOOP(run_direct, direct_fn(i, 3))
BENCH_LOOP(run_msgSend, [adder add: i to: 3])
BENCH_LOOP(run_imp, cached_imp(adder, @selector(add:to:), i, 3))
BENCH_LOOP(run_forwardingTarget, [targetForwarder add: i to: 3])
BENCH_LOOP(run_forwardInvocation, [invocationForwarder add: i to: 3])
BENCH_LOOP(run_proxyForward, [proxy add: i to: 3])

/* ---- timing ------------------------------------------------------------ */

typedef long (*RunFn)(long);

static double now_sec(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Runs fn(n) once; returns seconds and checks the sum against the
 * closed form sum_{i<n} (i + 3). */
static double timed_run(const char *name, RunFn fn, long n)
{
  long expected = n * (n - 1) / 2 + 3 * n;
  double t0 = now_sec();
  long got = fn(n);
  double t = now_sec() - t0;
  if (got != expected)
    {
      /* A wrong sum means the timing is meaningless too: stop here. */
      fprintf(stderr, "WRONG RESULT in %s: n=%ld got %ld expected %ld\n",
              name, n, got, expected);
      exit(1);
    }
  return t;
}

#define TARGET_SEC 0.3
#define RUNS 5

/* Grows n until one run takes a measurable time, scales it to about
 * TARGET_SEC, then reports the best of RUNS runs in ns per call. */
static double measure(const char *name, RunFn fn)
{
  long n = 1000;
  double t;
  while ((t = timed_run(name, fn, n)) < 0.02 && n < (1L << 40))
    n *= 4;
  n = (long)(n * (TARGET_SEC / (t > 1e-9 ? t : 1e-9)));
  if (n < 1000)
    n = 1000;

  double best = 1e30;
  int r;
  for (r = 0; r < RUNS; r++)
    {
      double s = timed_run(name, fn, n);
      if (s < best)
        best = s;
    }
  return best * 1e9 / n;
}

static int failures = 0;

/* One call outside the loops, so a broken path fails with a clear message
 * (and the one-time setup of each path is not timed). */
static void check_once(const char *name, long got)
{
  if (got != 42)
    {
      fprintf(stderr, "WRONG RESULT in %s warm-up: got %ld expected 42\n",
              name, got);
      failures++;
    }
}

int main(int argc, char **argv)
{
  NSAutoreleasePool *pool = [NSAutoreleasePool new];
  int c;

  adder = [Adder new];
  targetForwarder = [[TargetForwarder alloc] initWithTarget: adder];
  invocationForwarder = [[InvocationForwarder alloc] initWithTarget: adder];
  proxy = [[AdderProxy alloc] initWithTarget: adder];
  cached_imp = (long (*)(id, SEL, long, long))
    [adder methodForSelector: @selector(add:to:)];

  /* The forwarding objects really must lack the method, or we would be
   * timing plain sends. */
  if ([TargetForwarder instancesRespondToSelector: @selector(add:to:)]
      || [InvocationForwarder instancesRespondToSelector: @selector(add:to:)])
    {
      fprintf(stderr, "forwarder unexpectedly implements add:to:\n");
      return 2;
    }

  check_once("direct", direct_fn(40, 2));
  check_once("msgSend", [adder add: 40 to: 2]);
  check_once("imp", cached_imp(adder, @selector(add:to:), 40, 2));
  check_once("forwardingTarget", [targetForwarder add: 40 to: 2]);
  check_once("forwardInvocation", [invocationForwarder add: 40 to: 2]);
  check_once("proxyForward", [proxy add: 40 to: 2]);
  if (failures)
    return 1;

  static const struct { const char *name; RunFn fn; } cases[] = {
    { "direct", run_direct },
    { "msgSend", run_msgSend },
    { "imp", run_imp },
    { "forwardingTarget", run_forwardingTarget },
    { "forwardInvocation", run_forwardInvocation },
    { "proxyForward", run_proxyForward },
  };
  enum { NCASES = sizeof cases / sizeof cases[0] };
  double ns[NCASES];

  for (c = 0; c < NCASES; c++)
    ns[c] = measure(cases[c].name, cases[c].fn);

  printf("Objective-C forwarding on GNUstep Base %s, GCC %s runtime\n",
         STR(GNUSTEP_BASE_VERSION), __VERSION__);
  printf("(best of %d runs, ~%.1f s each)\n\n", RUNS, TARGET_SEC);
  printf("%-20s %12s %12s\n", "case", "ns/call", "x direct");
  printf("%-20s %12s %12s\n", "--------------------", "------------",
         "------------");
  for (c = 0; c < NCASES; c++)
    printf("%-20s %12.2f %12.1f\n", cases[c].name, ns[c], ns[c] / ns[0]);
  printf("\n");
  for (c = 0; c < NCASES; c++)
    printf("RESULT %s %.3f\n", cases[c].name, ns[c]);

  [pool drain];
  return 0;
}
