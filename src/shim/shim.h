/* Internal interfaces of libculeak.so, the preload shim. Each .c file of src/shim has one
 * job; this header is the contract between them. */
#ifndef CULEAK_SHIM_H
#define CULEAK_SHIM_H

#include "common/wire_encode.h"

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define CULEAK_EXPORT __attribute__((visibility("default")))
#define CULEAK_TLS __thread __attribute__((tls_model("initial-exec")))
#define CULEAK_MAX_DEPTH 256
#define CULEAK_DEFAULT_DEPTH 48

/* ---- thread_block.c: the shim's per-thread state ---- */

/* Each is made zeroed at the thread's first need and freed when the thread ends. */
enum culeak_thread_block {
    CULEAK_TB_WALKER,       /* unwind.c: the stack walker */
    CULEAK_TB_TREE_PREFIX,  /* trace_tree.c: the thread's last stack */
    CULEAK_TB_PY_SEEN,      /* pyframes.c: the Python frames of the last walk */
    CULEAK_THREAD_BLOCKS
};
extern CULEAK_TLS void *culeak_thread_blocks[CULEAK_THREAD_BLOCKS];
void *culeak_thread_block_new(enum culeak_thread_block which, size_t size);

/* This thread's block `which` of `size` bytes; NULL when out of memory. */
static inline void *culeak_thread_block(enum culeak_thread_block which, size_t size)
{
    void *p = culeak_thread_blocks[which];
    return p ? p : culeak_thread_block_new(which, size);
}

/* ---- process.c: configuration, lazy start, fork, exit ---- */

enum culeak_state {
    CULEAK_INERT = 0,   /* no ring, no CULEAK_OUTPUT, no attach: pure pass-through */
    CULEAK_IDLE,        /* configured, nothing sent yet (connects at the first event) */
    CULEAK_ACTIVE,      /* stream open, tracing */
    CULEAK_STOPPED,     /* reader gone, setup failed or exited: pass-through */
};

extern int culeak_state;        /* atomic access */
extern unsigned culeak_depth_limit;
extern unsigned culeak_fork_gen; /* bumped in each forked child: invalidates thread caches */
/* CULEAK_FREE_STACKS=1: frees carry their stack, device and context; by default they
 * carry none (nothing reads them: a free ends the allocation at its address). */
extern int culeak_free_stacks;
/* CULEAK_HOLD_AT_START=1 (set by the console for its job): a stream on a socket starts with
 * HOLD_NEW on, so the first allocations wait until the console has said what to watch. */
extern int culeak_hold_at_start;

/* 1 in a process culeak attached to (attach.c): the shim was loaded into it running, and
 * says nothing on the program's stderr (the attaching culeak speaks for it). */
extern int culeak_attached;
/* Makes the shim stream from its next traced call on, in a process it was loaded into
 * while running: "ring:PATH", a ring handed over to the culeak (console, or record --pid)
 * listening at PATH. 0, 1 when a stream is on already (the process is traced), -1 when
 * out of memory or endpoint is no "ring:". */
int culeak_attach_configure(const char *endpoint);
/* In a Python process, has culeak_attach.py run on its main thread (attach_python.c):
 * 0, or -1 with a NOTE saying why not. */
int culeak_attach_python(void);
/* The path of python/NAME beside the shim at path shim: the source tree's python/ next to
 * a build directory, or share/culeak/python of an installed tree (lib/culeak/libculeak.so).
 * 0, or -1 when there is none. */
int culeak_python_file(const char *shim, const char *name, char *out, size_t len);

/* ---- holders_ask.c: who holds the blocks, asked of the job's Python side ---- */

/* CULEAK_HOLDERS=marks: a walk at each mark from the start. */
void culeak_holders_init(void);
/* A mark was recorded (a plain one, or the start of an outermost NVTX range): with walks
 * at marks on, a walk of every tensor at the interpreter's next safe point. */
void culeak_holders_at_mark(void);
/* The console's HOLDERS command (culeak-stream(5)); with the stream's lock held. */
void culeak_holders_command(const uint8_t *payload, size_t len);
/* The flush thread, each tick, with no lock held: queues the console's question, or
 * answers at once why it cannot be (a process without Python). */
void culeak_holders_tick(void);
/* attach_python.c: a HOLDER record (addr 0: the end of a walk, words its kind). */
void culeak_report_holder(uint64_t addr, const char *words);
/* untraced.c: returns once no debugger holds the process (TracerPid 0), or after a
 * minute; the attach's thread waits so before anything it does could leave a trap. */
void culeak_wait_untraced(void);

/* Starts the stream if it is not started yet. Returns 1 when tracing is on. */
int culeak_ensure_started(void);
/* Stops tracing for good; prints `why` as one stderr line unless it is NULL. */
void culeak_stop(const char *why);
/* The calling thread's id, asked of the kernel once per thread (and again in a forked
 * child). */
extern CULEAK_TLS uint32_t culeak_tid_known;
extern CULEAK_TLS unsigned culeak_tid_gen;
uint32_t culeak_tid_ask(void);
static inline uint32_t culeak_tid(void)
{
    if (culeak_tid_known && culeak_tid_gen == __atomic_load_n(&culeak_fork_gen, __ATOMIC_RELAXED))
        return culeak_tid_known;
    return culeak_tid_ask();
}

/* ---- clock.c: the events' clock, CLOCK_MONOTONIC_COARSE ns (the kernel's tick) ---- */
uint64_t culeak_now_ns(void);

/* ---- event.c: one traced call = one event ---- */

/* struct culeak_ev: common/wire_encode.h */
/* Thread-local nesting: culeak_enter() returns 1 for the outermost hooked call of a
 * thread when tracing is on (then culeak_leave() must follow), 0 to pass through. */
int culeak_enter(void);
void culeak_leave(void);
/* Fills device and ctx from the current context (real driver, -1/0 when none). */
void culeak_fill_ctx(struct culeak_ev *e);
/* Before and after every call that may destroy a context: fill_ctx asks the driver for
 * the device again. */
void culeak_ctx_forget(void);
/* Records one event with the caller's stack; may block while the console holds it. */
void culeak_emit(const struct culeak_ev *e);
/* Ends a traced call: records e (made after the real call; a failed allocation gets
 * addr 0) and leaves. */
void culeak_after(struct culeak_ev *e);
/* culeak_after with the stack already captured (ips[0..n), outermost last; tag: its
 * culeak_unwind tag, or 0). */
void culeak_after_stack(struct culeak_ev *e, const uintptr_t *ips, int n, uint64_t tag);
/* A free: begin before the real call, end (records, leaves) after it. */
void culeak_free_begin(const struct culeak_ev *e);
void culeak_free_end(const struct culeak_ev *e);
void culeak_inflight_reset(void);

/* ---- unwind.c ---- */
void culeak_unwind_init(void);
/* Return addresses (minus one) of the program's frames, innermost first, the shim's
 * own frames dropped: libunwind's stack, mostly found by a checked frame-pointer walk.
 * Returns the count (<= max). *tag (tag may be NULL): a number that stands for this
 * stack in this thread: the same tag again is the same stack, frame for frame (the
 * walk found every frame record as it was); 0 when it cannot say. */
int culeak_unwind(uintptr_t *ips, int max, uint64_t *tag);
/* A library was unloaded: what was learnt about return addresses is forgotten. */
void culeak_unwind_forget(void);
/* With CULEAK_UNWIND_CHECK=1: a NOTE saying how many stacks differed from libunwind's. */
void culeak_unwind_check_note(void);

/* ---- pyframes.c: Python frames of the current thread (CPython 3.10-3.13) ---- */
/* 1 when this is a Python process whose frames are captured (decided once; sends a NOTE
 * once when it is a Python process whose frames cannot be read). Once they are off for
 * good and that is said (culeak_py_off), a call is one load. */
extern int culeak_py_off;
int culeak_py_enabled_slow(void);
static inline int culeak_py_enabled(void)
{
    return __atomic_load_n(&culeak_py_off, __ATOMIC_ACQUIRE) ? 0 : culeak_py_enabled_slow();
}
/* ips[0..n): a native stack unwound up to CULEAK_MAX_DEPTH. Replaces the eval-loop frames
 * with the Python frames they run (tagged ips, PYFRAME records sent first), applies the
 * depth limit; returns the new count (<= max). Call without any lock of the shim held. */
int culeak_py_stack(uintptr_t *ips, int n, int max);
/* The same for a short native stack (a pool block's): Python frames the native frames do
 * not place go after them, without looking for the interpreter's module. */
int culeak_py_stack_after(uintptr_t *ips, int n, int max);
void culeak_py_fork_child(void);
/* A new stream in the same process (attached again after a detach): every Python frame
 * is announced again in it. */
void culeak_py_new_stream(void);
/* The calling thread's Python frames as tagged ids (PYFRAME records sent first),
 * innermost first; returns the count (<= max). */
int culeak_py_frames_now(uintptr_t *ids, int max);
/* The tagged id of the autograd backward marker (its PYFRAME sent once per stream). */
uintptr_t culeak_py_backward_marker(void);

/* ---- backward.c: memory made for autograd's backward, charged to the backward() line ---- */
/* ips[0..n): the stack of a thread without Python frames. While Python threads are inside
 * backward() (culeak_backward_enter), appends the marker and the Python frames of that
 * call; returns the new count (<= max). One atomic load when none is. */
int culeak_backward_borrow(uintptr_t *ips, int n, int max);
void culeak_backward_fork_child(void);

/* ---- torch_blocks.c: PyTorch's caching allocator, block by block ---- */
/* An allocation (segment) the shim has just seen, with its native stack: when it comes
 * from libc10_cuda, attaches the block tracker (once). Call without any lock held. */
void culeak_torch_segment(const struct culeak_ev *e, const uintptr_t *ips, int n);
extern int culeak_torch_waiting; /* 1 until the tracker is attached or turned off */
/* Records a pool block's event with a short native stack plus the Python frames
 * (alloc), or no stack (free). Ends the traced call like culeak_after/free_end. */
void culeak_block_event(struct culeak_ev *e);

/* ---- trace_tree.c: (parent, ip) -> id; the caller holds the stream lock ---- */
struct culeak_tree;
struct culeak_tree *culeak_tree_new(void);
/* Interns ips[n-1] (outermost) .. ips[0] (leaf). For each node created, calls
 * emit(arg, id, parent, ip). Returns the leaf id (0: empty), *fresh = leaf is new.
 * tag: culeak_unwind's for these ips (0: none); the thread's last stack interned with
 * the same tag is taken without reading ips. */
uint32_t culeak_tree_intern(struct culeak_tree *t, const uintptr_t *ips, int n, uint64_t tag,
                            void (*emit)(void *, uint32_t, uint32_t, uintptr_t), void *arg,
                            int *fresh);

/* ---- modules.c ---- */
/* A complete MODULES record (header included) in a malloc'd buffer; NULL on failure.
 * Never call with the stream lock held (dl_iterate_phdr takes the loader lock). */
uint8_t *culeak_modules_record(size_t *len);
/* 1 when libraries were loaded or unloaded since the last call (cheap, loader lock only). */
int culeak_modules_changed(void);
/* Moves on whenever the loaded modules may have changed: each module map taken (at start,
 * and when the stream notices a change) and each dlsym on a handle (which follows a
 * dlopen). Reading it costs no lock, unlike dl_iterate_phdr (the loader lock). */
extern unsigned culeak_modules_epoch;
void culeak_modules_touch(void);
void culeak_modules_send_if_changed(void);
/* Text range of the shim itself, for dropping its frames from stacks. */
extern uintptr_t culeak_self_lo, culeak_self_hi;
void culeak_self_range_init(void);

/* ---- stream.c: the buffer, writer, flush thread and console commands ---- */
/* Sets up the stream on fd, a recording just opened (CULEAK_OUTPUT without culeak's
 * reader). t0 is HELLO's monotonic time (the base of the first dt). Returns -1 when out
 * of memory. */
int culeak_stream_open(int fd, uint64_t t0);
struct culeak_ring;
/* Sets up the stream on a ring shared with culeak's reader (mapped, claimed, its path
 * written): records go there and nowhere else. -1 when out of memory. */
int culeak_stream_open_shared(const struct culeak_ring *r, uint64_t t0);
/* Starts the flush thread (after MAGIC, HELLO and MODULES are appended). */
void culeak_stream_start_flusher(void);
/* Appends a complete record (not an EVENT). */
void culeak_stream_append(const uint8_t *rec, size_t len);
/* Appends a NOTE of text[0..len), cut at CULEAK_NOTE_MAX bytes. */
#define CULEAK_NOTE_MAX 1024
void culeak_stream_note(const char *text, size_t len);
/* Encodes an event with its new frames, under the lock; tag: culeak_unwind's for ips
 * (0: none). */
void culeak_stream_event(const struct culeak_ev *e, const uintptr_t *ips, int n, uint64_t tag);
void culeak_stream_mark(const char *label, unsigned flags); /* CULEAK_MARK_PUSH/POP */
void culeak_stream_exit(void);
void culeak_stream_flush(void);
/* The process ends without destructors: appends EXIT with exit_reason (a
 * CULEAK_EXIT_* of wire.h; none when one other than EXEC's was written) and writes what is buffered, from a path
 * that may be a signal handler interrupting the shim itself: gives up when the locks are
 * not free within timeout_ms. */
void culeak_stream_end_abrupt(unsigned exit_reason, int timeout_ms);
/* Forget the parent's stream in a forked child (no locks touched). */
void culeak_stream_reset_child(void);
/* Wakes every thread the console holds (tracing stopped). */
void culeak_stream_release_all(void);
/* 1 when the stream goes to a reader that said it reads no more, or died: an attach may
 * take the process over at once, before the flush thread has seen it. */
int culeak_stream_unread(void);
/* The current stream is no longer the process's (with start_mu held, tracing stopped). */
void culeak_stream_forget(void);
/* Stops tracing if s is still the process's stream (the flush thread of a stream that an
 * attach may have replaced meanwhile). process.c */
void culeak_stop_stream(const void *s, const char *why);
/* Whether s is the process's stream now. */
int culeak_stream_is(const void *s);

/* ---- sink.c: the stream's descriptor, which the program may close or take over ---- */
/* Takes fd (a recording just opened) as the stream's descriptor: moved high,
 * close-on-exec, its identity noted. Returns the descriptor to use. */
int culeak_sink_adopt(int fd);
/* The stream's descriptor if it is still the one opened (a recording taken away is
 * reopened), else -1: the caller must not touch any descriptor then. */
int culeak_sink_fd(void);
/* write/send on the stream's descriptor (-1, EBADF when it is gone); a file size limit
 * makes it fail with EFBIG, never raise SIGXFSZ in the program. */
ssize_t culeak_sink_write(const void *p, size_t n);

/* ---- abrupt_end.c: ends without destructors (_exit, exec, fatal signals) ---- */
/* Installs the flushing handlers of fatal signals the program leaves at their default. */
void culeak_abrupt_end_arm(void);
/* Writes the stream's buffer out with an EXIT record of reason, as _exit does. */
void culeak_abrupt_end(unsigned reason);

/* ---- signal_view.c: the program reads back its own signal dispositions ---- */
struct sigaction;
/* libc's sigaction, past the shim's. */
int culeak_real_sigaction(int sig, const struct sigaction *act, struct sigaction *old);
/* Installs handler for sig where the program left the default action (the program reads
 * the default back): 0, or -1 (its own handler or SIG_IGN there: left alone). */
int culeak_signal_take(int sig, const struct sigaction *handler);

/* ---- exec_env.c: the environment of a program the process execs or spawns ---- */
/* Notes the shim's path and the CULEAK_* variables at load: the job is followed. */
void culeak_exec_env_init(void);
struct culeak_env_room {
    size_t slots, chars; /* pointers and bytes culeak_exec_env may need */
};
void culeak_exec_env_room(char *const envp[], struct culeak_env_room *r);
/* envp with the shim in LD_PRELOAD and the CULEAK_* variables it lacks, made in slots
 * and chars (room from culeak_exec_env_room); envp itself when nothing is missing. */
char *const *culeak_exec_env(char *const envp[], const struct culeak_env_room *r, char **slots, char *chars);
/* Says so when the program file (fd >= 0: that descriptor's; search: a name found in
 * PATH) cannot be followed (AT_SECURE). */
void culeak_exec_check(const char *file, int fd, int search);

/* ---- exit_paths.c: ends through exit() that could end before the destructor ran ---- */
/* Called once the stream started: notes when exit processing begins. */
void culeak_exit_paths_arm(void);

/* ---- devmem.c ---- */
/* The current context's device and its free/total memory: 1, or 0 when unknown. */
int culeak_devmem(int *device, uint64_t *free_bytes, uint64_t *total_bytes);

/* ---- patch.c: a shim loaded into a running process routes the entry points that the
 * program's modules already resolved through its wrappers ---- */
struct culeak_patch_count {
    unsigned slots;    /* relocation slots (GOT/PLT) rewritten */
    unsigned tables;   /* other pointers in modules' data (tables filled by cuGetProcAddress, dlsym) */
    unsigned modules;  /* modules with at least one of either */
    unsigned failed;   /* slots that could not be made writable */
};
void culeak_patch_loaded(struct culeak_patch_count *n);

/* ---- inventory.c: what was live before an attach, sent as "before-attach" events ---- */
struct culeak_inventory_count {
    unsigned long found;
    uint64_t bytes;
    int incomplete;    /* the scan ran out of its time */
};
void culeak_inventory_send(struct culeak_inventory_count *n);

/* ---- resolve.c: real entry points ---- */
void *culeak_real_dlsym(void *handle, const char *name);
/* The two halves of the exported dlsym (dlsym_entry.c). */
void *culeak_dlsym_next_target(const char *name);
void *culeak_dlsym_lookup(void *handle, const char *name);

#endif
