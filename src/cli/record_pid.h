/* culeak record --pid: a recording of a process that is already running. */
#ifndef CULEAK_RECORD_PID_H
#define CULEAK_RECORD_PID_H

#include <sys/types.h>

struct cli_command;
/* Attaches to pid and writes its stream to out until it ends or a signal detaches; the
 * exit status of culeak record (0, or 1 after a message). */
int record_pid(const struct cli_command *cmd, pid_t pid, const char *out, int timeout_s);

#endif
