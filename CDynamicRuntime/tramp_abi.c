// System V x86-64 argument classification for the trampoline entries (see sf_tramp.h).
#include "sf_tramp.h"
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(offsetof(struct sf_tramp_frame, ret) == 112, "frame layout is fixed by the assembly");
_Static_assert(offsetof(struct sf_tramp_frame, al) == 144, "frame layout is fixed by the assembly");
_Static_assert(offsetof(struct sf_tramp_frame, stack) == 152, "frame layout is fixed by the assembly");
_Static_assert(sizeof(struct sf_tramp_frame) == 304, "frame layout is fixed by the assembly");
_Static_assert(offsetof(struct sf_tramp_call, stack_bytes) == 160, "call layout is fixed by the assembly");
_Static_assert(offsetof(struct sf_tramp_call, fn) == 168, "call layout is fixed by the assembly");
_Static_assert(offsetof(struct sf_tramp_call, ret_x87) == 176, "call layout is fixed by the assembly");

enum { C_NONE = 0, C_INT = 1, C_SSE = 2 };

/* Marks the eightbytes `t` (at byte `at` of the enclosing value) touches; 0 if unsupported. */
static int classify(const ffi_type *t, size_t at, uint8_t cls[2]) {
    switch (t->type) {
    case FFI_TYPE_FLOAT:
    case FFI_TYPE_DOUBLE:
        if (at % t->alignment) return 0;
        cls[at / 8] |= C_SSE;
        return 1;
    case FFI_TYPE_UINT8: case FFI_TYPE_SINT8: case FFI_TYPE_UINT16: case FFI_TYPE_SINT16:
    case FFI_TYPE_UINT32: case FFI_TYPE_SINT32: case FFI_TYPE_INT:
    case FFI_TYPE_UINT64: case FFI_TYPE_SINT64: case FFI_TYPE_POINTER:
        if (at % t->alignment) return 0;
        cls[at / 8] |= C_INT;
        return 1;
    case FFI_TYPE_STRUCT: {
        size_t off = at;
        for (ffi_type **e = t->elements; e && *e; e++) {
            size_t a = (*e)->alignment ? (*e)->alignment : 1;
            off = (off + a - 1) / a * a;
            if (!classify(*e, off, cls)) return 0;
            off += (*e)->size;
        }
        return 1;
    }
    default:  /* long double (x87), complex, vectors */
        return 0;
    }
}

/* Whether every scalar inside `t` is one the entries carry. */
static int supported(const ffi_type *t) {
    if (t->type == FFI_TYPE_STRUCT) {
        for (ffi_type **e = t->elements; e && *e; e++) if (!supported(*e)) return 0;
        return t->elements != NULL;
    }
    uint8_t ignored[2] = {0, 0};
    return classify(t, 0, ignored);
}

/* The eightbyte classes of a value passed in registers; 0 eightbytes for memory, -1 unsupported.
 * A long double argument is passed in memory (class X87); its return is handled by the caller. */
static int eightbytes(const ffi_type *t, uint8_t cls[2]) {
    cls[0] = cls[1] = C_NONE;
    if (t->type == FFI_TYPE_LONGDOUBLE && t->size == 16) return 0;
    if (t->size == 0 || t->alignment > 8) return -1;
    if (t->size > 16) return t->type == FFI_TYPE_STRUCT && supported(t) ? 0 : -1;
    uint8_t raw[2] = {0, 0};
    if (!classify(t, 0, raw)) return -1;
    int n = t->size > 8 ? 2 : 1;
    for (int i = 0; i < n; i++) cls[i] = (raw[i] & C_INT) ? C_INT : C_SSE;  /* INTEGER wins */
    return n;
}

struct sf_tramp_layout *sf_tramp_layout_create(const ffi_cif *cif) {
    struct sf_tramp_layout *L = calloc(1, sizeof *L + cif->nargs * sizeof(struct sf_tramp_loc));
    if (!L) return NULL;
    L->nargs = cif->nargs;
    unsigned gpr = 0, sse = 0, stack = 0, scratch = 0;

    const ffi_type *rt = cif->rtype;
    uint8_t rc[2];
    if (rt->type == FFI_TYPE_VOID) {
        L->ret_kind = SF_RET_VOID;
    } else if (rt->type == FFI_TYPE_LONGDOUBLE && rt->size == 16) {
        L->ret_kind = SF_RET_X87;  /* %st(0); the 16 bytes sit in ret[0..1] */
        L->ret_size = 16;
    } else {
        int n = eightbytes(rt, rc);
        if (n < 0) goto unsupported;
        L->ret_size = (uint32_t)rt->size;
        if (n == 0) {
            L->ret_kind = SF_RET_MEMORY;
            gpr = 1;  /* the hidden pointer */
        } else {
            unsigned ints = 0, sses = 0;
            uint8_t reg[2];
            for (int i = 0; i < n; i++) reg[i] = rc[i] == C_INT ? (uint8_t)(0 + ints++) : (uint8_t)(2 + sses++);
            L->ret_reg0 = reg[0];
            L->ret_reg1 = n > 1 ? reg[1] : reg[0];
            L->ret_kind = (n == 1 || reg[1] == reg[0] + 1) ? SF_RET_REGS : SF_RET_SPLIT;
            L->ret_offset = reg[0] * 8u;
            switch (rt->type) {
            case FFI_TYPE_SINT8: case FFI_TYPE_SINT16: case FFI_TYPE_SINT32: case FFI_TYPE_INT:
                L->ret_widen = 1; break;
            case FFI_TYPE_UINT8: case FFI_TYPE_UINT16: case FFI_TYPE_UINT32:
                L->ret_widen = 2; break;
            default: break;
            }
        }
    }

    for (unsigned i = 0; i < cif->nargs; i++) {
        const ffi_type *t = cif->arg_types[i];
        struct sf_tramp_loc *loc = &L->locs[i];
        uint8_t c[2];
        int n = eightbytes(t, c);
        if (n < 0) goto unsupported;
        loc->size = (uint32_t)t->size;
        unsigned ni = 0, ns = 0;
        for (int k = 0; k < n; k++) { if (c[k] == C_INT) ni++; else ns++; }
        if (n == 0 || gpr + ni > 6 || sse + ns > 8) {
            loc->where = SF_LOC_STACK;
            if (t->alignment > 8) stack = (stack + 15) / 16 * 16;  /* a long double */
            loc->offset = stack;
            stack += (unsigned)(t->size + 7) / 8 * 8;
            continue;
        }
        uint8_t reg[2];
        for (int k = 0; k < n; k++) reg[k] = c[k] == C_INT ? (uint8_t)gpr++ : (uint8_t)(6 + sse++);
        if (n == 1 || reg[1] == reg[0] + 1) {
            loc->where = SF_LOC_REGS;
            loc->offset = reg[0] * 8u;
        } else {
            loc->where = SF_LOC_SPLIT;
            loc->reg0 = reg[0];
            loc->reg1 = reg[1];
            loc->offset = scratch;
            scratch += 16;
        }
    }
    if (scratch + 16 > sizeof(((struct sf_tramp_frame *)0)->scratch)) goto unsupported;
    L->stack_bytes = (stack + 15) / 16 * 16;
    L->sse_used = sse;
    int ints = sse == 0 && stack == 0 && scratch == 0 && gpr <= 5 &&
               (L->ret_kind == SF_RET_VOID || (L->ret_kind == SF_RET_REGS && L->ret_reg0 == 0 && L->ret_size <= 8));
    for (unsigned i = 0; ints && i < cif->nargs; i++) ints = L->locs[i].size <= 8;
    L->int_only = ints ? gpr : 0;
    int wide = ints && (L->ret_kind == SF_RET_VOID || (L->ret_size == 8 && L->ret_widen == 0));
    for (unsigned i = 0; wide && i < cif->nargs; i++) wide = L->locs[i].size == 8;
    L->int_wide = wide;
    int regs = stack == 0 && scratch == 0 && gpr >= 2 && gpr <= 5 &&
               (L->ret_kind == SF_RET_VOID ||
                (L->ret_kind == SF_RET_REGS && (L->ret_reg0 == 0 || L->ret_reg0 == 2) && L->ret_size <= 8));
    L->reg_only = regs ? gpr : 0;
    return L;
unsupported:
    free(L);
    return NULL;
}

/* The mixed return's bytes are assembled at the end of scratch. */
#define RET_SCRATCH (sizeof(((struct sf_tramp_frame *)0)->scratch) - 16)

void *sf_tramp_frame_args(struct sf_tramp_frame *f, const struct sf_tramp_layout *L, void **args) {
    char *regs = (char *)f->regs, *stack = f->stack, *scratch = (char *)f->scratch;
    for (uint32_t i = 0; i < L->nargs; i++) {
        const struct sf_tramp_loc *loc = &L->locs[i];
        switch (loc->where) {
        case SF_LOC_REGS: args[i] = regs + loc->offset; break;
        case SF_LOC_STACK: args[i] = stack + loc->offset; break;
        default:
            memcpy(scratch + loc->offset, &f->regs[loc->reg0], 8);
            memcpy(scratch + loc->offset + 8, &f->regs[loc->reg1], 8);
            args[i] = scratch + loc->offset;
        }
    }
    f->ret[0] = f->ret[1] = f->ret[2] = f->ret[3] = 0;
    switch (L->ret_kind) {
    case SF_RET_MEMORY: f->ret[0] = f->regs[0]; return (void *)(uintptr_t)f->regs[0];
    case SF_RET_SPLIT: memset(scratch + RET_SCRATCH, 0, 16); return scratch + RET_SCRATCH;
    default: return (char *)f->ret + L->ret_offset;
    }
}

void sf_tramp_frame_return(struct sf_tramp_frame *f, const struct sf_tramp_layout *L) {
    if (L->ret_kind == SF_RET_X87) f->al = SF_FRAME_RET_X87;
    if (L->ret_kind != SF_RET_SPLIT) return;
    const char *src = (const char *)f->scratch + RET_SCRATCH;
    memcpy(&f->ret[L->ret_reg0], src, 8);
    memcpy(&f->ret[L->ret_reg1], src + 8, 8);
}

void sf_tramp_call_args(const struct sf_tramp_layout *L, const void *fn, void *ret, void *const *args) {
    if (L->int_only) {  /* integer registers only: a plain call */
        sf_tramp_call_ints(L, fn, ret, args);
        return;
    }
    struct sf_tramp_call c;
    unsigned char stack[L->stack_bytes ? L->stack_bytes : 16] __attribute__((aligned(16)));
    memset(c.regs, 0, sizeof c.regs);
    for (uint32_t i = 0; i < L->nargs; i++) {
        const struct sf_tramp_loc *loc = &L->locs[i];
        switch (loc->where) {
        case SF_LOC_REGS: memcpy((char *)c.regs + loc->offset, args[i], loc->size); break;
        case SF_LOC_STACK: memcpy(stack + loc->offset, args[i], loc->size); break;
        default:
            memcpy(&c.regs[loc->reg0], args[i], 8);
            memcpy(&c.regs[loc->reg1], (const char *)args[i] + 8, loc->size - 8);
        }
    }
    if (L->ret_kind == SF_RET_MEMORY) c.regs[0] = (uint64_t)(uintptr_t)ret;
    c.al = L->sse_used;
    c.stack = stack;
    c.stack_bytes = L->stack_bytes;
    c.fn = fn;
    c.ret_x87 = L->ret_kind == SF_RET_X87;
    sf_tramp_invoke(&c);
    switch (L->ret_kind) {
    case SF_RET_REGS:
        if (L->ret_widen == 1) {
            int64_t v = L->ret_size == 1 ? (int8_t)c.ret[0] : L->ret_size == 2 ? (int16_t)c.ret[0] : (int32_t)c.ret[0];
            memcpy(ret, &v, 8);
        } else if (L->ret_widen == 2) {
            uint64_t v = L->ret_size == 1 ? (uint8_t)c.ret[0] : L->ret_size == 2 ? (uint16_t)c.ret[0] : (uint32_t)c.ret[0];
            memcpy(ret, &v, 8);
        } else {
            memcpy(ret, (char *)c.ret + L->ret_offset, L->ret_size);
        }
        break;
    case SF_RET_SPLIT:
        memcpy(ret, &c.ret[L->ret_reg0], 8);
        memcpy((char *)ret + 8, &c.ret[L->ret_reg1], L->ret_size - 8);
        break;
    case SF_RET_X87: memcpy(ret, c.ret, 16); break;
    default: break;
    }
}
