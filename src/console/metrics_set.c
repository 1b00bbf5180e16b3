/* `set metrics HOST:PORT | off`: the console serves what its model holds on
 * http://HOST:PORT/metrics (report/metrics.h), as record --metrics does; the loop
 * answers the scrapes at each turn, never waiting on a client. */
#include "console.h"
#include "report/metrics.h"

#include <string.h>

void console_set_metrics(struct console *c, const char *addr)
{
    if (!strcmp(addr, "off")) {
        if (c->metrics)
            ui_message(&c->u, 0, "metrics off: %s no longer answers", metrics_server_address(c->metrics));
        else
            ui_message(&c->u, 0, "metrics are off");
        metrics_server_free(c->metrics);
        c->metrics = NULL;
        return;
    }
    char err[512];
    struct metrics_server *s = metrics_server_new(addr, c->u.m, err, sizeof err);
    if (!s) { /* the endpoint served before stays */
        ui_message(&c->u, 1, "set metrics: %s", err);
        return;
    }
    metrics_server_free(c->metrics);
    c->metrics = s;
    ui_message(&c->u, 0, "metrics on http://%s/metrics (OpenMetrics); set metrics off stops", metrics_server_address(s));
}

void console_metrics_service(struct console *c)
{
    if (c->metrics)
        metrics_server_service(c->metrics);
}

void console_metrics_close(struct console *c)
{
    metrics_server_free(c->metrics);
    c->metrics = NULL;
}
