/* schema.h - the database schema as askdb sees it, and its prompt rendering. */
#ifndef ASKDB_SCHEMA_H
#define ASKDB_SCHEMA_H

/*
** A schema is read once per database handle by the driver and owned by it.
** Names keep the database's own spelling; lookups are case-insensitive,
** as SQL identifiers are.
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
    char *table;         /* referenced table */
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
};

struct db_schema {
    struct db_table *tables;
    int ntables;
    int case_folds;      /* the engine folds bare names to lower case
                            (PostgreSQL): a name with a capital letter is
                            rendered quoted, as it must be written */
};

void schema_free(struct db_schema *s);

/* Free what t holds and zero it (t itself belongs to its schema). */
void schema_free_table(struct db_table *t);

/* Table by name (case-insensitive) or NULL. */
const struct db_table *schema_table(const struct db_schema *s,
                                    const char *name);

/* Column of t by name (case-insensitive) or NULL. */
const struct db_column *schema_column(const struct db_table *t,
                                      const char *name);

struct buf;

/* Append an identifier as the model should write it: bare when it is a
** plain word, double-quoted (with "" escaping) otherwise. */
void schema_put_ident(struct buf *b, const char *name);

/* The same for schema s: also quoted when s->case_folds and the name has
** a capital letter. */
void schema_put_name(struct buf *b, const struct db_schema *s,
                     const char *name);

/*
** Render the schema for the prompt as compact CREATE TABLE text, foreign
** keys as constraints, unique indexes, row counts and sample values as
** comments. Returns a malloc()ed string, NULL when out of memory.
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
