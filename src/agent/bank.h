/* bank.h - examples from other databases: the built-in bank (issue 17). */
#ifndef ASKDB_BANK_H
#define ASKDB_BANK_H

#include "core/buf.h"
#include "db/schema.h"

/*
** askdb carries question/SQL pairs of other databases (data/bank.tsv:
** Spider's training split without the validation split's databases,
** CC BY-SA 4.0, see data/README.md), built into the library. A database
** askdb has never seen has no learned pairs; the bank still shows the
** model the form of SQL that a question of the same form takes.
**
** Chosen the DAIL-SQL way, by what the questions say once the names and
** values of each one's own database are masked: "How many heads of the
** departments are older than 56?" asked of a schema with tables head and
** department reads "how <n> of the <n> are older than <v>", and meets the
** bank's "how many <n> are older than <v>" whatever either database holds.
**   - A word is a name (<n>) when its Snowball stem is the stem of a word
**     of a table or column name of its database (names split at '_' and
**     camelCase humps; grammar words never count); a value (<v>) when it
**     is a number, quoted, or capitalized other than as the first word.
**     Other words are kept as stems; runs of the same mask are one.
**   - Two masked questions are as alike as the cosine of their
**     IDF-weighted sets of words and word pairs (IDF over the bank).
**   - DAIL-SQL also weighs how alike the SQL skeletons are, with the SQL
**     of a first model call. Without that call, the skeletons of the most
**     alike pairs stand in for it: a pair whose skeleton (keywords and
**     operators, names and values as one mark) agrees with those of the
**     other close pairs ranks higher, by at most BANK_SKELETON_WEIGHT.
**
** The bank is read once per process, on first use (thread-safe), and never
** freed. Nothing here is per call but the stemmer.
*/

/* Most pairs one call returns. */
#define BANK_MAX 8

struct bank_pick {
    const char *db;          /* the pair's database (borrowed: the bank's) */
    const char *question;
    const char *sql;
    double score;            /* how alike, 0..1 */
};

/*
** The k (at most BANK_MAX) pairs whose masked questions are most like
** question's, asked of schema s, best first, into out[]. Pairs of a
** database called db_name (NULL: none) are left out: what is known of
** the asked database itself is `askdb learn`'s. *n = 0 when nothing is
** alike. Returns 0, or -1 when out of memory.
*/
int bank_similar(const struct db_schema *s, const char *db_name,
                 const char *question, int k, struct bank_pick *out, int *n);

/*
** Append picks to a prompt: nothing when n is 0, else
**     Examples from other databases (their tables are not this one's):
**     Q: <question>
**     SQL: <sql>
*/
void bank_render(struct buf *b, const struct bank_pick *p, int n);

/*
** The masked form of question among the names of a database (names: a
** NULL-terminated list of table and column names): its tokens, separated
** by single spaces, "<n>" for names and "<v>" for values. malloc()ed;
** NULL when out of memory. For tests.
*/
char *bank_mask(const char *question, const char *const *names);

/* The number of pairs in the bank, or -1 when it could not be read (out of
** memory). */
int bank_size(void);

#endif
