// Trampoline template and entries for x86-64 System V (see include/sf_tramp.h).
#if defined(__x86_64__) && defined(__linux__)
#include "internal/sf_asm.h"

// Pages of 256 identical 16-byte slots, one page per register the context goes to: %r10
// (for the entries) or the first integer argument register a signature leaves free (for the
// register-class thunks, which take the context as one more argument). Copied to a fresh page
// that becomes read+execute; the page after the copy holds each slot's words, so the
// displacements reach slot + 4096 (context) and slot + 4104 (target).
.macro SLOTS reg
    .rept 256
    movq    4089(%rip), \reg           // rip = slot + 7
    jmpq    *4091(%rip)                 // rip = slot + 13
    int3
    int3
    int3
    .endr
.endm

// Pages of slots that drop the selector (the second argument) by moving the n arguments after
// it down one register, then jump through their target word (slot + 4104): the entry of a
// Swift closure that captures nothing, called with no thunk in between.
.macro DROP_SLOTS n
    .rept 256
    .if \n >= 1
    movq    %rdx, %rsi
    .endif
    .if \n >= 2
    movq    %rcx, %rdx
    .endif
    .if \n >= 3
    movq    %r8, %rcx
    .endif
    jmpq    *(4098 - 3 * \n)(%rip)     // rip = slot + 3n + 6
    .fill   10 - 3 * \n, 1, 0xcc
    .endr
.endm

    .section .rodata
    .p2align 12
    .globl sf_tramp_templates
    .hidden sf_tramp_templates
sf_tramp_templates:
    SLOTS %r10
    SLOTS %rdx
    SLOTS %rcx
    SLOTS %r8
    SLOTS %r9
    DROP_SLOTS 0
    DROP_SLOTS 1
    DROP_SLOTS 2
    DROP_SLOTS 3
    .size sf_tramp_templates, 9 * 4096

// Spills the argument registers to a struct sf_tramp_frame (304 bytes) and calls
// ((sf_tramp_handler *)%r10)[0](%r10, frame); returns the frame's ret words.
SF_FUNCTION sf_tramp_entry
    SF_FRAME_PUSH
    subq    $304, %rsp
    SF_STORE_INT_ARGS %rsp
    SF_STORE_XMM_ARGS movsd, %rsp, 48, 8
    movzbl  %al, %eax
    movq    %rax, 144(%rsp)
    leaq    16(%rbp), %rax
    movq    %rax, 152(%rsp)
    movq    %r10, %rdi
    movq    %rsp, %rsi
    callq   *(%r10)
    cmpq    $0x8700, 144(%rsp)          // SF_FRAME_RET_X87: a long double return, in %st(0)
    jne     1f
    fldt    112(%rsp)
1:
    movq    112(%rsp), %rax
    movq    120(%rsp), %rdx
    movsd   128(%rsp), %xmm0
    movsd   136(%rsp), %xmm1
    SF_FRAME_POP
    ret
SF_END_FUNCTION sf_tramp_entry

// void sf_tramp_invoke(struct sf_tramp_call *call): copies call->stack_bytes of stack
// arguments, loads the argument registers and %al, calls call->fn, stores rax rdx xmm0 xmm1.
SF_FUNCTION sf_tramp_invoke
    SF_FRAME_PUSH
    pushq   %rbx
    .cfi_offset %rbx, -24
    subq    $8, %rsp
    movq    %rdi, %rbx
    movq    160(%rbx), %rcx
    subq    %rcx, %rsp
    movq    152(%rbx), %rsi
    movq    %rsp, %rdi
    shrq    $3, %rcx
    rep movsq
    SF_LOAD_XMM_ARGS movsd, %rbx, 48, 8
    SF_LOAD_INT_ARGS %rbx
    movq    144(%rbx), %rax
    callq   *168(%rbx)
    movq    %rax, 112(%rbx)
    movq    %rdx, 120(%rbx)
    movsd   %xmm0, 128(%rbx)
    movsd   %xmm1, 136(%rbx)
    cmpq    $0, 176(%rbx)               // ret_x87: pop the long double into ret[0..1]
    je      1f
    movq    $0, 120(%rbx)
    fstpt   112(%rbx)
1:
    movq    -8(%rbp), %rbx
    SF_FRAME_POP
    ret
SF_END_FUNCTION sf_tramp_invoke

// Non-throwing closures of `Int` arguments returning `Int` (0-3 arguments): the slot puts a
// struct sf_swift_closure {function, context} in the register after the arguments. Swift's
// convention wants the context in %r13 (callee-saved for our C caller, so kept) and the
// arguments without the selector; nothing can be thrown, so nothing is checked afterwards.
.macro INT_NOTHROW name, closure, shift
SF_FUNCTION \name
    pushq   %r13
    .cfi_adjust_cfa_offset 8
    .cfi_offset %r13, -16
    movq    8(\closure), %r13
    \shift
    callq   *(\closure)
    popq    %r13
    .cfi_adjust_cfa_offset -8
    .cfi_restore %r13
    ret
SF_END_FUNCTION \name
.endm

.macro SHIFT0
.endm
.macro SHIFT1
    movq    %rdx, %rsi
.endm
.macro SHIFT2
    movq    %rdx, %rsi
    movq    %rcx, %rdx
.endm
.macro SHIFT3
    movq    %rdx, %rsi
    movq    %rcx, %rdx
    movq    %r8, %rcx
.endm

    INT_NOTHROW sf_tramp_int_nothrow0, %rdx, SHIFT0
    INT_NOTHROW sf_tramp_int_nothrow1, %rcx, SHIFT1
    INT_NOTHROW sf_tramp_int_nothrow2, %r8, SHIFT2
    INT_NOTHROW sf_tramp_int_nothrow3, %r9, SHIFT3

#endif
    .section .note.GNU-stack,"",@progbits
