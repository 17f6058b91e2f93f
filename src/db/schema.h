/* schema.h - the database schema as askdb sees it, and its prompt rendering. */
#ifndef ASKDB_SCHEMA_H
#define ASKDB_SCHEMA_H

#include <stddef.h>

/*
** A schema is read once per database handle by the driver and owned by it.
** Names keep the database's own spelling; lookups are case-insensitive,
** as SQL identifiers are.
**
** Namespaces (PostgreSQL's and DuckDB's schemas): a table that its name
** alone reaches (on the search path, DuckDB's main) has no namespace; a
** table of another schema, or one that a table of the same name earlier
** on the search path hides, has one, and askdb calls it by its qualified
** name "namespace.name" (qname) wherever it names tables as strings: the
** lists of sqla_analyze(), foreign keys' table, hints, the value index,
** the JSON schema. schema_table() takes either kind of name. SQLite's
** tables never have one.
*/

struct db_column {
    char *name;
    char *type;          /* declared type, "" when none */
    int notnull;
    char *dflt;          /* default expression text, or NULL */
    int pk;              /* 1-based position in the primary key, 0 = not */
    char **samples;      /* distinct sample text values */
    int nsamples;
    char *comment;       /* the engine's comment on it (COMMENT ON), or NULL */
};

struct db_fkey {
    char *from;          /* column in this table */
    char *table;         /* referenced table, as schema_qname() names it */
    char *to;            /* referenced column, NULL = its primary key */
};

struct db_table {
    char *name;
    int is_view;
    struct db_column *cols;
    int ncols;
    struct db_fkey *fks;
    int nfks;
    char **uniques;      /* unique indexes as "col1, col2" */
    int nuniques;
    long rows;           /* row count, -1 unknown (views) */
    int rows_capped;     /* rows is a lower bound */
    int rows_estimated;  /* rows is the engine's statistics estimate */
    char *comment;       /* the engine's comment on it, or NULL */
    char *namespace;     /* its schema when the name alone does not reach
                            it, else NULL (see above) */
    char *qname;         /* "namespace.name" when namespace is set, else
                            NULL (schema_set_namespace() sets both) */
    int samples_pending; /* its samples (and exact small count) are not
                            read yet: a large schema whose driver stopped
                            sampling at its time budget; db_fill_samples()
                            reads them */
};

struct db_schema {
    struct db_table *tables;
    int ntables;
    int case_folds;      /* the engine folds bare names to lower case
                            (PostgreSQL): a name with a capital letter is
                            rendered quoted, as it must be written */
    char **reserved;     /* the engine's own words that a name may not be
                            written bare as, lower case, sorted, as its
                            driver read them from the server
                            (schema_add_reserved()): names that are one
                            are rendered quoted, and the grammar takes
                            them only quoted; NULL on SQLite, whose
                            keywords sqlite3_keyword_check() knows */
    int nreserved;
    int says_quoted;     /* messages to the model (repair hints, checks'
                            findings) write names as a query must
                            (schema_say_name()): every engine but SQLite,
                            whose messages keep the bare names that its
                            evaluation figures were measured with */
};

void schema_free(struct db_schema *s);

/* Free what t holds and zero it (t itself belongs to its schema). */
void schema_free_table(struct db_table *t);

/* Table by name (case-insensitive) or NULL: a table without a namespace
** by its name, else one with a namespace by its qualified name. */
const struct db_table *schema_table(const struct db_schema *s,
                                    const char *name);

/*
** The table a query's FROM item nsp.name (nsp NULL when unqualified)
** reaches: the table of namespace nsp and that name when s has one, else
** the table without a namespace of that name (public.orders, main.orders:
** the schema of the tables the name alone reaches is not recorded). NULL
** when there is none.
*/
const struct db_table *schema_table_in(const struct db_schema *s,
                                       const char *nsp, const char *name);

/* What askdb calls t in lists, hints and lookups: its qualified name when
** it has a namespace, else its name (borrowed from t). */
const char *schema_qname(const struct db_table *t);

/* Give t (its name set) the namespace nsp (copied), and its qualified
** name. 0, or -1 when out of memory. */
int schema_set_namespace(struct db_table *t, const char *nsp);

/* Column of t by name (case-insensitive) or NULL. */
const struct db_column *schema_column(const struct db_table *t,
                                      const char *name);

/* Grow one of a schema's arrays, *arrp (a pointer to the array of *n
** elements of size sz), by one zeroed element, and return it: what the
** drivers fill tables, columns, keys and samples with. NULL when out of
** memory (the array and *n unchanged). */
void *schema_push(void *arrp, int *n, size_t sz);

/* A sample value is at most this many bytes: a longer one costs prompt
** tokens and rarely helps to write a filter. */
#define SCHEMA_SAMPLE_MAXLEN 40

/* Whether v is one of c's sample values. */
int schema_has_sample(const struct db_column *c, const char *v);

/* Keep v (copied) as a sample value of c, unless c has per_col of them
** already or v is NULL, empty, longer than SCHEMA_SAMPLE_MAXLEN bytes or
** one of them. 0, or -1 when out of memory (c unchanged). */
int schema_add_sample(struct db_column *c, const char *v, int per_col);

/* Add word (copied, lower case) to s's reserved words, in order; a word
** already there is not added again. 0, or -1 when out of memory. */
int schema_add_reserved(struct db_schema *s, const char *word);

/* Whether word is one of s's reserved words (case-insensitive). */
int schema_reserved(const struct db_schema *s, const char *word);

struct buf;

/* Append an identifier as the model should write it in SQLite: bare when
** it is a plain word and not one of SQLite's keywords, double-quoted
** (with "" escaping) otherwise. */
void schema_put_ident(struct buf *b, const char *name);

/* The same for schema s: also quoted when s->case_folds and the name has
** a capital letter, and when it is one of s's reserved words. (Every
** engine takes the double quote: MariaDB's session runs in ANSI_QUOTES
** mode.) */
void schema_put_name(struct buf *b, const struct db_schema *s,
                     const char *name);

/* Append t's name as the model should write it in a query on s: its
** namespace (when it has one), a dot and its name, each as
** schema_put_name() writes it ("sales.orders", "\"Sales\".orders"). */
void schema_put_table(struct buf *b, const struct db_schema *s,
                      const struct db_table *t);

/* Append t's name for a statement askdb writes itself: each part always
** double-quoted ("orders", "sales"."orders"). */
void schema_put_quoted_table(struct buf *b, const struct db_table *t);

/*
** Append a name in a message to the model (a repair hint, a check's
** finding): when s->says_quoted as a query must write it
** (schema_put_name(), schema_put_table()), else as it is stored. A
** table named by a string (schema_qname()'s) is written as
** schema_put_table() writes that table when s has it.
*/
void schema_say_name(struct buf *b, const struct db_schema *s,
                     const char *name);
void schema_say_table(struct buf *b, const struct db_schema *s,
                      const struct db_table *t);
void schema_say_qname(struct buf *b, const struct db_schema *s,
                      const char *qname);

/*
** Render the schema for the prompt as compact CREATE TABLE text, foreign
** keys as constraints, unique indexes, row counts and sample values as
** comments; views first, then tables, each in the driver's order.
** Returns a malloc()ed string, NULL when out of memory.
*/
char *schema_render(const struct db_schema *s);

/*
** The same rendering for part of the schema: only the tables keep_table
** marks ([ntables], NULL = all) and of those only the columns
** keep_col[table] marks ([ncols], NULL or a NULL row = all). A key, unique
** index or foreign key on a hidden column is hidden with it, and so is a
** foreign key to a hidden table. With both masks NULL the text is exactly
** schema_render()'s. Returns a malloc()ed string ("" when nothing is
** kept), NULL when out of memory.
*/
char *schema_render_subset(const struct db_schema *s,
                           const unsigned char *keep_table,
                           unsigned char *const *keep_col);

#endif
