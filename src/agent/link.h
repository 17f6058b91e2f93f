/* link.h - schema linking: which tables and columns a question needs. */
#ifndef ASKDB_LINK_H
#define ASKDB_LINK_H

#include "askdb.h"
#include "db/schema.h"

/*
** For a large schema the prompt carries only the part the question needs:
** the tables whose names or columns the question mentions (matched word by
** word after Snowball stemming, with abbreviations such as "dept" for
** "department"), the tables a caller's hints point at (e.g. value
** retrieval found a phrase of the question in a column's data), and the
** tables on foreign-key paths that join them. Small schemas are kept whole,
** and so is any schema the question matches nothing of: the prompt is
** never empty. The result is deterministic for a given schema, question
** and hints.
*/

/* A column the caller already knows is relevant. column NULL = the whole
** table. Unknown names are ignored. */
struct link_hint {
    const char *table;
    const char *column;
    double weight;          /* added to the table's score; 1 ~ a name match */
};

struct link_opts {
    int keep_whole_tables;  /* schemas with at most this many tables... */
    int keep_whole_bytes;   /* ...or rendering to at most this many bytes are
                               kept whole (0 = no byte rule) */
    int max_tables;         /* cap on scored tables before the FK closure */
    int wide_table_cols;    /* kept tables with more columns keep only their
                               key columns and the matched ones (0 = never) */
    double min_rel;         /* keep tables scoring >= min_rel * best score */
};

struct link_result {
    int ntables;
    unsigned char *keep_table;  /* [ntables] 1 = in the prompt */
    unsigned char **keep_col;   /* [ntables][table's ncols] 1 = in it */
    double *table_score;        /* [ntables] relevance, 0 = no match */
    int whole;                  /* 1 = schema kept whole */
    int kept_tables, kept_cols, total_cols;
};

/* The tuned defaults (see bench/link_recall.c for the figures). */
struct link_opts link_opts_default(void);

/*
** Decide what of schema s the question needs. hints (nhints of them, may
** be NULL) add their tables and columns; o NULL = link_opts_default().
** On success *out is filled and owned by the caller (link_result_free).
** Returns ASKDB_OK, or ASKDB_ERR_NOMEM with *out zeroed.
*/
askdb_status link_schema(const struct db_schema *s, const char *question,
                         const struct link_hint *hints, int nhints,
                         const struct link_opts *o, struct link_result *out);

/*
** Whether the question names a word of name (a table's, split as linking
** splits names: snake_case, camelCase) that is not also a word of other
** (NULL: none), by the same stem or spelling; stop words never count.
** "Show all allergies and their types" names nothing of Has_Allergy
** beyond Allergy_Type's words. Returns 1, 0, or -1 when out of memory.
*/
int link_names(const char *question, const char *name, const char *other);

/*
** Call fn(w, len, ud) for each word of s, in order: w lower case (ASCII),
** NUL-terminated, len bytes (at most 63; a longer word is cut there).
** Words are runs of letters and digits (bytes of UTF-8 sequences count as
** letters); name = 1 also splits at camelCase humps (orderId, HTTPCode)
** and letter/digit changes, as names are split. A non-zero return of fn
** stops the walk. Returns 0, or -1 when fn stopped it.
*/
typedef int (*link_word_fn)(const char *w, size_t len, void *ud);
int link_split(const char *s, int name, link_word_fn fn, void *ud);

/* Whether w (lower case) is a word a question uses for its own grammar
** ("how", "many", "of", "show"), never a name of data. */
int link_stop_word(const char *w);

/* Free what link_schema() allocated; NULL or zeroed is a no-op. */
void link_result_free(struct link_result *r);

#endif
