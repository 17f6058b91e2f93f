/* values.h - find the database values a question mentions, as stored. */
#ifndef ASKDB_VALUES_H
#define ASKDB_VALUES_H

#include "askdb.h"
#include "core/buf.h"

/*
** A question says "singers from france"; the data says Country = 'France'.
** The value index holds the distinct short text values of every table
** (bounded per column and in total) in two SQLite FTS5 tables: one with
** the unicode61 tokenizer (diacritics removed, case folded) for exact
** word and phrase matching, one with the trigram tokenizer over the
** index's vocabulary for close spellings ("Frnace"). vindex_match() finds
** the values the question's words and quoted strings name, and
** values_render() tells the model which column holds each one and how it
** is spelled there.
**
** The index is cached in ${cache}/values/<checksum>.fts, where checksum is
** the XXH3-128 of the database file, so it is built once per content of a
** database and rebuilt when the file changes. When the cache cannot be
** written the index is built in memory for this handle only. The user's
** database is read only through db_run() (the read-only guard) and the
** file is otherwise only read for its checksum; nothing is ever created
** next to it.
**
** A vindex is used by one thread at a time (like the agent that owns it).
*/

struct vindex;
struct db_schema;

/* Bounds of the index; vindex_opts_default() gives the values below. */
struct vindex_opts {
    int per_column;      /* distinct values read per column, default 2000 */
    long total;          /* values in the whole index, default 100000 */
    int max_len;         /* longest value indexed in characters, def 80 */
    int budget_ms;       /* stop reading the database after this long,
                            default 20000; the index is then partial and
                            not cached */
};

struct vindex_opts vindex_opts_default(void);

/* What the index holds and what opening it cost, for the trace. */
struct vindex_stats {
    long values;         /* values indexed */
    long terms;          /* distinct words among them */
    int columns;         /* columns with at least one value indexed */
    int columns_capped;  /* of those: more distinct values than per_column */
    int columns_skipped; /* free text (mostly long values) or read errors */
    long db_queries;     /* statements run on the user's database by this
                            open (0 when the cache was reused) */
    int reused;          /* 1 = taken from the cache file, not built */
    int in_memory;       /* 1 = cache not writable, index kept in memory */
    int partial;         /* 1 = a cap or the time budget stopped the build */
    int out_of_time;     /* 1 = the time budget did: such an index is kept
                            in memory, never cached (built again next time) */
    double build_ms;     /* time the build took (when reused: the original
                            build's time, read from the file) */
    double open_ms;      /* time of this vindex_open, all included */
    long file_bytes;     /* size of the cache file, 0 in memory */
};

/*
** Open the cached index of db's values, building it when it is missing,
** of another format or the database changed. opt NULL = defaults. On
** success *out is the caller's (vindex_free) and err holds a note when
** something was degraded ("value index kept in memory for this session:
** cannot write in '...': ..."), else "". Returns 0, or -1 with the reason
** in err (out of memory, schema unreadable): the caller then goes on
** without values - a question never fails for want of them. Changes
** nothing on db but reads it (its limits are raised and restored around
** each statement).
*/
int vindex_open(askdb_db *db, const struct vindex_opts *opt,
                struct vindex **out, char *err, size_t errlen);

/* Statistics of an open index (borrowed, lives with vi). */
const struct vindex_stats *vindex_stats(const struct vindex *vi);

void vindex_free(struct vindex *vi);

/* One value the question mentions. */
struct value_match {
    char *table;         /* where the value is stored */
    char *column;
    char *value;         /* as stored, byte for byte */
    char *phrase;        /* the words of the question that name it */
    int exact;           /* 1 = same words once case and accents are
                            folded, 0 = close spelling (edit distance) */
    int partial;         /* 1 = the phrase is part of the value */
    double score;        /* higher is stronger evidence */
};

/*
** Match the question against the index: quoted strings first, then word
** n-grams (up to 6 words) that are not only stop words or numbers. A
** value matches when its words (case and accents folded) are the
** phrase's, or when the phrase is a good part of it (two words or more,
** or one capitalized word, and at least half the value's words). A
** question word the index does not know is also tried in its closest
** known spelling (Damerau-Levenshtein: 1 edit for words of 4-7
** characters, 2 for longer, none below 4; not when it only inflects a
** known word, nor when it is a word of a table or column name). Values
** of 1-2 characters count only when quoted. Best max matches (max <= 0:
** 8), strongest first, one per table.column.value: exact before close
** spellings, whole values before parts, longer phrases before shorter,
** values few others share before common ones. *out is the caller's
** (value_matches_free), NULL when *n is 0. Returns 0, or -1 when out of
** memory or the index failed.
*/
int vindex_match(struct vindex *vi, const char *question, int max,
                 struct value_match **out, int *n);

void value_matches_free(struct value_match *m, int n);

/*
** Append the matches for the prompt, e.g.
**   Values the question mentions, as stored:
**   - singer.Country = 'France' (question: "france")
**   - circuits.country = 'France' (question: "Frnace", close spelling)
**   - people."Home Town" = 'Los Angeles, CA' (question: "los angeles",
**     part of the value)          <- one line
** Names are quoted as SQL needs them; a table of s with a namespace is
** written qualified (schema_put_table()). Values that are not valid
** UTF-8 are left out (the model could not write them). Nothing when none
** is left.
*/
void values_render(struct buf *b, const struct db_schema *s,
                   const struct value_match *m, int n);

#endif
