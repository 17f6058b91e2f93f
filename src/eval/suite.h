/* suite.h - evaluation suites (Spider, BIRD, JSON lines) and item selection. */
#ifndef ASKDB_EVAL_SUITE_H
#define ASKDB_EVAL_SUITE_H

#include <stddef.h>
#include <stdint.h>

#include "askdb.h"

/*
** A suite is read whole into items, one per entry, in file order; an
** item's index (its position in the file) is its identity for --resume.
** Formats, decided per entry by its keys:
**   Spider     {"db_id", "question", "query"}
**   BIRD       {"db_id", "question", "evidence", "SQL", "difficulty"}
**   JSON lines {"db": PATH, "question", "gold"} (optional "db_id", "hint",
**              "difficulty")
** A file whose first non-blank byte is '[' is one JSON array, anything
** else is JSON lines. An entry that lacks a field, or a line that is not
** JSON, stays an item with `malformed` set: it is reported, never dropped.
*/

struct suite_item {
    long index;              /* position in the suite */
    long line;               /* its line in a JSON-lines file (from 1), or
                                0 (an array's items) */
    char *db_id;             /* name in summaries: db_id, else the file's
                                stem, else (two files of one stem) the
                                path as the entry gives it */
    char *db_path;           /* the SQLite file to ask */
    char *question;
    char *hint;              /* BIRD evidence / "hint", or NULL */
    char *gold;
    char *difficulty;        /* given, else Spider hardness of the gold */
    const char *malformed;   /* why the entry is unusable (static), or NULL */
};

struct suite {
    struct suite_item *items;
    long n;
};

/*
** Read the suite at path. Spider/BIRD databases are
** db_root/<db_id>/<db_id>.sqlite; JSON-lines paths are taken relative to
** db_root, else to the suite file's folder. Returns ASKDB_ERR_USAGE with
** a message in err (file unreadable, not JSON, no entries, db_id without
** db_root) or ASKDB_ERR_NOMEM. On success the caller frees with
** suite_free().
*/
askdb_status suite_load(const char *path, const char *db_root,
                        struct suite *s, char *err, size_t errlen);

/*
** Read Spider's training split in its own layout: the suite dir/train.json,
** the databases dir/database/<db_id>/<db_id>.sqlite. As suite_load(); the
** benchmarks (bench/) read Spider through it.
*/
askdb_status suite_load_spider(const char *dir, struct suite *s, char *err,
                               size_t errlen);

void suite_free(struct suite *s);

/*
** Count items whose db_id is not described in a Spider tables.json.
** Returns 0 and sets *unknown, or -1 with a message in err.
*/
int suite_check_tables(const struct suite *s, const char *tables_path,
                       long *unknown, char *err, size_t errlen);

/*
** The selection, in suite order: items whose db_id is in the comma list
** dbs (NULL = all), then a sample of `sample` of them (0 = all) drawn with
** suite_sample(), then the first `limit` (0 = all). *out (malloc()ed,
** caller frees) holds suite indices. Returns 0, or -1 when out of memory.
*/
int suite_select(const struct suite *s, const char *dbs, long sample,
                 uint64_t seed, long limit, long **out, long *nout);

/*
** The same with grouped sampling, in this order: the --db filter, then
** sample_dbs databases drawn at random (0 = all), then at most per_db
** items of each database drawn at random (0 = all), then a sample of
** `sample`, then the first `limit`. Every draw is suite_sample() with a
** seed derived from seed, so a selection is the same on every machine.
** Grouping keeps the number of databases small for a given number of
** questions: the local model evaluates each database's schema once.
*/
struct suite_pick {
    const char *dbs;
    long sample_dbs, per_db, sample, limit;
    uint64_t seed;
};
int suite_pick(const struct suite *s, const struct suite_pick *p, long **out,
               long *nout);

/*
** The next name of a comma list such as --db's ("a, b,c"), from *p: its
** start in *name and its length in *len, the spaces and tabs around it
** left out; *p moves past it and its comma. 0 when the list is at its
** end. A name may be empty ("a,,b").
*/
int suite_list_next(const char **p, const char **name, size_t *len);

/* splitmix64: advances *state and returns the next 64-bit value. */
uint64_t suite_splitmix64(uint64_t *state);

/*
** Choose k of the n positions 0..n-1 (k <= n) reproducibly: a partial
** Fisher-Yates shuffle of 0..n-1 whose swap partner for position i is
** i + bounded(n - i), bounded(m) drawing splitmix64 values and rejecting
** those below (2^64 - m) mod m, then returning value mod m. The first k
** positions, sorted ascending, go to idx. -1 when out of memory.
*/
int suite_sample(long n, long k, uint64_t seed, long *idx);

#endif
