/* The program: three allocations through the "CUDA runtime", on three lines. Prints its
 * load layout and the lines, then the stacks (cudart_fake.c). */
#define _GNU_SOURCE
#include <cuda_runtime.h>
#include <link.h>
#include <stdio.h>

void tail_function(void);

static int print_layout(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    (void)data;
    if (info->dlpi_name && info->dlpi_name[0])
        return 0; /* the main program has an empty name */
    printf("base %lx\n", (unsigned long)info->dlpi_addr);
    for (int i = 0; i < info->dlpi_phnum; i++)
        if (info->dlpi_phdr[i].p_type == PT_LOAD)
            printf("seg %lx %lx\n", (unsigned long)info->dlpi_phdr[i].p_vaddr,
                   (unsigned long)info->dlpi_phdr[i].p_memsz);
    return 1;
}

static __attribute__((noinline)) void user_step(void)
{
    float *out;
    printf("lines %d %d %d\n", __LINE__ + 1, __LINE__ + 2, __LINE__ + 3);
    typed_malloc(&out, 2 << 20);
    typed_malloc(&out, 3 << 20);
    typed_malloc_inline(&out, 4 << 20);
}

int main(void)
{
    dl_iterate_phdr(print_layout, NULL);
    user_step();
    tail_function();
    return 0;
}
