/* One system call made with known values in every register class the job asked for, and
 * every register stored right after it (tests/e2e/c/attach_state.c compares them): the
 * general registers the kernel keeps across a system call, x87's eight registers and its
 * control word, MXCSR, YMM0-15 (AVX), ZMM0-31 and k0-7 (AVX-512), eight AMX tiles.
 *
 * long guarded_syscall(const long args[7], const uint8_t *in, uint8_t *out, long flags)
 *   args: nr, then six arguments; flags: 1 AVX, 2 AVX-512, 4 AMX. Layout of in and out:
 *   0 x87 st0-st7 (10 bytes each), 80 FCW, 84 MXCSR, 96 rbx rbp r12 r13 r14 r15, 144 rdi
 *   rsi rdx r10 r8 r9, 192 ymm0-15, 704 zmm0-31, 2752 k0-7 (8 bytes each, 16 bits used),
 *   2816 the tile configuration, 2880 tmm0-7 (16 rows of 64 bytes each). */
        .intel_syntax noprefix
        .text
        .globl guarded_syscall
        .type guarded_syscall, @function
guarded_syscall:
        push rbp
        push rbx
        push r12
        push r13
        push r14
        push r15
        sub rsp, 16
        fnstcw [rsp]            /* the caller's control words, given back at the end */
        stmxcsr [rsp + 4]
        push rdx                /* out */
        push rcx                /* flags */

        fninit
        fld tbyte ptr [rsi + 70]
        fld tbyte ptr [rsi + 60]
        fld tbyte ptr [rsi + 50]
        fld tbyte ptr [rsi + 40]
        fld tbyte ptr [rsi + 30]
        fld tbyte ptr [rsi + 20]
        fld tbyte ptr [rsi + 10]
        fld tbyte ptr [rsi + 0]
        fldcw [rsi + 80]
        ldmxcsr [rsi + 84]

        test rcx, 2
        jnz 2f
        test rcx, 1
        jz 4f
        vmovdqu ymm0, [rsi + 192 + 0 * 32]
        vmovdqu ymm1, [rsi + 192 + 1 * 32]
        vmovdqu ymm2, [rsi + 192 + 2 * 32]
        vmovdqu ymm3, [rsi + 192 + 3 * 32]
        vmovdqu ymm4, [rsi + 192 + 4 * 32]
        vmovdqu ymm5, [rsi + 192 + 5 * 32]
        vmovdqu ymm6, [rsi + 192 + 6 * 32]
        vmovdqu ymm7, [rsi + 192 + 7 * 32]
        vmovdqu ymm8, [rsi + 192 + 8 * 32]
        vmovdqu ymm9, [rsi + 192 + 9 * 32]
        vmovdqu ymm10, [rsi + 192 + 10 * 32]
        vmovdqu ymm11, [rsi + 192 + 11 * 32]
        vmovdqu ymm12, [rsi + 192 + 12 * 32]
        vmovdqu ymm13, [rsi + 192 + 13 * 32]
        vmovdqu ymm14, [rsi + 192 + 14 * 32]
        vmovdqu ymm15, [rsi + 192 + 15 * 32]
        jmp 4f
2:      vmovdqu64 zmm0, [rsi + 704 + 0 * 64]
        vmovdqu64 zmm1, [rsi + 704 + 1 * 64]
        vmovdqu64 zmm2, [rsi + 704 + 2 * 64]
        vmovdqu64 zmm3, [rsi + 704 + 3 * 64]
        vmovdqu64 zmm4, [rsi + 704 + 4 * 64]
        vmovdqu64 zmm5, [rsi + 704 + 5 * 64]
        vmovdqu64 zmm6, [rsi + 704 + 6 * 64]
        vmovdqu64 zmm7, [rsi + 704 + 7 * 64]
        vmovdqu64 zmm8, [rsi + 704 + 8 * 64]
        vmovdqu64 zmm9, [rsi + 704 + 9 * 64]
        vmovdqu64 zmm10, [rsi + 704 + 10 * 64]
        vmovdqu64 zmm11, [rsi + 704 + 11 * 64]
        vmovdqu64 zmm12, [rsi + 704 + 12 * 64]
        vmovdqu64 zmm13, [rsi + 704 + 13 * 64]
        vmovdqu64 zmm14, [rsi + 704 + 14 * 64]
        vmovdqu64 zmm15, [rsi + 704 + 15 * 64]
        vmovdqu64 zmm16, [rsi + 704 + 16 * 64]
        vmovdqu64 zmm17, [rsi + 704 + 17 * 64]
        vmovdqu64 zmm18, [rsi + 704 + 18 * 64]
        vmovdqu64 zmm19, [rsi + 704 + 19 * 64]
        vmovdqu64 zmm20, [rsi + 704 + 20 * 64]
        vmovdqu64 zmm21, [rsi + 704 + 21 * 64]
        vmovdqu64 zmm22, [rsi + 704 + 22 * 64]
        vmovdqu64 zmm23, [rsi + 704 + 23 * 64]
        vmovdqu64 zmm24, [rsi + 704 + 24 * 64]
        vmovdqu64 zmm25, [rsi + 704 + 25 * 64]
        vmovdqu64 zmm26, [rsi + 704 + 26 * 64]
        vmovdqu64 zmm27, [rsi + 704 + 27 * 64]
        vmovdqu64 zmm28, [rsi + 704 + 28 * 64]
        vmovdqu64 zmm29, [rsi + 704 + 29 * 64]
        vmovdqu64 zmm30, [rsi + 704 + 30 * 64]
        vmovdqu64 zmm31, [rsi + 704 + 31 * 64]
        kmovw k0, word ptr [rsi + 2752 + 0 * 8]
        kmovw k1, word ptr [rsi + 2752 + 1 * 8]
        kmovw k2, word ptr [rsi + 2752 + 2 * 8]
        kmovw k3, word ptr [rsi + 2752 + 3 * 8]
        kmovw k4, word ptr [rsi + 2752 + 4 * 8]
        kmovw k5, word ptr [rsi + 2752 + 5 * 8]
        kmovw k6, word ptr [rsi + 2752 + 6 * 8]
        kmovw k7, word ptr [rsi + 2752 + 7 * 8]
4:      test rcx, 4
        jz 5f
        ldtilecfg [rsi + 2816]
        mov r11, 64
        lea rax, [rsi + 2880 + 0 * 1024]
        tileloadd tmm0, [rax + r11 * 1]
        lea rax, [rsi + 2880 + 1 * 1024]
        tileloadd tmm1, [rax + r11 * 1]
        lea rax, [rsi + 2880 + 2 * 1024]
        tileloadd tmm2, [rax + r11 * 1]
        lea rax, [rsi + 2880 + 3 * 1024]
        tileloadd tmm3, [rax + r11 * 1]
        lea rax, [rsi + 2880 + 4 * 1024]
        tileloadd tmm4, [rax + r11 * 1]
        lea rax, [rsi + 2880 + 5 * 1024]
        tileloadd tmm5, [rax + r11 * 1]
        lea rax, [rsi + 2880 + 6 * 1024]
        tileloadd tmm6, [rax + r11 * 1]
        lea rax, [rsi + 2880 + 7 * 1024]
        tileloadd tmm7, [rax + r11 * 1]

5:      mov rbx, [rsi + 96]
        mov rbp, [rsi + 104]
        mov r12, [rsi + 112]
        mov r13, [rsi + 120]
        mov r14, [rsi + 128]
        mov r15, [rsi + 136]
        mov rax, [rdi]
        mov rsi, [rdi + 16]
        mov rdx, [rdi + 24]
        mov r10, [rdi + 32]
        mov r8, [rdi + 40]
        mov r9, [rdi + 48]
        mov rdi, [rdi + 8]
        syscall

        push rax                /* stack: result, flags, out */
        push rdi
        mov rdi, [rsp + 24]
        mov [rdi + 96], rbx
        mov [rdi + 104], rbp
        mov [rdi + 112], r12
        mov [rdi + 120], r13
        mov [rdi + 128], r14
        mov [rdi + 136], r15
        pop rax
        mov [rdi + 144], rax
        mov [rdi + 152], rsi
        mov [rdi + 160], rdx
        mov [rdi + 168], r10
        mov [rdi + 176], r8
        mov [rdi + 184], r9
        pop rax                 /* the result */
        pop rcx                 /* flags */
        pop rdx                 /* out */
        fnstcw [rdi + 80]
        stmxcsr [rdi + 84]
        fstp tbyte ptr [rdi + 0]
        fstp tbyte ptr [rdi + 10]
        fstp tbyte ptr [rdi + 20]
        fstp tbyte ptr [rdi + 30]
        fstp tbyte ptr [rdi + 40]
        fstp tbyte ptr [rdi + 50]
        fstp tbyte ptr [rdi + 60]
        fstp tbyte ptr [rdi + 70]

        test rcx, 2
        jnz 2f
        test rcx, 1
        jz 4f
        vmovdqu [rdi + 192 + 0 * 32], ymm0
        vmovdqu [rdi + 192 + 1 * 32], ymm1
        vmovdqu [rdi + 192 + 2 * 32], ymm2
        vmovdqu [rdi + 192 + 3 * 32], ymm3
        vmovdqu [rdi + 192 + 4 * 32], ymm4
        vmovdqu [rdi + 192 + 5 * 32], ymm5
        vmovdqu [rdi + 192 + 6 * 32], ymm6
        vmovdqu [rdi + 192 + 7 * 32], ymm7
        vmovdqu [rdi + 192 + 8 * 32], ymm8
        vmovdqu [rdi + 192 + 9 * 32], ymm9
        vmovdqu [rdi + 192 + 10 * 32], ymm10
        vmovdqu [rdi + 192 + 11 * 32], ymm11
        vmovdqu [rdi + 192 + 12 * 32], ymm12
        vmovdqu [rdi + 192 + 13 * 32], ymm13
        vmovdqu [rdi + 192 + 14 * 32], ymm14
        vmovdqu [rdi + 192 + 15 * 32], ymm15
        jmp 4f
2:      vmovdqu64 [rdi + 704 + 0 * 64], zmm0
        vmovdqu64 [rdi + 704 + 1 * 64], zmm1
        vmovdqu64 [rdi + 704 + 2 * 64], zmm2
        vmovdqu64 [rdi + 704 + 3 * 64], zmm3
        vmovdqu64 [rdi + 704 + 4 * 64], zmm4
        vmovdqu64 [rdi + 704 + 5 * 64], zmm5
        vmovdqu64 [rdi + 704 + 6 * 64], zmm6
        vmovdqu64 [rdi + 704 + 7 * 64], zmm7
        vmovdqu64 [rdi + 704 + 8 * 64], zmm8
        vmovdqu64 [rdi + 704 + 9 * 64], zmm9
        vmovdqu64 [rdi + 704 + 10 * 64], zmm10
        vmovdqu64 [rdi + 704 + 11 * 64], zmm11
        vmovdqu64 [rdi + 704 + 12 * 64], zmm12
        vmovdqu64 [rdi + 704 + 13 * 64], zmm13
        vmovdqu64 [rdi + 704 + 14 * 64], zmm14
        vmovdqu64 [rdi + 704 + 15 * 64], zmm15
        vmovdqu64 [rdi + 704 + 16 * 64], zmm16
        vmovdqu64 [rdi + 704 + 17 * 64], zmm17
        vmovdqu64 [rdi + 704 + 18 * 64], zmm18
        vmovdqu64 [rdi + 704 + 19 * 64], zmm19
        vmovdqu64 [rdi + 704 + 20 * 64], zmm20
        vmovdqu64 [rdi + 704 + 21 * 64], zmm21
        vmovdqu64 [rdi + 704 + 22 * 64], zmm22
        vmovdqu64 [rdi + 704 + 23 * 64], zmm23
        vmovdqu64 [rdi + 704 + 24 * 64], zmm24
        vmovdqu64 [rdi + 704 + 25 * 64], zmm25
        vmovdqu64 [rdi + 704 + 26 * 64], zmm26
        vmovdqu64 [rdi + 704 + 27 * 64], zmm27
        vmovdqu64 [rdi + 704 + 28 * 64], zmm28
        vmovdqu64 [rdi + 704 + 29 * 64], zmm29
        vmovdqu64 [rdi + 704 + 30 * 64], zmm30
        vmovdqu64 [rdi + 704 + 31 * 64], zmm31
        kmovw word ptr [rdi + 2752 + 0 * 8], k0
        kmovw word ptr [rdi + 2752 + 1 * 8], k1
        kmovw word ptr [rdi + 2752 + 2 * 8], k2
        kmovw word ptr [rdi + 2752 + 3 * 8], k3
        kmovw word ptr [rdi + 2752 + 4 * 8], k4
        kmovw word ptr [rdi + 2752 + 5 * 8], k5
        kmovw word ptr [rdi + 2752 + 6 * 8], k6
        kmovw word ptr [rdi + 2752 + 7 * 8], k7
4:      test rcx, 4
        jz 5f
        mov r11, 64
        lea rdx, [rdi + 2880 + 0 * 1024]
        tilestored [rdx + r11 * 1], tmm0
        lea rdx, [rdi + 2880 + 1 * 1024]
        tilestored [rdx + r11 * 1], tmm1
        lea rdx, [rdi + 2880 + 2 * 1024]
        tilestored [rdx + r11 * 1], tmm2
        lea rdx, [rdi + 2880 + 3 * 1024]
        tilestored [rdx + r11 * 1], tmm3
        lea rdx, [rdi + 2880 + 4 * 1024]
        tilestored [rdx + r11 * 1], tmm4
        lea rdx, [rdi + 2880 + 5 * 1024]
        tilestored [rdx + r11 * 1], tmm5
        lea rdx, [rdi + 2880 + 6 * 1024]
        tilestored [rdx + r11 * 1], tmm6
        lea rdx, [rdi + 2880 + 7 * 1024]
        tilestored [rdx + r11 * 1], tmm7
        sttilecfg [rdi + 2816]
        tilerelease
5:      test rcx, 3
        jz 6f
        vzeroupper
6:      fldcw [rsp]
        ldmxcsr [rsp + 4]
        add rsp, 16
        pop r15
        pop r14
        pop r13
        pop r12
        pop rbx
        pop rbp
        ret
        .size guarded_syscall, . - guarded_syscall
        .section .note.GNU-stack, "", @progbits
