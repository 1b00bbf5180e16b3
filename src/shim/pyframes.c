/* Python frames in native stacks. In a process running CPython 3.10 to 3.13, an event's
 * stack also shows the Python frames (file, function, line) of the allocating thread,
 * in place of the native eval-loop frames that run them.
 *
 * The GIL is usually NOT held here (torch, cupy, jax and ctypes release it around CUDA
 * calls), and taking it inside an allocator's lock can deadlock, so nothing here calls
 * into Python except three read-only, allocation-free functions: Py_IsInitialized,
 * PyGILState_GetThisThreadState (a TSS read) and PyCode_Addr2Line (decodes the immutable
 * line table). The thread's own frame chain is read directly with per-version layouts:
 * it cannot change while this thread is inside the allocation call, and its frames keep
 * their code objects alive. Every object read is type-checked (PyCode_Type,
 * PyUnicode_Type); the first walks of a process read through process_vm_readv, which
 * fails instead of faulting, so a layout mismatch disables Python frames (with a NOTE)
 * instead of crashing. On any doubt an event gets native frames only.
 *
 * Each distinct (code object, instruction) becomes a python-frame id, announced once in
 * a PYFRAME record, and appears in the trace tree as ip CULEAK_PYFRAME_TAG | id. */
#include "shim.h"
#include "common/wire.h"

#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#define MAX_PY_FRAMES 128   /* per event; a deeper chain keeps its innermost frames */
#define STR_MAX 512         /* longer file names and qualnames are cut */
#define VALIDATING_WALKS 4  /* walks read through process_vm_readv before trusting the layout */
#define NONE ((size_t)-1)

/* Where the fields are, per version. Offsets measured with offsetof against each
 * version's headers (x86-64 and aarch64 agree: LP64, no packing). */
struct layout {
    int minor;
    size_t ts_frame;       /* tstate -> 3.10: frame, 3.11/3.12: cframe, 3.13: current_frame */
    size_t cframe_current; /* _PyCFrame.current_frame (3.11/3.12), else NONE */
    size_t fr_back, fr_code, fr_instr;
    size_t fr_owner;       /* 3.11+: char owner */
    size_t fr_is_entry;    /* 3.11: bool is_entry, else NONE */
    size_t co_filename, co_name, co_firstlineno, co_code; /* co_code: co_code_adaptive (3.11+) */
    size_t ob_type, ob_size;
    size_t str_state, str_length, ascii_size, utf8_length, utf8, compact_size;
};

static const struct layout layouts[] = {
    /* 3.10: PyThreadState.frame -> PyFrameObject {f_back, f_code, int f_lasti (code units)} */
    {10, 24, NONE, 24, 32, 96, NONE, NONE, 104, 112, 40, NONE, 8, 16, 32, 16, 48, 48, 56, 72},
    /* 3.11: tstate->cframe->current_frame -> _PyInterpreterFrame {f_code@32, previous@48,
     * prev_instr@56, is_entry@68, owner@69}; co_qualname@128 */
    {11, 56, 8, 48, 32, 56, 69, 68, 112, 128, 72, 184, 8, 16, 32, 16, 48, 48, 56, 72},
    /* 3.12: _PyInterpreterFrame {f_code@0, previous@8, prev_instr@56, owner@70} */
    {12, 56, 0, 8, 0, 56, 70, NONE, 112, 128, 68, 192, 8, 16, 32, 16, 40, 40, 48, 56},
    /* 3.13: tstate->current_frame@72; {f_executable@0, previous@8, instr_ptr@56, owner@70}
     * (checked against _PyRuntime.debug_offsets at start) */
    {13, 72, NONE, 8, 0, 56, 70, NONE, 112, 128, 68, 200, 8, 16, 32, 16, 40, 40, 48, 56},
};

enum { FRAME_OWNED_BY_CSTACK = 3 };

static struct {
    int on;                      /* Python frames are captured */
    int safe_reads;              /* walks left to read through process_vm_readv */
    int can_check;               /* process_vm_readv works in this process */
    struct layout L;
    int (*is_initialized)(void);
    void *(*this_tstate)(void);
    int (*addr2line)(void *code, int byte_offset);
    uintptr_t code_type, unicode_type;
    uintptr_t eval_lo, eval_hi;  /* _PyEval_EvalFrameDefault */
    uintptr_t interp_base;       /* load base of the module holding the interpreter */
    char why_off[160];           /* NOTE to send once, when Python frames had to be turned off */
} py;

static pthread_once_t py_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t py_mu = PTHREAD_MUTEX_INITIALIZER;
static int note_sent;
static int py_decided; /* py_once has run */

/* ---- guarded reads ---- */

static int plausible(uintptr_t p) { return p >= 4096 && p < (1ull << 56) && (p & 7) == 0; }

/* memcpy once the layout is trusted; before that, process_vm_readv on ourselves, which
 * returns an error for an unmapped address instead of faulting. Inlined: n is a constant
 * at every call, so a trusted read is one load. */
static inline __attribute__((always_inline)) int rd(uintptr_t src, void *dst, size_t n)
{
    if (!plausible(src & ~(uintptr_t)7))
        return -1;
    if (__builtin_expect(__atomic_load_n(&py.safe_reads, __ATOMIC_RELAXED) > 0, 0) && py.can_check) {
        struct iovec l = {dst, n}, r = {(void *)src, n};
        return process_vm_readv(getpid(), &l, 1, &r, 1, 0) == (ssize_t)n ? 0 : -1;
    }
    memcpy(dst, (const void *)src, n);
    return 0;
}

static inline __attribute__((always_inline)) int rd_ptr(uintptr_t src, uintptr_t *out)
{
    *out = 0;
    return rd(src, out, sizeof *out);
}

/* ---- start ---- */

static void send_note(const char *text)
{
    culeak_stream_note(text, strnlen(text, 200));
}


static void turn_off(const char *why)
{
    snprintf(py.why_off, sizeof py.why_off, "python frames off: %s; stacks show native frames only", why);
    __atomic_store_n(&py.on, 0, __ATOMIC_RELEASE);
}

static void *sym(const char *name) { return culeak_real_dlsym(RTLD_DEFAULT, name); }

static int version_minor(void)
{
    const unsigned long *hex = sym("Py_Version"); /* 3.11+ */
    if (hex)
        return (*hex >> 24) == 3 ? (int)((*hex >> 16) & 0xff) : -1;
    const char *(*get)(void) = (const char *(*)(void))sym("Py_GetVersion");
    if (!get)
        return -1;
    const char *v = get(); /* formats a static buffer; no Python objects */
    int major = 0, minor = 0;
    return sscanf(v, "%d.%d", &major, &minor) == 2 && major == 3 ? minor : -1;
}

/* 3.13 publishes its own offsets at the start of _PyRuntime: use the fields we need. */
struct debug_offsets_313 {
    char cookie[8];
    uint64_t version, free_threaded;
    uint64_t runtime_state[3];
    uint64_t interpreter_state[13];
    uint64_t ts_size, ts_prev, ts_next, ts_interp, ts_current_frame, ts_rest[4];
    uint64_t fr_size, fr_previous, fr_executable, fr_instr_ptr, fr_localsplus, fr_owner;
    uint64_t co_size, co_filename, co_name, co_qualname, co_linetable, co_firstlineno, co_argcount,
        co_localsplusnames, co_localspluskinds, co_code_adaptive;
    uint64_t ob_size_, ob_type;
};

static int check_313(struct layout *L)
{
    struct debug_offsets_313 d;
    uintptr_t rt = (uintptr_t)sym("_PyRuntime");
    if (!rt || rd(rt, &d, sizeof d) != 0 || memcmp(d.cookie, "xdebugpy", 8) != 0)
        return -1;
    if (d.free_threaded)
        return -1;
    L->ts_frame = d.ts_current_frame;
    L->fr_back = d.fr_previous;
    L->fr_code = d.fr_executable;
    L->fr_instr = d.fr_instr_ptr;
    L->fr_owner = d.fr_owner;
    L->co_filename = d.co_filename;
    L->co_name = d.co_qualname;
    L->co_firstlineno = d.co_firstlineno;
    L->co_code = d.co_code_adaptive;
    L->ob_type = d.ob_type;
    return 0;
}

static void start(void)
{
    const char *env = getenv("CULEAK_PYTHON");
    void *init = sym("Py_IsInitialized");
    if (!init || (env && strcmp(env, "0") == 0))
        return; /* not a Python process, or turned off: stay silent */
    int minor = version_minor();
    const struct layout *L = NULL;
    for (size_t i = 0; i < sizeof layouts / sizeof *layouts; i++)
        if (layouts[i].minor == minor)
            L = &layouts[i];
    char why[64];
    if (!L) {
        snprintf(why, sizeof why, "CPython 3.%d is not supported (3.10 to 3.13 are)", minor);
        turn_off(why);
        return;
    }
    if (sym("_Py_NegativeRefcount") || sym("_Py_ForgetReference")) {
        turn_off("a debug build of CPython has other object layouts");
        return;
    }
    *(void **)&py.is_initialized = init;
    *(void **)&py.this_tstate = sym("PyGILState_GetThisThreadState");
    *(void **)&py.addr2line = sym("PyCode_Addr2Line");
    py.code_type = (uintptr_t)sym("PyCode_Type");
    py.unicode_type = (uintptr_t)sym("PyUnicode_Type");
    void *eval = sym("_PyEval_EvalFrameDefault");
    if (!py.this_tstate || !py.addr2line || !py.code_type || !py.unicode_type || !eval) {
        turn_off("the interpreter lacks an expected symbol");
        return;
    }
    Dl_info info;
    const ElfW(Sym) *es = NULL;
    if (dladdr1(eval, &info, (void **)&es, RTLD_DL_SYMENT) && es && es->st_size) {
        py.eval_lo = (uintptr_t)eval;
        py.eval_hi = py.eval_lo + es->st_size;
    }
    py.interp_base = dladdr(init, &info) ? (uintptr_t)info.dli_fbase : 0;
    py.L = *L;
    /* Can we read through the kernel (seccomp may forbid it)? */
    long probe = 42, got = 0;
    struct iovec l = {&got, sizeof got}, r = {&probe, sizeof probe};
    py.can_check = process_vm_readv(getpid(), &l, 1, &r, 1, 0) == (ssize_t)sizeof got && got == 42;
    py.safe_reads = VALIDATING_WALKS;
    if (minor == 13 && check_313(&py.L) != 0) {
        turn_off("CPython 3.13 without usable debug offsets (free-threaded build?)");
        return;
    }
    __atomic_store_n(&py.on, 1, __ATOMIC_RELEASE);
}

int culeak_py_off;

int culeak_py_enabled_slow(void)
{
    if (!__atomic_load_n(&py_decided, __ATOMIC_ACQUIRE)) { /* not a call per event */
        pthread_once(&py_once, start);
        __atomic_store_n(&py_decided, 1, __ATOMIC_RELEASE);
    }
    if (__atomic_load_n(&py.on, __ATOMIC_ACQUIRE))
        return 1;
    if (py.why_off[0] && !__atomic_exchange_n(&note_sent, 1, __ATOMIC_ACQ_REL))
        send_note(py.why_off);
    /* decided, off for good (only start turns them on), and said */
    __atomic_store_n(&culeak_py_off, 1, __ATOMIC_RELEASE);
    return 0;
}

/* ---- strings: compact unicode objects only, copied as UTF-8 ---- */

static size_t put_utf8(char *out, size_t at, size_t cap, uint32_t c)
{
    char b[4];
    size_t n;
    if (c < 0x80) { b[0] = (char)c; n = 1; }
    else if (c < 0x800) { b[0] = (char)(0xc0 | c >> 6); b[1] = (char)(0x80 | (c & 0x3f)); n = 2; }
    else if (c < 0x10000) {
        b[0] = (char)(0xe0 | c >> 12); b[1] = (char)(0x80 | ((c >> 6) & 0x3f));
        b[2] = (char)(0x80 | (c & 0x3f)); n = 3;
    } else {
        b[0] = (char)(0xf0 | c >> 18); b[1] = (char)(0x80 | ((c >> 12) & 0x3f));
        b[2] = (char)(0x80 | ((c >> 6) & 0x3f)); b[3] = (char)(0x80 | (c & 0x3f)); n = 4;
    }
    if (at + n > cap)
        return at;
    memcpy(out + at, b, n);
    return at + n;
}

/* Copies str (a PyUnicodeObject) into out; returns the length, or -1 when it is not a
 * compact string. */
static int read_str(uintptr_t str, char *out, size_t cap)
{
    const struct layout *L = &py.L;
    uintptr_t type;
    int64_t length;
    uint32_t state;
    if (rd_ptr(str + L->ob_type, &type) || type != py.unicode_type || rd(str + L->str_length, &length, 8) ||
        rd(str + L->str_state, &state, 4) || length < 0)
        return -1;
    unsigned kind = (state >> 2) & 7, compact = (state >> 5) & 1, ascii = (state >> 6) & 1;
    if (!compact)
        return -1;
    size_t n = (size_t)length < cap ? (size_t)length : cap;
    if (ascii)
        return rd(str + L->ascii_size, out, n) ? -1 : (int)n;
    uintptr_t utf8;
    int64_t utf8_len;
    if (rd_ptr(str + L->utf8, &utf8) == 0 && utf8 && rd(str + L->utf8_length, &utf8_len, 8) == 0 && utf8_len >= 0) {
        n = (size_t)utf8_len < cap ? (size_t)utf8_len : cap;
        return rd(utf8, out, n) ? -1 : (int)n;
    }
    if (kind != 1 && kind != 2 && kind != 4)
        return -1;
    size_t at = 0;
    uintptr_t data = str + L->compact_size;
    for (int64_t i = 0; i < length && at < cap; i++) {
        uint32_t c = 0;
        if (rd(data + (uintptr_t)i * kind, &c, kind))
            return -1;
        at = put_utf8(out, at, cap, c);
    }
    return (int)at;
}

/* ---- the frame chain ---- */

struct pyf {
    uintptr_t code;
    int32_t offset;  /* byte offset of the current instruction in the code */
    uint8_t last;    /* outermost frame of one run of the eval loop */
};

/* One read of the walk's: through the kernel while the layout is not trusted yet (checked),
 * else a plain load. The walk checks each object's address before reading its fields. */
static inline __attribute__((always_inline)) int rd_walk(int checked, uintptr_t src, void *dst, size_t n)
{
    if (checked) {
        struct iovec l = {dst, n}, r = {(void *)src, n};
        return process_vm_readv(getpid(), &l, 1, &r, 1, 0) == (ssize_t)n ? 0 : -1;
    }
    memcpy(dst, (const void *)src, n);
    return 0;
}

/* The walk, for one way of reading (inlined twice: checked and trusted). The layout is
 * copied first: out's stores could otherwise alias it and make every offset a load. */
static inline __attribute__((always_inline)) int walk_reading(struct pyf *out, int max, int checked)
{
    const struct layout L = py.L;
    uintptr_t ts = (uintptr_t)py.this_tstate(), f = 0;
    if (!ts)
        return 0;
    if (!plausible(ts) || rd_walk(checked, ts + L.ts_frame, &f, sizeof f))
        return -1;
    if (L.cframe_current != NONE && f && (!plausible(f) || rd_walk(checked, f + L.cframe_current, &f, sizeof f)))
        return -1;
    int n = 0;
    for (int guard = 0; f && guard < 4 * MAX_PY_FRAMES; guard++) {
        uintptr_t code, type, next;
        if (!plausible(f) || rd_walk(checked, f + L.fr_back, &next, sizeof next) ||
            rd_walk(checked, f + L.fr_code, &code, sizeof code))
            return -1;
        uint8_t owner = 0, entry = 0;
        if (L.fr_owner != NONE && rd_walk(checked, f + L.fr_owner, &owner, 1))
            return -1;
        if (L.fr_is_entry != NONE && rd_walk(checked, f + L.fr_is_entry, &entry, 1))
            return -1;
        if (L.minor >= 12 && owner == FRAME_OWNED_BY_CSTACK) {
            /* the entry frame of one run of the eval loop: ends the run above it */
            if (n)
                out[n - 1].last = 1;
            f = next;
            continue;
        }
        if (!plausible(code) || rd_walk(checked, code + L.ob_type, &type, sizeof type) || type != py.code_type)
            return -1;
        int64_t off;
        if (L.minor == 10) {
            int32_t lasti;
            if (rd_walk(checked, f + L.fr_instr, &lasti, 4))
                return -1;
            off = (int64_t)lasti * 2;
        } else {
            uintptr_t instr;
            int64_t units;
            if (rd_walk(checked, f + L.fr_instr, &instr, sizeof instr) ||
                rd_walk(checked, code + L.ob_size, &units, sizeof units))
                return -1;
            off = (int64_t)instr - (int64_t)(code + L.co_code);
            if (off >= units * 2)
                return -1;
        }
        if (off >= 0 && n < max) /* off < 0: a frame still being set up */
            out[n++] = (struct pyf){code, (int32_t)off, (uint8_t)(L.minor == 10 || entry)};
        f = next;
    }
    if (f) /* longer than any real chain: a cycle read from a wrong layout */
        return -1;
    if (n)
        out[n - 1].last = 1;
    return n;
}

/* The current thread's Python frames, innermost first. Returns the count, or -1 when
 * something read did not look right. */
static int walk(struct pyf *out, int max)
{
    if (__atomic_load_n(&py.safe_reads, __ATOMIC_RELAXED) > 0 && py.can_check)
        return walk_reading(out, max, 1);
    return walk_reading(out, max, 0);
}

/* ---- (code, offset) -> python-frame id ---- */

struct slot {
    uintptr_t code;
    int32_t offset;
    uint32_t id;                 /* 0: empty */
    uintptr_t filename, name;    /* checked on a hit: a freed code object's address reused */
};

static struct slot *table;
static size_t mask, used;
static uint32_t next_id = 1;

static size_t hash(uintptr_t code, int32_t off)
{
    uint64_t h = ((uint64_t)code ^ ((uint64_t)(uint32_t)off << 48)) * 0x9e3779b97f4a7c15ull;
    return (size_t)(h ^ (h >> 31));
}

static struct slot *find(uintptr_t code, int32_t off)
{
    if (!table || (used + 1) * 2 > mask + 1) {
        size_t cap = table ? (mask + 1) * 2 : 1024;
        struct slot *t = calloc(cap, sizeof *t);
        if (!t)
            return NULL;
        for (size_t i = 0; table && i <= mask; i++) {
            if (!table[i].id)
                continue;
            size_t j = hash(table[i].code, table[i].offset) & (cap - 1);
            while (t[j].id)
                j = (j + 1) & (cap - 1);
            t[j] = table[i];
        }
        free(table);
        table = t;
        mask = cap - 1;
    }
    size_t j = hash(code, off) & mask;
    while (table[j].id && (table[j].code != code || table[j].offset != off))
        j = (j + 1) & mask;
    return &table[j];
}

/* With py_mu held: the id of (code, offset) whose code object names filename and name,
 * announcing it first when it is new. 0 when out of memory. */
static uint32_t intern_named(const struct pyf *pf, uintptr_t filename, uintptr_t name)
{
    const struct layout *L = &py.L;
    struct slot *s = find(pf->code, pf->offset);
    if (!s)
        return 0;
    if (s->id && s->filename == filename && s->name == name)
        return s->id;
    static char file[STR_MAX], func[STR_MAX];
    int fl = read_str(filename, file, sizeof file), fn = read_str(name, func, sizeof func);
    if (fl < 0) {
        memcpy(file, "?", 1);
        fl = 1;
    }
    if (fn < 0) {
        memcpy(func, "?", 1);
        fn = 1;
    }
    int32_t first = 0;
    rd(pf->code + L->co_firstlineno, &first, 4);
    int line = py.addr2line((void *)pf->code, pf->offset);
    static uint8_t rec[CULEAK_REC_HEADROOM + 2 * STR_MAX + 6 * CULEAK_UVARINT_MAX];
    culeak_stream_append(rec, culeak_enc_pyframe(rec, next_id, file, (size_t)fl, func, (size_t)fn,
                                                 line > 0 ? (uint64_t)line : 0, first > 0 ? (uint64_t)first : 0, 0));
    if (!s->id)
        used++;
    *s = (struct slot){pf->code, pf->offset, next_id, filename, name};
    return next_id++;
}

/* With py_mu held: the id of (code, offset); 0 when the code object could not be read. */
static uint32_t intern(const struct pyf *pf)
{
    uintptr_t filename, name;
    if (rd_ptr(pf->code + py.L.co_filename, &filename) || rd_ptr(pf->code + py.L.co_name, &name))
        return 0;
    return intern_named(pf, filename, name);
}

/* ---- per thread: the frames of its last walk, with their ids ----
 * A thread allocating in a loop walks the same frames event after event. The same frame
 * again (code object, instruction, and the file and function names the table checks on
 * a hit) takes the id it had last time from here, without py_mu or the table; a frame
 * not seen in the same place (counted from the outermost) is interned as before. */

struct seen_frame {
    uintptr_t code, filename, name;
    int32_t offset;
    uint32_t id; /* 0: not usable */
};

struct seen {
    unsigned gen; /* ids_gen when filled */
    int n;
    struct seen_frame f[MAX_PY_FRAMES]; /* outermost first */
};

static unsigned ids_gen = 1; /* bumped when the ids are given out afresh (a forked child) */
static struct seen *thread_seen(void) { return culeak_thread_block(CULEAK_TB_PY_SEEN, sizeof(struct seen)); }

/* The ids of pf[0..m) into id (0: unreadable code object); py_mu taken only for frames
 * this thread did not walk last time. Only once the layout is trusted: the walk has
 * checked each code object's address and type, so its fields are plain loads. */
static void ids_of(const struct pyf *pf, int m, uint32_t *id)
{
    struct seen *c = thread_seen();
    unsigned gen = __atomic_load_n(&ids_gen, __ATOMIC_ACQUIRE);
    if (c && c->gen != gen) {
        c->gen = gen;
        c->n = 0;
    }
    int locked = 0;
    for (int i = 0; i < m; i++) {
        int r = m - 1 - i;
        uintptr_t filename, name;
        rd_walk(0, pf[i].code + py.L.co_filename, &filename, sizeof filename);
        rd_walk(0, pf[i].code + py.L.co_name, &name, sizeof name);
        if (c && r < c->n && c->f[r].id && c->f[r].code == pf[i].code && c->f[r].offset == pf[i].offset &&
            c->f[r].filename == filename && c->f[r].name == name) {
            id[i] = c->f[r].id;
            continue;
        }
        if (!locked) {
            pthread_mutex_lock(&py_mu);
            locked = 1;
        }
        id[i] = intern_named(&pf[i], filename, name);
        if (c)
            c->f[r] = (struct seen_frame){pf[i].code, filename, name, pf[i].offset, id[i]};
    }
    if (locked)
        pthread_mutex_unlock(&py_mu);
    if (c)
        c->n = m;
}

int culeak_py_frames_now(uintptr_t *ids, int max)
{
    if (!__atomic_load_n(&py.on, __ATOMIC_ACQUIRE) || !py.is_initialized() || max <= 0)
        return 0;
    struct pyf pf[MAX_PY_FRAMES];
    pthread_mutex_lock(&py_mu);
    int m = walk(pf, max < MAX_PY_FRAMES ? max : MAX_PY_FRAMES), k = 0;
    for (int i = 0; i < m; i++) {
        uint32_t id = intern(&pf[i]);
        if (id)
            ids[k++] = CULEAK_PYFRAME_TAG | id;
    }
    pthread_mutex_unlock(&py_mu);
    return k;
}

static uint32_t marker_id; /* 0: not announced in this stream yet */

uintptr_t culeak_py_backward_marker(void)
{
    pthread_mutex_lock(&py_mu);
    if (!marker_id) {
        static const char function[] = "[autograd backward]";
        uint8_t rec[CULEAK_REC_HEADROOM + sizeof function + 8 * CULEAK_UVARINT_MAX];
        culeak_stream_append(rec, culeak_enc_pyframe(rec, next_id, "", 0, function, sizeof function - 1, 0, 0,
                                                     CULEAK_PYFRAME_BACKWARD));
        marker_id = next_id++;
    }
    uint32_t id = marker_id;
    pthread_mutex_unlock(&py_mu);
    return CULEAK_PYFRAME_TAG | id;
}

/* ---- merging into the native stack ---- */

static int is_eval(uintptr_t ip) { return ip >= py.eval_lo && ip < py.eval_hi; }

/* Index after the first native frame inside the interpreter's module (the fallback
 * place for Python frames when no eval-loop frame was recognized), or n. */
static int interp_position(const uintptr_t *ips, int n)
{
    for (int i = 0; i < n; i++) {
        Dl_info info;
        if (dladdr((void *)ips[i], &info) && (uintptr_t)info.dli_fbase == py.interp_base)
            return i + 1;
    }
    return n;
}

static int merge(uintptr_t *ips, int n, int max, int append)
{
    if (!__atomic_load_n(&py.on, __ATOMIC_ACQUIRE) || !py.is_initialized())
        return n;
    struct pyf pf[MAX_PY_FRAMES];
    uintptr_t ids[MAX_PY_FRAMES];
    uint32_t id_of[MAX_PY_FRAMES];
    int validating = __atomic_load_n(&py.safe_reads, __ATOMIC_RELAXED) > 0, m;
    if (validating) { /* the first walks, one at a time: they decide whether the layout is trusted */
        pthread_mutex_lock(&py_mu);
        m = walk(pf, MAX_PY_FRAMES);
        if (m < 0) {
            pthread_mutex_unlock(&py_mu);
            turn_off("this interpreter's frames do not have the expected layout");
            return n;
        }
        for (int i = 0; i < m; i++)
            id_of[i] = intern(&pf[i]);
    } else { /* the thread's own frames: no lock needed to read them */
        m = walk(pf, MAX_PY_FRAMES);
        ids_of(pf, m, id_of);
    }
    int k = 0;
    for (int i = 0; i < m; i++) {
        uint32_t id = id_of[i];
        if (!id) { /* unreadable code object: keep the run boundary, drop the frame */
            if (pf[i].last && k)
                pf[k - 1].last = 1;
            continue;
        }
        pf[k] = pf[i];
        ids[k++] = CULEAK_PYFRAME_TAG | id;
    }
    if (validating) {
        if (k > 0)
            __atomic_sub_fetch(&py.safe_reads, 1, __ATOMIC_RELAXED);
        pthread_mutex_unlock(&py_mu);
    }
    if (m == 0) /* a thread without Python frames: autograd's, while a backward() runs */
        return culeak_backward_borrow(ips, n, max);
    if (k <= 0)
        return n;

    /* Each native eval-loop frame runs one run of Python frames, in the same order:
     * replace it with them. Runs left over go after the last one placed. */
    uintptr_t out[CULEAK_MAX_DEPTH];
    int o = 0, g = 0, after_last = -1;
    for (int i = 0; i < n && o < max; i++) {
        if (g < k && is_eval(ips[i])) {
            while (g < k && o < max) {
                out[o++] = ids[g];
                if (pf[g++].last)
                    break;
            }
            after_last = o;
            continue;
        }
        out[o++] = ips[i];
    }
    if (g < k) {
        int at = after_last >= 0 ? after_last : append ? o : interp_position(out, o);
        int extra = k - g;
        if (at + extra > max)
            extra = max - at;
        if (extra > 0) {
            int tail = o - at;
            if (at + extra + tail > max)
                tail = max - at - extra;
            memmove(out + at + extra, out + at, (size_t)tail * sizeof *out);
            memcpy(out + at, ids + g, (size_t)extra * sizeof *out);
            o = at + extra + tail;
        }
    }
    memcpy(ips, out, (size_t)o * sizeof *ips);
    return o;
}

/* The depth limit counts the native frames inside the innermost Python frame: frames
 * beyond it up to the Python frames are dropped, so the Python caller always stays. */
static int limit(uintptr_t *ips, int n)
{
    int lim = (int)culeak_depth_limit, first = 0;
    while (first < n && !(ips[first] & CULEAK_PYFRAME_TAG))
        first++;
    if (first == n)
        return n < lim ? n : lim;
    if (first > lim) {
        memmove(ips + lim, ips + first, (size_t)(n - first) * sizeof *ips);
        n -= first - lim;
    }
    return n;
}

int culeak_py_stack(uintptr_t *ips, int n, int max) { return limit(ips, merge(ips, n, max, 0)); }

int culeak_py_stack_after(uintptr_t *ips, int n, int max) { return limit(ips, merge(ips, n, max, 1)); }

/* With py_mu held, or in a forked child: the ids start again, for a new stream. */
static void ids_afresh(void)
{
    if (table)
        memset(table, 0, (mask + 1) * sizeof *table);
    used = 0;
    next_id = 1;
    __atomic_add_fetch(&ids_gen, 1, __ATOMIC_ACQ_REL); /* the threads' last walks' ids are the old stream's */
    marker_id = 0;
    note_sent = 0;
    __atomic_store_n(&culeak_py_off, 0, __ATOMIC_RELEASE); /* the note goes into the new stream too */
}

void culeak_py_new_stream(void)
{
    pthread_mutex_lock(&py_mu);
    ids_afresh();
    pthread_mutex_unlock(&py_mu);
}

void culeak_py_fork_child(void)
{
    pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
    py_mu = fresh; /* another thread of the parent may have held it */
    ids_afresh(); /* the child's stream is new: every python frame is announced again */
}
