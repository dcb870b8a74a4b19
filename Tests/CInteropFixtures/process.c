// fork() and signal-handler fixtures (fx_process.h).
#include "fx_process.h"
#include <errno.h>
#include <semaphore.h>
#include <signal.h>
#include <time.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int fx_fork_and_run(fx_child_fn fn, void *context, unsigned seconds) {
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        alarm(seconds);
        _exit(fn(context) & 0xff);
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0) {}
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
    return -1;
}

static sf_id _Atomic signal_obj;
static sf_sel _Atomic signal_sel;
static atomic_long signal_count, signal_failures, signal_sum;
static sem_t signal_handled;  /* posted by each handler run (sem_post is async-signal-safe) */

// Async-signal-safe by the runtime's rules (docs/reliability.md, "Signal handlers"): a
// cached lookup on a thread that has sent before, and a C IMP that only does arithmetic.
static void on_signal(int sig) {
    (void)sig;
    sf_id obj = atomic_load(&signal_obj);
    sf_sel sel = atomic_load(&signal_sel);
    if (!obj || !sel) return;
    sf_imp imp = sf_msg_lookup(obj, sel);
    if (!imp) {
        atomic_fetch_add(&signal_failures, 1);
    } else {
        long r = ((long (*)(sf_id, sf_sel, long))imp)(obj, sel, 1);
        atomic_fetch_add(&signal_sum, r);
    }
    atomic_fetch_add(&signal_count, 1);
    sem_post(&signal_handled);
}

void fx_signal_send_install(sf_id obj, sf_sel sel) {
    atomic_store(&signal_obj, obj);
    atomic_store(&signal_sel, sel);
    atomic_store(&signal_count, 0);
    atomic_store(&signal_failures, 0);
    atomic_store(&signal_sum, 0);
    sem_init(&signal_handled, 0, 0);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGUSR1, &sa, NULL);
}

void fx_signal_send_uninstall(void) {
    signal(SIGUSR1, SIG_IGN);
    atomic_store(&signal_obj, NULL);
    sem_destroy(&signal_handled);
}

long fx_signal_send_count(void) { return atomic_load(&signal_count); }

int fx_signal_send_wait(unsigned seconds) {
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += seconds;
    while (sem_timedwait(&signal_handled, &deadline) != 0) {
        if (errno != EINTR) return 0;
    }
    return 1;
}
long fx_signal_send_failures(void) { return atomic_load(&signal_failures); }
long fx_signal_send_sum(void) { return atomic_load(&signal_sum); }

long fx_plus_one(sf_id self, sf_sel cmd, long x) { (void)self; (void)cmd; return x + 1; }
long fx_plus_one_again(sf_id self, sf_sel cmd, long x) { (void)self; (void)cmd; return x + 1; }

long fx_send_loop(sf_id obj, sf_sel sel, const int *stop, long *calls) {
    long wrong = 0, n = 0;
    while (!__atomic_load_n(stop, __ATOMIC_RELAXED)) {
        sf_imp imp = sf_msg_lookup(obj, sel);
        if (!imp || ((long (*)(sf_id, sf_sel, long))imp)(obj, sel, n) != n + 1) wrong++;
        n++;
    }
    *calls = n;
    return wrong;
}

void fx_flag_store(int *flag, int value) { __atomic_store_n(flag, value, __ATOMIC_RELAXED); }
int fx_flag_load(const int *flag) { return __atomic_load_n(flag, __ATOMIC_RELAXED); }
