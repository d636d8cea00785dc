/* What the files of the skew log share, private to src/log/.
 *   sbuf.c     the line buffer and JSON values
 *   log.c      the file: open, close, whole-line writes
 *   record.c   names, call records, matrices
 *   ring.c     the per-communicator ring and its merge reductions
 *   summary.c  the job summary
 */
#ifndef SKEWSHIM_LOG_INTERNAL_H
#define SKEWSHIM_LOG_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "log.h"

/* ---- growable line buffer (sbuf.c) ---- */

typedef struct sbuf {
    char *p;
    size_t n, cap;
    int heap;  /* p is malloc'd */
    int err;   /* out of memory: the text is truncated, do not write it */
} sbuf;

void skewshim_sb_init(sbuf *b, char *stack, size_t cap);
void skewshim_sb_free(sbuf *b);
void skewshim_sb_cat(sbuf *b, const char *s);
void skewshim_sb_printf(sbuf *b, const char *fmt, ...);
/* JSON string with escapes; NULL writes "". */
void skewshim_sb_str(sbuf *b, const char *s);
/* JSON number; nan/inf become null. */
void skewshim_sb_num(sbuf *b, double v);
void skewshim_sb_u64(sbuf *b, uint64_t v);
/* ", \"key\": ", without the comma for the first key of an object. */
void skewshim_sb_key(sbuf *b, const char *key, int first);

/* ---- the log file (log.c) ---- */

/* Whole buffer to fd, retrying partial writes and EINTR. */
int skewshim_log_write_all(int fd, const char *p, size_t n);
/* One write(2) of whole lines to this rank's log; nothing when b->err. */
void skewshim_log_write_lines(const sbuf *b);

/* ---- names and records (record.c) ---- */

/* Name of an algorithm id or fallback reason; an unknown one is spelled
 * into tmp ("algo_7"). */
const char *skewshim_log_algo_name(int id, char *tmp, size_t len);
const char *skewshim_log_reason_name(int r, char *tmp, size_t len);
/* One call record as a JSON line. */
void skewshim_record_to(sbuf *b, const skewshim_record *r);

#endif
