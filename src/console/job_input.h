/* Typing into the job: `input` (or Ctrl-]) hands the keyboard to the job until Ctrl-];
 * while the console has the keyboard, nothing is written to the job's terminal, so a job
 * reading its standard input waits. */
#ifndef CULEAK_CONSOLE_JOB_INPUT_H
#define CULEAK_CONSOLE_JOB_INPUT_H

struct console;

#define KEY_HANDBACK 0x1d /* Ctrl-], telnet's escape */

/* input: the keyboard goes to the job (a live job that still runs). */
/* A key (screen.h's SK_*) while the job may have the keyboard: 1 when it was used up
 * (written to the job, or Ctrl-] toggling who has the keyboard). */
int job_input_key(struct console *c, int sk, const char *utf8, int nav);
/* The job ended: the keyboard comes back. */
void job_input_end(struct console *c);

#endif
