// Trampoline template and entries for x86-64 System V (see include/sf_tramp.h).
#if defined(__x86_64__) && defined(__linux__)

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
    .size sf_tramp_templates, 5 * 4096

    .text
// Spills the argument registers to a struct sf_tramp_frame (304 bytes) and calls
// ((sf_tramp_handler *)%r10)[0](%r10, frame); returns the frame's ret words.
    .p2align 4
    .globl sf_tramp_entry
    .hidden sf_tramp_entry
    .type sf_tramp_entry, @function
sf_tramp_entry:
    .cfi_startproc
    pushq   %rbp
    .cfi_def_cfa_offset 16
    .cfi_offset %rbp, -16
    movq    %rsp, %rbp
    .cfi_def_cfa_register %rbp
    subq    $304, %rsp
    movq    %rdi, 0(%rsp)
    movq    %rsi, 8(%rsp)
    movq    %rdx, 16(%rsp)
    movq    %rcx, 24(%rsp)
    movq    %r8, 32(%rsp)
    movq    %r9, 40(%rsp)
    movsd   %xmm0, 48(%rsp)
    movsd   %xmm1, 56(%rsp)
    movsd   %xmm2, 64(%rsp)
    movsd   %xmm3, 72(%rsp)
    movsd   %xmm4, 80(%rsp)
    movsd   %xmm5, 88(%rsp)
    movsd   %xmm6, 96(%rsp)
    movsd   %xmm7, 104(%rsp)
    movzbl  %al, %eax
    movq    %rax, 144(%rsp)
    leaq    16(%rbp), %rax
    movq    %rax, 152(%rsp)
    movq    %r10, %rdi
    movq    %rsp, %rsi
    callq   *(%r10)
    movq    112(%rsp), %rax
    movq    120(%rsp), %rdx
    movsd   128(%rsp), %xmm0
    movsd   136(%rsp), %xmm1
    leave
    .cfi_def_cfa %rsp, 8
    ret
    .cfi_endproc
    .size sf_tramp_entry, .-sf_tramp_entry

// void sf_tramp_invoke(struct sf_tramp_call *call): copies call->stack_bytes of stack
// arguments, loads the argument registers and %al, calls call->fn, stores rax rdx xmm0 xmm1.
    .p2align 4
    .globl sf_tramp_invoke
    .hidden sf_tramp_invoke
    .type sf_tramp_invoke, @function
sf_tramp_invoke:
    .cfi_startproc
    pushq   %rbp
    .cfi_def_cfa_offset 16
    .cfi_offset %rbp, -16
    movq    %rsp, %rbp
    .cfi_def_cfa_register %rbp
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
    movsd   48(%rbx), %xmm0
    movsd   56(%rbx), %xmm1
    movsd   64(%rbx), %xmm2
    movsd   72(%rbx), %xmm3
    movsd   80(%rbx), %xmm4
    movsd   88(%rbx), %xmm5
    movsd   96(%rbx), %xmm6
    movsd   104(%rbx), %xmm7
    movq    0(%rbx), %rdi
    movq    8(%rbx), %rsi
    movq    16(%rbx), %rdx
    movq    24(%rbx), %rcx
    movq    32(%rbx), %r8
    movq    40(%rbx), %r9
    movq    144(%rbx), %rax
    callq   *168(%rbx)
    movq    %rax, 112(%rbx)
    movq    %rdx, 120(%rbx)
    movsd   %xmm0, 128(%rbx)
    movsd   %xmm1, 136(%rbx)
    movq    -8(%rbp), %rbx
    leave
    .cfi_def_cfa %rsp, 8
    ret
    .cfi_endproc
    .size sf_tramp_invoke, .-sf_tramp_invoke

#endif
    .section .note.GNU-stack,"",@progbits
