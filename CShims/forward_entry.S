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

    .text
    .globl  sf_msgForward
    .type   sf_msgForward, @function
    .p2align 4
sf_msgForward:
    .cfi_startproc
    pushq   %rbp
    .cfi_def_cfa_offset 16
    .cfi_offset %rbp, -16
    movq    %rsp, %rbp
    .cfi_def_cfa_register %rbp
    subq    $192, %rsp              /* 7 words + 8 xmm registers; keeps 16-byte alignment */
    movq    %rdi, 0(%rsp)
    movq    %rsi, 8(%rsp)
    movq    %rdx, 16(%rsp)
    movq    %rcx, 24(%rsp)
    movq    %r8, 32(%rsp)
    movq    %r9, 40(%rsp)
    movq    %rax, 48(%rsp)          /* vector-register count of a variadic call */
    movdqa  %xmm0, 64(%rsp)
    movdqa  %xmm1, 80(%rsp)
    movdqa  %xmm2, 96(%rsp)
    movdqa  %xmm3, 112(%rsp)
    movdqa  %xmm4, 128(%rsp)
    movdqa  %xmm5, 144(%rsp)
    movdqa  %xmm6, 160(%rsp)
    movdqa  %xmm7, 176(%rsp)
    /* rdi, rsi, rdx are still the first three words: (self, _cmd, …) or (sret, self, _cmd). */
    call    sf_forward_entry_target@PLT
    movq    %rax, %r11
    movq    0(%rsp), %rdi
    movq    8(%rsp), %rsi
    movq    16(%rsp), %rdx
    movq    24(%rsp), %rcx
    movq    32(%rsp), %r8
    movq    40(%rsp), %r9
    movq    48(%rsp), %rax
    movdqa  64(%rsp), %xmm0
    movdqa  80(%rsp), %xmm1
    movdqa  96(%rsp), %xmm2
    movdqa  112(%rsp), %xmm3
    movdqa  128(%rsp), %xmm4
    movdqa  144(%rsp), %xmm5
    movdqa  160(%rsp), %xmm6
    movdqa  176(%rsp), %xmm7
    movq    %rbp, %rsp
    popq    %rbp
    .cfi_def_cfa %rsp, 8
    jmpq    *%r11
    .cfi_endproc
    .size   sf_msgForward, .-sf_msgForward

/* What a call gets when no signature is known: zero in every return register. */
    .globl  sf_forward_zero_return
    .hidden sf_forward_zero_return
    .type   sf_forward_zero_return, @function
    .p2align 4
sf_forward_zero_return:
    .cfi_startproc
    xorl    %eax, %eax
    xorl    %edx, %edx
    pxor    %xmm0, %xmm0
    pxor    %xmm1, %xmm1
    ret
    .cfi_endproc
    .size   sf_forward_zero_return, .-sf_forward_zero_return

/* The same for a call that returns through memory: rax holds the caller's buffer. */
    .globl  sf_forward_zero_return_stret
    .hidden sf_forward_zero_return_stret
    .type   sf_forward_zero_return_stret, @function
    .p2align 4
sf_forward_zero_return_stret:
    .cfi_startproc
    movq    %rdi, %rax
    ret
    .cfi_endproc
    .size   sf_forward_zero_return_stret, .-sf_forward_zero_return_stret

#endif

    .section .note.GNU-stack, "", @progbits
