#include <culeak.h>
static char arena[1 << 16];
static void *take(unsigned off, unsigned n)
{
    void *p = arena + off;
    culeak_alloc(p, n); /* USER-POOL-TAKE */
    return p;
}
int main(void)
{
    for (unsigned i = 0; i < 4; i++)
        take(i * 1024, 1000); /* USER-POOL-LOOP */
    culeak_mark("after");
    return 0;
}
