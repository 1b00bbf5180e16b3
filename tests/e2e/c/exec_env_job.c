/* Execs CHILD BYTES in an environment without culeak's preload and variables:
 *   execle CHILD BYTES   with an environment of its own (PATH only)
 *   unset CHILD BYTES    after removing LD_PRELOAD and every CULEAK_* variable from its
 *                        own environment, with execv */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc != 4)
        return 2;
    if (!strcmp(argv[1], "execle")) {
        char *env[] = {"PATH=/usr/bin:/bin", NULL};
        execle(argv[2], argv[2], argv[3], (char *)NULL, env);
    } else if (!strcmp(argv[1], "unset")) {
        unsetenv("LD_PRELOAD");
        for (int again = 1; again;) {
            again = 0;
            for (char **e = environ; *e; e++)
                if (!strncmp(*e, "CULEAK_", 7)) {
                    char name[256];
                    snprintf(name, sizeof name, "%.*s", (int)strcspn(*e, "="), *e);
                    unsetenv(name);
                    again = 1;
                    break;
                }
        }
        char *args[] = {argv[2], argv[3], NULL};
        execv(argv[2], args);
    }
    perror("exec");
    return 2;
}
