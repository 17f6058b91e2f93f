/* analyze.h - what one query reads: tables, joins, aggregates, literals. */
#ifndef ASKDB_ANALYZE_H
#define ASKDB_ANALYZE_H

struct db_schema;

/*
** A lexical analysis of one SELECT or WITH statement (with subqueries,
** CTEs, derived tables and compound SELECTs), for the checks that run
** before execution. It is not a full SQL parser: it reads the clauses of
** each SELECT, the FROM items and their aliases, and simple comparisons,
** and resolves column references to schema tables through the aliases of
** the query level they are written in and then of the enclosing levels.
** Anything it cannot read is skipped, never guessed: a reference it cannot
** resolve (an output alias, a derived table's column, an ambiguous bare
** name) has table == NULL and is left out of joins and literals.
**
** The text is untrusted (model output): its length, the number of tokens,
** parenthesis nesting and the nesting of query levels are bounded, and
** input beyond a bound makes sqla_analyze() return 1 with an empty result.
*/

/* A column reference, resolved: table and column as the schema spells
** them (the table as schema_qname() names it: "sales.orders" for a table
** with a namespace); table is NULL when it could not be resolved. */
struct sqla_ref {
    char *table;
    char *column;
};

/* An equality between columns of two different FROM items (ON a.x = b.y,
** or WHERE a.x = b.y, also between a subquery and its outer query). */
struct sqla_join {
    struct sqla_ref a, b;
};

/* A column compared with a text literal: col = 'x', col != 'x', col IN
** ('x', ...) (one entry per value), col LIKE 'x' without wildcards, also
** with a double-quoted "x" that names no column (SQLite reads it as a
** string). literal is unquoted; op is "=", "!=", "IN", "NOT IN", "LIKE" or
** "NOT LIKE". Only comparisons whose column resolved are listed. */
struct sqla_literal {
    struct sqla_ref col;
    char *literal;
    char op[9];
};

/* A column of a subquery's select list, written bare, that none of the
** subquery's own FROM items has and that resolved to an item of an
** enclosing query instead: in WHERE id NOT IN (SELECT shop_id FROM
** members), shop_id is the outer row's own shop_id, handed back to it.
** Only subqueries on the right of IN, NOT IN or a comparison (=, <>, <,
** ...) are listed, not EXISTS ones, whose select list means nothing. */
struct sqla_outer {
    struct sqla_ref col;    /* the enclosing query's table and column */
    char **from;            /* the subquery's schema tables */
    int nfrom;
};

/* A comparison of a column with itself: both sides plain names of one
** column of one FROM item (ON t3.id = t3.id: a join that links t3 to
** nothing; WHERE c.balance > c.balance: never true). text is the
** comparison as written; on is 1 in an ON clause. Comparisons only (=,
** ==, !=, <>, <, <=, >, >=); each column once. */
struct sqla_self {
    struct sqla_ref col;
    char *text;
    int on;
};

struct sqla {
    char **tables;          /* schema tables read, once each (by
                               schema_qname()) */
    int ntables;
    struct sqla_join *joins;
    int njoins;
    struct sqla_join *idle; /* idle joins: a is the one column of its FROM
                               item that the query names, in ON a = b
                               with b another item's; the item adds
                               nothing but what the join does to the rows
                               (same level; no *, aggregate or GROUP BY,
                               nothing unresolved) */
    int nidle;
    char **cross_pairs;     /* "a x b": FROM items with nothing linking
                               them (schema tables only) */
    int ncross;
    int agg_without_group;  /* a SELECT mixes an aggregate with a bare
                               column of its own FROM and has no GROUP BY
                               (and no WHERE col = constant fixing it) */
    char *agg_func;         /* e.g. "count", when agg_without_group */
    char *bare_col;         /* e.g. "customers.country", likewise */
    struct sqla_literal *lits;
    int nlits;
    int select_star;        /* the statement's first SELECT lists * or t.* */
    struct sqla_outer *outer;
    int nouter;
    struct sqla_self *self;
    int nself;
};

/*
** Analyze sql against schema s (names are matched case-insensitively).
** Returns 0 on success, -1 when out of memory, 1 when the text is not a
** query it can read (garbage, over a bound); *out is then valid and empty
** or partial, and must be freed with sqla_free() in every case.
*/
int sqla_analyze(const char *sql, const struct db_schema *s,
                 struct sqla *out);

/* Free what sqla_analyze() filled in; a no-op on a zeroed struct. */
void sqla_free(struct sqla *a);

/*
** Re-qualify columns written under the wrong table: a qualified column
** (p.amount) whose qualifier names a FROM item whose table lacks it, or
** names no FROM item at all, is qualified instead by the one FROM item of
** that item's query level (for an unknown qualifier, of the reference's
** own level) whose table has the column. Scopes stay apart: a subquery's
** items never take an outer reference, nor the other way round; a level
** with a derived table (unknown columns) or two owners changes nothing.
** Returns how many qualifiers changed: then *out is the new statement
** and *what (when what is not NULL) says "p.amount -> o.amount, ...",
** both malloc()ed; 0 with *out NULL when nothing changes; -1 when out of
** memory.
*/
int sqla_requalify(const char *sql, const struct db_schema *s, char **out,
                   char **what);

/*
** Bring in the table a column lives in: a column (bare, or under a
** qualifier whose table lacks it) that no table of its query level has,
** that exactly one table of the schema has, linked to exactly one table of
** that level by exactly one foreign key, gets that table joined after the
** level's FROM clause (JOIN t [AS Tn] ON Tn.key = item.key, the alias
** T<n+1> when the query names its tables T1, T2, ...) and every such
** reference of the level re-qualified by it. One table per call. Returns
** 1 with *out (and *what, "x.col: JOIN ...") malloc()ed, 0 with *out NULL
** when nothing fits, -1 when out of memory.
*/
int sqla_join_missing(const char *sql, const struct db_schema *s, char **out,
                      char **what);

/*
** Compare as text: the comparison whose operator (=, <>, !=, <, <=, >, >=)
** starts at byte pos of sql, between two operands that are each a column
** ([schema.][table.]column) or a literal, gets both operands wrapped in
** CAST(... AS TEXT). For an engine that refuses to compare a number with
** text (PostgreSQL: "operator does not exist: bigint = text", at pos),
** where Spider-style schemas key one table by an INTEGER column and
** another by a TEXT one. Returns 1 with *out (and *what, "T1.id = T2.id
** compared as text") malloc()ed, 0 with *out NULL when pos starts no such
** comparison (or the text is not one sqla_analyze() can read: over a
** bound, an unterminated token, unbalanced parentheses), -1 when out of
** memory.
*/
int sqla_cast_compare(const char *sql, int pos, char **out, char **what);

#endif
