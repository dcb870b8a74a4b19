#ifndef SF_TRAMP_H
#define SF_TRAMP_H
/*
 * Trampolines without libffi closures (x86-64 System V, Linux).
 *
 * A slot is 16 bytes of code in a page copied from a template and then made read+execute;
 * the page after it is read+write and holds the slot's two words (context, target). The
 * code loads the context into %r10 and jumps to the target, every argument register intact.
 * No page is ever writable and executable at once. A slot is immutable once returned; a
 * freed slot is reused only after an RCU grace period (sf_rcu_*).
 *
 * The entries:
 *  - sf_tramp_entry: spills the argument registers (and %al) to a frame on its stack, calls
 *    ctx->handler(ctx, frame), and returns what the handler left in the frame's return words.
 *  - sf_tramp_invoke: loads registers and stack arguments from a call record and calls a
 *    function: the direct call of an original, never through ffi_call.
 * A long double (x87) argument travels on the stack and a long double return in %st(0): the
 * entry loads it with fldt, the direct call stores it with fstpt. Signatures the classifier
 * rejects (a struct holding a long double, complex, vector or over-aligned types) keep the
 * libffi closure.
 */
#include <ffi.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(hidden)

/* The argument registers as sf_tramp_entry saves them. Offsets are fixed by the assembly. */
struct sf_tramp_frame {
    uint64_t regs[14];      /* rdi rsi rdx rcx r8 r9, then xmm0-xmm7 (low 8 bytes) */
    uint64_t ret[4];        /* returned in rax rdx xmm0 xmm1 */
    uint64_t al;            /* the caller's %al (vector registers used, for varargs); after the
                             * handler, SF_FRAME_RET_X87 when ret[0..1] holds a long double */
    void *stack;            /* the caller's stack arguments */
    uint64_t scratch[18];   /* structs split between integer and SSE registers */
};

/* A direct call. Offsets are fixed by the assembly. */
struct sf_tramp_call {
    uint64_t regs[14];
    uint64_t ret[4];
    uint64_t al;
    const void *stack;      /* bytes copied to the callee's stack arguments */
    uint64_t stack_bytes;   /* a multiple of 16 */
    const void *fn;
    uint64_t ret_x87;       /* nonzero: fn returns a long double in %st(0), stored to ret[0..1] */
};

/* What sf_tramp_frame_return leaves in frame->al for sf_tramp_entry to load %st(0) from ret:
 * more than any %al a caller passes. */
#define SF_FRAME_RET_X87 0x8700

/* What sf_tramp_entry calls: the context's first word. */
typedef void (*sf_tramp_handler)(void *ctx, struct sf_tramp_frame *frame);

/* What a slot's context word points at when its target is sf_tramp_entry. */
struct sf_tramp_context {
    sf_tramp_handler handler;
    void *owner;
    const struct sf_tramp_layout *layout;
};

/* Where one argument lives. */
enum { SF_LOC_REGS = 0, SF_LOC_STACK = 1, SF_LOC_SPLIT = 2 };
struct sf_tramp_loc {
    uint8_t where;
    uint8_t reg0, reg1;     /* SF_LOC_SPLIT: the register of each eightbyte */
    uint8_t pad;
    uint32_t offset;        /* bytes into regs, the stack area or scratch */
    uint32_t size;
};

/* Return classes. */
enum { SF_RET_VOID = 0, SF_RET_REGS = 1, SF_RET_SPLIT = 2, SF_RET_MEMORY = 3, SF_RET_X87 = 4 };

/* How a signature's arguments and return value map to registers and stack. */
struct sf_tramp_layout {
    uint32_t nargs;
    uint32_t stack_bytes;   /* stack arguments, rounded up to 16 */
    uint8_t ret_kind;
    uint8_t ret_reg0, ret_reg1;  /* ret[] index of each eightbyte */
    int8_t ret_widen;       /* small integer return: 1 sign-, 2 zero-extend (as libffi does) */
    uint32_t ret_size;
    uint32_t ret_offset;    /* SF_RET_REGS: bytes into ret[] */
    uint32_t sse_used;      /* for %al */
    uint32_t int_only;      /* 0, or the number of integer registers when every argument is an
                             * integer scalar in a register and the return is one or none:
                             * a register-class thunk can take the call (2-5) */
    uint32_t int_wide;      /* int_only, every argument 8 bytes, the return 8 bytes or none */
    uint32_t reg_only;      /* 0, or the number of integer registers (2-5) when every argument
                             * sits whole in integer and/or SSE registers (no stack, no split
                             * struct) and the return is none or one eightbyte in %rax or %xmm0:
                             * a hook's register entry can take the call */
    struct sf_tramp_loc locs[];
};

/* Whether trampolines are used for new closures and hooks: x86-64 Linux with 4 KiB pages,
 * not turned off by SF_TRAMPOLINES=0 in the environment or sf_tramp_set_enabled(0). */
int sf_tramp_enabled(void);
/* Test hook: force the libffi fallback (0) or allow trampolines (1) for new IMPs. */
void sf_tramp_set_enabled(int enabled);

/* Classifies a prepared cif; NULL when the entries cannot carry it (use libffi). Free with free(). */
struct sf_tramp_layout *sf_tramp_layout_create(const ffi_cif *cif);

/* The register a slot loads its context into: %r10 for the entries, or the first integer
 * argument register a signature leaves free, for a thunk that takes it as one more argument.
 * The SF_TRAMP_DROP<n> slots load no context: they move the n arguments after the selector
 * down one register and jump to the target, a non-throwing Swift closure that captures
 * nothing (its context register is never read), so a C caller reaches it with no thunk. */
enum {
    SF_TRAMP_R10 = 0, SF_TRAMP_RDX = 1, SF_TRAMP_RCX = 2, SF_TRAMP_R8 = 3, SF_TRAMP_R9 = 4,
    SF_TRAMP_DROP0 = 5, SF_TRAMP_DROP1 = 6, SF_TRAMP_DROP2 = 7, SF_TRAMP_DROP3 = 8,
    SF_TRAMP_KINDS = 9
};

/* A slot whose code loads `context` into %r10 and jumps to `target`; NULL on failure. */
void *sf_tramp_alloc(void *context, const void *target);
/* The same with the context in another register (SF_TRAMP_*). */
void *sf_tramp_alloc_kind(int kind, void *context, const void *target);
/* Sets the context of a slot not yet published (its owner knows itself only after allocating). */
void sf_tramp_set_context(void *code, void *context);
/* Retires a slot no longer published; it is reused after a grace period. */
void sf_tramp_free(void *code);
/* Reads back a slot's words (tests and diagnostics). */
void sf_tramp_words(const void *code, void **context, const void **target);
/* Slots: handed out, waiting for a grace period, free (of the %r10 kind). */
void sf_tramp_stats(size_t *live, size_t *pending, size_t *free_slots);
/* The generic entry, to use as a slot's target. */
void sf_tramp_entry(void);

/* A Swift closure value: its function and its context (a thick function's two words). */
struct sf_swift_closure {
    const void *function;
    const void *context;
};
/* Slot targets for non-throwing Swift closures `(ObjectRef, Int…) -> Int` of 0-3 arguments:
 * the slot's context (in the register after the arguments, SF_TRAMP_RDX + n) points at the
 * closure's struct sf_swift_closure; the thunk calls it with Swift's convention. */
void sf_tramp_int_nothrow0(void);
void sf_tramp_int_nothrow1(void);
void sf_tramp_int_nothrow2(void);
void sf_tramp_int_nothrow3(void);

struct sf_object;
struct sf_class;
struct sf_selector;
/* The targets of throwing closures' slots (0-3 arguments; tramp_int.c): they never read the
 * receiver; a thrown error goes, with the closure that threw it, to the function set with
 * sf_tramp_set_int_failure, which takes ownership of the error. */
typedef void (*sf_tramp_int_failure_fn)(void *error, const struct sf_swift_closure *closure, const struct sf_selector *sel);
void sf_tramp_set_int_failure(sf_tramp_int_failure_fn fn);
intptr_t sf_tramp_int_throwing0(struct sf_object *self, const struct sf_selector *sel, const struct sf_swift_closure *c);
intptr_t sf_tramp_int_throwing1(struct sf_object *self, const struct sf_selector *sel, intptr_t a,
                                const struct sf_swift_closure *c);
intptr_t sf_tramp_int_throwing2(struct sf_object *self, const struct sf_selector *sel, intptr_t a, intptr_t b,
                                const struct sf_swift_closure *c);
intptr_t sf_tramp_int_throwing3(struct sf_object *self, const struct sf_selector *sel, intptr_t a, intptr_t b,
                                intptr_t c3, const struct sf_swift_closure *c);

/* Frame side: fills args[] (nargs pointers into the frame) and returns the return storage. */
void *sf_tramp_frame_args(struct sf_tramp_frame *frame, const struct sf_tramp_layout *layout, void **args);
/* Frame side: after the body wrote the return storage, moves it to the return registers. */
void sf_tramp_frame_return(struct sf_tramp_frame *frame, const struct sf_tramp_layout *layout);

/* What a hook's register entry returns: %rax and %xmm0 at once (System V classifies this
 * struct INTEGER, SSE). */
struct sf_tramp_ret {
    uint64_t rax;
    double xmm0;
};

/* A register entry's side of a reg_only layout: points args[] into regs (14 words laid out as
 * struct sf_tramp_frame's) and returns where the return value goes in ret (4 words, zeroed). */
static inline void *sf_tramp_regs_args(const struct sf_tramp_layout *L, uint64_t *regs, uint64_t *ret, void **args) {
    for (uint32_t i = 0; i < L->nargs; i++) args[i] = (char *)regs + L->locs[i].offset;
    ret[0] = ret[1] = ret[2] = ret[3] = 0;
    return (char *)ret + L->ret_offset;
}

/* An integer argument of `size` bytes, zero-extended, without a call to memcpy. */
static inline uint64_t sf_tramp_load_word(const void *p, uint32_t size) {
    switch (size) {
    case 1: return *(const uint8_t *)p;
    case 2: { uint16_t v; __builtin_memcpy(&v, p, 2); return v; }
    case 4: { uint32_t v; __builtin_memcpy(&v, p, 4); return v; }
    case 8: { uint64_t v; __builtin_memcpy(&v, p, 8); return v; }
    default: { uint64_t v = 0; __builtin_memcpy(&v, p, size & 7); return v; }
    }
}

typedef uint64_t (*sf_tramp_int_fn)(uint64_t, uint64_t, uint64_t, uint64_t, uint64_t);

/* sf_tramp_call_args for an int_only layout: a plain call (extra registers are ignored),
 * inline so that a hook's call of its original is a load per argument and a call. */
static inline void sf_tramp_call_ints(const struct sf_tramp_layout *L, const void *fn, void *ret, void *const *args) {
    if (L->int_wide) {
        const uint64_t *const *a = (const uint64_t *const *)args;
        uint32_t n = L->nargs;
        uint64_t v = ((sf_tramp_int_fn)fn)(*a[0], *a[1], n > 2 ? *a[2] : 0, n > 3 ? *a[3] : 0, n > 4 ? *a[4] : 0);
        if (L->ret_kind != SF_RET_VOID) __builtin_memcpy(ret, &v, 8);
        return;
    }
    uint64_t r[5] = {0, 0, 0, 0, 0};
    for (uint32_t i = 0; i < L->nargs && i < 5; i++) r[i] = sf_tramp_load_word(args[i], L->locs[i].size);
    uint64_t v = ((sf_tramp_int_fn)fn)(r[0], r[1], r[2], r[3], r[4]);
    if (L->ret_kind == SF_RET_VOID) return;
    if (L->ret_widen == 1) {
        int64_t w = L->ret_size == 1 ? (int8_t)v : L->ret_size == 2 ? (int16_t)v : (int32_t)v;
        __builtin_memcpy(ret, &w, 8);
    } else if (L->ret_widen == 2) {
        uint64_t w = L->ret_size == 1 ? (uint8_t)v : L->ret_size == 2 ? (uint16_t)v : (uint32_t)v;
        __builtin_memcpy(ret, &w, 8);
    } else if (L->ret_size == 8) {
        __builtin_memcpy(ret, &v, 8);
    } else {
        for (uint32_t i = 0; i < L->ret_size && i < 8; i++) ((unsigned char *)ret)[i] = (unsigned char)(v >> (8 * i));
    }
}

/* Calls fn with the arguments args[] point at; the return value lands in ret. */
void sf_tramp_call_args(const struct sf_tramp_layout *layout, const void *fn, void *ret, void *const *args);
void sf_tramp_invoke(struct sf_tramp_call *call);

#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif
#endif
