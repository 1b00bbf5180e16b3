/* Which source lines have code in the modules the processes loaded (model.h
 * model_source_line): a breakpoint on file:line says when the line can never allocate. */
#include "model_internal.h"

int model_source_line(struct model *m, const char *file, unsigned line, unsigned *next)
{
    int best = -1;
    *next = 0;
    for (uint32_t id = 1; id < m->module_paths.count && id < m->modules_cap; id++) {
        const struct module_info *mi = &m->modules[id];
        if (!mi->path || mi->skip)
            continue; /* looked through: no call site is there */
        unsigned after = 0;
        int r = symbolizer_source_line(m->sym, id, mi->path, file, line, &after);
        if (r == 1)
            return 1;
        if (r == 0) {
            best = 0;
            if (after && (!*next || after < *next))
                *next = after;
        }
    }
    return best;
}
