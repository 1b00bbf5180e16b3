/* The exported dlsym. glibc's dlsym(RTLD_NEXT) searches after the module that CALLED it,
 * found from its return address; a C wrapper would make that the shim. So the entry is a
 * few instructions that, for RTLD_NEXT and a name the shim does not wrap, jump to the
 * real dlsym with the caller's return address still on the stack. Everything else goes
 * to culeak_dlsym_lookup (resolve.c). x86-64 System V. */

__asm__(".text\n"
        ".globl dlsym\n"
        ".type dlsym, @function\n"
        "dlsym:\n"
        "    endbr64\n"
        "    cmpq $-1, %rdi\n"              /* RTLD_NEXT is (void *)-1 */
        "    jne culeak_dlsym_lookup\n"
        "    pushq %rdi\n"
        "    pushq %rsi\n"
        "    subq $8, %rsp\n"               /* 16-byte alignment at the call */
        "    movq %rsi, %rdi\n"
        "    call culeak_dlsym_next_target\n"
        "    addq $8, %rsp\n"
        "    popq %rsi\n"
        "    popq %rdi\n"
        "    testq %rax, %rax\n"
        "    jz culeak_dlsym_lookup\n"
        "    jmp *%rax\n"
        ".size dlsym, .-dlsym\n");
