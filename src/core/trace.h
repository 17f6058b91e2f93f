/* trace.h - the --trace file: every step of the agent as one JSON line. */
#ifndef ASKDB_TRACE_H
#define ASKDB_TRACE_H

#include "core/json.h"

struct trace;

/* Open (append) the trace file; NULL path gives NULL, which every other
** function accepts and ignores. *err set on failure (static string),
** also when path is a database file or the file db (the database being
** asked, a path or a URL) names (outfile.h): it is never written. */
struct trace *trace_open(const char *path, const char *db, const char **err);
void trace_close(struct trace *t);

/* Write ev (an object; consumed) with "t_ms" since the trace opened and
** "step" added, as one line through trace_put(): nothing is buffered, so a
** crash loses nothing written before, and lines of other handles on the
** same file never interleave with it. */
void trace_write(struct trace *t, const char *step, json_t *ev);

/* Append line (n bytes, no newline: one is added) as one line, in one
** writev(), so lines of other handles never interleave with it. Returns 0,
** or -1 (errno set) when it could not be written whole; NULL t: 0. */
int trace_put(struct trace *t, const char *line, size_t n);

/* NULL while every line was written whole; else why the first one was
** not (strerror(), static): a full disk must not lose the trace silently. */
const char *trace_failure(const struct trace *t);

#endif
