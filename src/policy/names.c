#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
/* The one place that formats a policy error, so every caller prints the
 * same "file:line:col: key: msg" that editors and grep understand. */
#include "policy.h"

#include <stdio.h>

void skewshim_error_format(const skewshim_error *e, char *buf, size_t len)
{
    if (!buf || len == 0)
        return;
    const char *file = e->file[0] ? e->file : "<policy>";
    /* Line 0 means no position (an unreadable file); an empty key means the
     * YAML itself is malformed, before any key was known.  Leave those parts
     * out rather than print ":0:0:" or an empty field. */
    char where[64] = "";
    if (e->line > 0 && e->column > 0)
        snprintf(where, sizeof where, ":%d:%d", e->line, e->column);
    else if (e->line > 0)
        snprintf(where, sizeof where, ":%d", e->line);
    if (e->key[0])
        snprintf(buf, len, "%s%s: %s: %s", file, where, e->key, e->msg);
    else
        snprintf(buf, len, "%s%s: %s", file, where, e->msg);
}
