/* Shared pieces of zkdiff, the differential-test driver: transcript output, normalization of
 * Stats and session ids, and event draining.  zkdiff.c runs the official-C-client part of the
 * script, zkdiff_raw.c the part only a raw client can send. */
#ifndef TB_ZKDIFF_H
#define TB_ZKDIFF_H

#include "rawzk.h"
#include "zcli.h"

#include <stdint.h>

/* Root of everything the script creates; the server must not have it yet. */
#define ZD_ROOT "/zkdiff"

extern const char *zd_hostport;

/* Print one transcript line (a newline is added). */
void zd_out(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Give a session id a stable name ("A", "B", ...) for ephemeralOwner. */
void zd_name_session(int64_t sid, const char *name);
const char *zd_session_name(int64_t sid);

/* Normalized Stat: versions, counts, owner by name, zxid relations (never raw zxids or
 * times, which differ between servers). */
const char *zd_stat(const struct Stat *st);
const char *zd_rstat(const struct rz_stat *st);

/* "ok" or the error's name with its code. */
const char *zd_err(int rc);

/* Round-trip each C-client session and print every event it has received, in order. */
void zd_drain(struct zc *const *sessions, const char *const *names, int n);
/* Same for a raw session. */
void zd_drain_raw(struct rz *z, const char *name);

/* The raw-client part of the script (zkdiff_raw.c); B is the C-client session making
 * changes that raw watchers observe. */
void zd_raw_script(struct zc *b);

#endif
