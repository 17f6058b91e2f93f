/* check.h - checks of a generated query before and after it runs, each
** with a hint the repair step can act on. */
#ifndef ASKDB_CHECK_H
#define ASKDB_CHECK_H

#include "askdb.h"
#include "db/schema.h"

/*
** The engine already refuses unknown names (db_check, with the closest
** names from hint.c) and the agent already handles empty results; these
** checks look for queries that run but probably answer something else.
** Every check is conservative: a false alarm costs a model call and can
** turn a right answer into a wrong one, so each stays silent when unsure
** (bench/check_false_alarms.c measures how often each fires on Spider's
** gold queries).
**
** Before execution (the statement has passed db_check):
**   CHECK_JOIN_NOT_FK     a join equality on columns that are not a foreign
**                         key pair, between two tables that do have one
**                         (and that the query does not also join on it)
**   CHECK_CROSS_JOIN      FROM items that nothing links (no ON, USING or
**                         WHERE condition naming both)
**   CHECK_AGG_NO_GROUP    an aggregate and a bare column in one select
**                         list, without GROUP BY (not SQLite's one min()
**                         or max() query, not a column fixed by WHERE)
**   CHECK_IDLE_JOIN       a table joined on its foreign key to another
**                         table of the query and used nowhere else
**                         (its rows only multiply or drop the other's),
**                         when the question names no word of its name
**                         that the other table's name lacks
**   CHECK_LITERAL_MISSING a column compared with a text value it never
**                         holds, while similar values exist (other case,
**                         or containing it from a word start): "has no
**                         value 'france'; it has 'France'"; or, with
**                         nothing similar, a column of at most 12
**                         distinct texts: all of them ("has no value
**                         'Japan'; its 10 values are 'DE', ..., 'JP'")
**   CHECK_VALUE_ELSEWHERE a column compared with a text value it never
**                         holds, stored exactly in another column (of the
**                         query's tables and their neighbours, or where
**                         the value index finds it; the same sentence as
**                         an empty result's, check_value_elsewhere()):
**                         a result of a count of 0, or of the other side
**                         of a NOT IN, is not empty and would not be
**                         repaired
**   CHECK_OUTER_REF       a subquery compared with IN, NOT IN or =, <, ...
**                         whose select list names a column its own tables
**                         lack: it reads the outer query's column of that
**                         name, and hands each outer row its own value
**                         back (check_outer_refs(), also said with an
**                         empty result)
**   CHECK_SELF_COMPARE    a column compared with itself (ON t3.id = t3.id,
**                         a join that links t3 to nothing; WHERE c.x >
**                         c.x, never true), naming the other tables that
**                         have a column of that name
** After execution:
**   CHECK_ALL_NULL        a result column NULL in every row (with SELECT *,
**                         only a result NULL throughout)
**   CHECK_SHAPE           a question opening with "how many", "what is the
**                         total/average/number of", ... or asking "which X
**                         has the most ..." and several rows returned; or
**                         a list asked ("list", "show", "names of all")
**                         and one count/sum/avg returned. Questions with
**                         words of grouping (each, per, different ...),
**                         ordering or several asks are left alone.
*/

enum check_kind {
    CHECK_JOIN_NOT_FK,
    CHECK_CROSS_JOIN,
    CHECK_AGG_NO_GROUP,
    CHECK_LITERAL_MISSING,
    CHECK_ALL_NULL,
    CHECK_SHAPE,
    CHECK_IDLE_JOIN,
    CHECK_VALUE_ELSEWHERE,
    CHECK_OUTER_REF,
    CHECK_SELF_COMPARE
};
#define CHECK_NKINDS 10

struct check_finding {
    enum check_kind kind;
    char *hint;          /* one or more sentences for the repair prompt */
};

struct vindex;

/*
** Check sql (for question, over db with schema s) before running it. The
** value check runs small read-only queries through db_run() and asks the
** value index vi (NULL: none) where a missing value is stored. On return
** *out holds *n findings (NULL and 0 when none), the caller's to free with
** check_findings_free(). Returns 0, or -1 when out of memory (*out is then
** NULL). SQL that cannot be analyzed gives no findings.
*/
int check_before(askdb_db *db, const struct db_schema *s,
                 struct vindex *vi, const char *question, const char *sql,
                 struct check_finding **out, int *n);

/* Check the result r of sql for question. Same contract as above. */
int check_after(const char *question, const char *sql, const askdb_result *r,
                struct check_finding **out, int *n);

void check_findings_free(struct check_finding *f, int n);

/* Remove the findings of kind k from f[0..*n) (a check switched off),
** keeping the order of the others. */
void check_drop_kind(struct check_finding *f, int *n, enum check_kind k);

/*
** For a query that returned no rows: each text value it compares a column
** with (= or IN) that is stored in other columns but not in that one
** (stored as the engine compares: byte for byte, or under a column's
** case-insensitive collation), as a sentence for the repair, e.g.
**   'Houston' is not a value of project.Plocation; it is stored in
**   dept_locations.Dlocation.
** The first 8 such values are looked for. Where: the value index vi
** finds it, or (vi NULL) one query into its own column, then one each
** into the columns of the query's tables and of the tables one foreign
** key from them (at most 40 columns; not views, and no table whose count
** or estimate is over the count cap, its own neither). Appended to b; at
** most 3 sentences. Returns how many, -1 when out of memory.
*/
int check_value_elsewhere(askdb_db *db, const struct db_schema *s,
                          struct vindex *vi, const char *sql, struct buf *b);

/*
** For sql over schema s: each column of a compared subquery's select list
** that reads the enclosing query's row (sqla_outer), as a sentence for
** the repair, e.g.
**   In the subquery over happy_hour_member, shop_id is not a column of
**   its tables: it is the outer query's shop.Shop_ID, so each outer row
**   gets its own value back. ...
** Appended to b; at most 3 sentences. Returns how many (0 also for SQL
** that cannot be analyzed), -1 when out of memory.
*/
int check_outer_refs(const struct db_schema *s, const char *sql,
                     struct buf *b);

/*
** For sql over schema s: each column compared with itself (sqla_self),
** as a sentence for the repair, e.g.
**   p.amount > amount compares payments.amount with itself, the same
**   value on both sides in every row. ...
** Appended to b; at most 3 sentences. Returns how many (0 also for SQL
** that cannot be analyzed), -1 when out of memory.
*/
int check_self_compares(const struct db_schema *s, const char *sql,
                        struct buf *b);

/* Name of a kind, e.g. "cross_join". Static string. */
const char *check_kind_str(enum check_kind k);

#endif
