/*
 * SelectorForwarding — assembler macros shared by forward_entry.S and tramp_x86_64.S
 * (x86-64 System V): function framing and the argument registers' spill and reload, so the
 * register order and the frame prologue are written once.
 */
#ifndef SF_ASM_H
#define SF_ASM_H

/* Opens a function in .text: global (hidden unless `visibility` is default), 16-byte aligned. */
.macro SF_FUNCTION name, visibility=hidden
    .text
    .globl  \name
    .ifc \visibility, hidden
    .hidden \name
    .endif
    .type   \name, @function
    .p2align 4
\name:
    .cfi_startproc
.endm

.macro SF_END_FUNCTION name
    .cfi_endproc
    .size   \name, .-\name
.endm

/* %rbp frame: the CFA follows %rbp until SF_FRAME_POP. */
.macro SF_FRAME_PUSH
    pushq   %rbp
    .cfi_def_cfa_offset 16
    .cfi_offset %rbp, -16
    movq    %rsp, %rbp
    .cfi_def_cfa_register %rbp
.endm

.macro SF_FRAME_POP
    leave
    .cfi_def_cfa %rsp, 8
.endm

/* The six integer argument registers, in order, at 0..40(base). */
.macro SF_STORE_INT_ARGS base
    .irp reg, rdi, rsi, rdx, rcx, r8, r9
    movq    %\reg, (.Lsf_int_arg_\reg)(\base)
    .endr
.endm

.macro SF_LOAD_INT_ARGS base
    .irp reg, rdi, rsi, rdx, rcx, r8, r9
    movq    (.Lsf_int_arg_\reg)(\base), %\reg
    .endr
.endm

    .set .Lsf_int_arg_rdi, 0
    .set .Lsf_int_arg_rsi, 8
    .set .Lsf_int_arg_rdx, 16
    .set .Lsf_int_arg_rcx, 24
    .set .Lsf_int_arg_r8, 32
    .set .Lsf_int_arg_r9, 40

/* %xmm0-7 at offset, offset + stride, …(base); `insn` is movsd (8 bytes) or movdqa (16). */
.macro SF_STORE_XMM_ARGS insn, base, offset, stride
    .irp n, 0, 1, 2, 3, 4, 5, 6, 7
    \insn   %xmm\n, (\offset + \n * \stride)(\base)
    .endr
.endm

.macro SF_LOAD_XMM_ARGS insn, base, offset, stride
    .irp n, 0, 1, 2, 3, 4, 5, 6, 7
    \insn   (\offset + \n * \stride)(\base), %xmm\n
    .endr
.endm

#endif
