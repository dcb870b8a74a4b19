/*
 * sf_msgForward: the forwarding IMP (objc4's _objc_msgForward), for x86-64 System V.
 *
 * It does not know the signature of the call it receives, so it saves every argument
 * register, asks sf_forward_entry_target (forward.c) for the code that handles this
 * receiver and selector with the signature the forwarding path learns, restores the
 * registers and the stack exactly as they were at the call, and jumps there: stack
 * arguments and the return address are untouched, so the target sees the original call.
 */
#if defined(__x86_64__) && defined(__ELF__)
#include "internal/sf_asm.h"

SF_FUNCTION sf_msgForward, default
    SF_FRAME_PUSH
    subq    $192, %rsp              /* 7 words + 8 xmm registers; keeps 16-byte alignment */
    SF_STORE_INT_ARGS %rsp
    movq    %rax, 48(%rsp)          /* vector-register count of a variadic call */
    SF_STORE_XMM_ARGS movdqa, %rsp, 64, 16
    /* rdi, rsi, rdx are still the first three words: (self, _cmd, …) or (sret, self, _cmd). */
    call    sf_forward_entry_target@PLT
    movq    %rax, %r11
    SF_LOAD_INT_ARGS %rsp
    movq    48(%rsp), %rax
    SF_LOAD_XMM_ARGS movdqa, %rsp, 64, 16
    SF_FRAME_POP
    jmpq    *%r11
SF_END_FUNCTION sf_msgForward

/* What a call gets when no signature is known: zero in every return register. */
SF_FUNCTION sf_forward_zero_return
    xorl    %eax, %eax
    xorl    %edx, %edx
    pxor    %xmm0, %xmm0
    pxor    %xmm1, %xmm1
    ret
SF_END_FUNCTION sf_forward_zero_return

/* The same for a call that returns through memory: rax holds the caller's buffer. */
SF_FUNCTION sf_forward_zero_return_stret
    movq    %rdi, %rax
    ret
SF_END_FUNCTION sf_forward_zero_return_stret

#endif

    .section .note.GNU-stack, "", @progbits
