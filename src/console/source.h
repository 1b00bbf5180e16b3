/* Where the console's processes come from: recordings (source_open.c), a job it launches
 * (source_job.c) or a process it attaches to (source_attach.c). console_main opens one,
 * starts it once the screen is up, and closes it at the end. */
#ifndef CULEAK_CONSOLE_SOURCE_H
#define CULEAK_CONSOLE_SOURCE_H

struct console;

struct console_source {
    /* Before the screen opens: 0, or the exit status, the reason said on stderr. */
    int (*open)(struct console *c);
    /* Once the screen is up and the startup commands ran. */
    void (*start)(struct console *c);
    /* After the screen closed and the rings were let go: culeak's exit status. */
    int (*close)(struct console *c);
};

extern const struct console_source console_recordings, console_launched, console_attached;

/* A live session's rings and the model's observer, for a launched job and an attached
 * process: 0, or the exit status, said on stderr. */
int console_live_open(struct console *c);

#endif
