// int fx_call_keeping_registers(struct fx_call *call): calls call->imp(obj, sel, args[0..2])
// with marker values in %rbx and %r12-%r15, stores the result, and returns 1 when every
// callee-saved register (those five and %rbp) came back unchanged, else 0. C callers of an
// IMP rely on that; a trampoline thunk that loads a Swift closure's context into %r13 or
// expects an error in %r12 must put them back.
#if defined(__x86_64__) && defined(__linux__)
    .text
    .globl  fx_call_keeping_registers
    .type   fx_call_keeping_registers, @function
    .p2align 4
fx_call_keeping_registers:
    .cfi_startproc
    pushq   %rbp
    .cfi_def_cfa_offset 16
    .cfi_offset %rbp, -16
    movq    %rsp, %rbp
    .cfi_def_cfa_register %rbp
    pushq   %rbx
    pushq   %r12
    pushq   %r13
    pushq   %r14
    pushq   %r15
    .cfi_offset %rbx, -24
    .cfi_offset %r12, -32
    .cfi_offset %r13, -40
    .cfi_offset %r14, -48
    .cfi_offset %r15, -56
    pushq   %rdi
    movq    %rdi, %rax
    movq    8(%rax), %rdi
    movq    16(%rax), %rsi
    movq    24(%rax), %rdx
    movq    32(%rax), %rcx
    movq    40(%rax), %r8
    movabsq $0x5f5f5f5f00000011, %rbx
    movabsq $0x5f5f5f5f00000012, %r12
    movabsq $0x5f5f5f5f00000013, %r13
    movabsq $0x5f5f5f5f00000014, %r14
    movabsq $0x5f5f5f5f00000015, %r15
    callq   *(%rax)
    popq    %rdi
    movq    %rax, 48(%rdi)
    xorl    %eax, %eax
    leaq    40(%rsp), %rdx
    cmpq    %rdx, %rbp
    jne     1f
    movabsq $0x5f5f5f5f00000011, %rdx
    cmpq    %rdx, %rbx
    jne     1f
    movabsq $0x5f5f5f5f00000012, %rdx
    cmpq    %rdx, %r12
    jne     1f
    movabsq $0x5f5f5f5f00000013, %rdx
    cmpq    %rdx, %r13
    jne     1f
    movabsq $0x5f5f5f5f00000014, %rdx
    cmpq    %rdx, %r14
    jne     1f
    movabsq $0x5f5f5f5f00000015, %rdx
    cmpq    %rdx, %r15
    jne     1f
    movl    $1, %eax
1:
    movq    -8(%rbp), %rbx
    movq    -16(%rbp), %r12
    movq    -24(%rbp), %r13
    movq    -32(%rbp), %r14
    movq    -40(%rbp), %r15
    movq    %rbp, %rsp
    popq    %rbp
    .cfi_def_cfa %rsp, 8
    ret
    .cfi_endproc
    .size   fx_call_keeping_registers, .-fx_call_keeping_registers
#endif
    .section .note.GNU-stack,"",@progbits
