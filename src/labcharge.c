/* The lab's charge (see labcharge.h); compiled into SMPI builds only.
 *
 * The rates are lab settings, from SKEWSHIM_LAB_CHARGE:
 *   off                          no charge (the lab's mode det as before)
 *   on                           the defaults below
 *   copy_gbs=G,copy_ns=C,move_ns=M,entry_ns=E,plan_ns=L   any of them; the
 *                                rest keep the defaults
 * Defaults, measured on the 2-core development machine (doc/lab.md, "The
 * charge"): copies at 10 GB/s (memcpy of blocks out of cache) plus 5 ns
 * each (a 16-256 B memmove in cache); 7 ns per planned move (the local
 * planners); 1.2 ns per matrix entry digested, checked and compared on
 * every call of a global planner (skewshim-planbench's last table);
 * 300 ns per matrix entry on a plan-cache miss (FAST's slice planner at
 * P = 256, timed under load; an upper bound, doc/lab.md).  Each rank reads the variable once;
 * SMPI gives every rank its own copy of these statics. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <mpi.h>
#include <simgrid/host.h>
#include <stdlib.h>
#include <string.h>

#include "labcharge.h"

static int state;             /* 0: not read yet, 1: on, -1: off */
static double copy_bps = 10e9, copy_s = 5e-9, move_s = 7e-9, entry_s = 1.2e-9, plan_s = 300e-9;
static double pending;        /* seconds of copies not yet injected */

static void set(const char *spec)
{
    char buf[256];
    strncpy(buf, spec, sizeof buf - 1);
    buf[sizeof buf - 1] = 0;
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(tok, '=');
        if (!eq)
            continue;
        *eq = 0;
        double v = strtod(eq + 1, NULL);
        if (v < 0)
            continue;
        if (!strcmp(tok, "copy_gbs") && v > 0)
            copy_bps = v * 1e9;
        else if (!strcmp(tok, "copy_ns"))
            copy_s = v * 1e-9;
        else if (!strcmp(tok, "move_ns"))
            move_s = v * 1e-9;
        else if (!strcmp(tok, "entry_ns"))
            entry_s = v * 1e-9;
        else if (!strcmp(tok, "plan_ns"))
            plan_s = v * 1e-9;
    }
}

static int on(void)
{
    if (!state) {
        const char *v = getenv("SKEWSHIM_LAB_CHARGE");
        state = v && (!strcmp(v, "off") || !strcmp(v, "0")) ? -1 : 1;
        if (state > 0 && v && strcmp(v, "on"))
            set(v);
    }
    return state > 0;
}

/* At the speed of the host the rank runs on: one core for this rank. */
static void inject(double seconds)
{
    if (seconds > 0)
        smpi_execute_flops(seconds * sg_host_get_speed(sg_host_self()));
}

void skewshim_lab_copy(uint64_t ncopies, uint64_t bytes)
{
    if (on())
        pending += (double)ncopies * copy_s + (double)bytes / copy_bps;
}

void skewshim_lab_flush(void)
{
    if (pending > 0) {
        double s = pending;
        pending = 0;
        inject(s);
    }
}

void skewshim_lab_plan(uint64_t moves, uint64_t entries, uint64_t planned)
{
    if (on())
        inject((double)moves * move_s + (double)entries * entry_s + (double)planned * plan_s);
}
