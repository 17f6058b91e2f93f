/* grammar.h - a GBNF grammar that lets a local model write only read-only
** SQL over one database's own tables and columns. */
#ifndef ASKDB_GRAMMAR_H
#define ASKDB_GRAMMAR_H

struct db_schema;

/*
** Build the grammar for constrained decoding with llama.cpp
** (llm_request.grammar; root rule "root"). It admits exactly one reply of
** the form
**
**     ```sql\n<one SELECT or WITH statement>[;]\n```
**
** - the fenced block the prompt asks for - in which every table and column
** name is one of the schema's (bare, case-insensitive, when a plain word
** that is neither a hard SQLite keyword nor one of the schema's reserved
** words, db_schema.reserved; or in "", `` or [] quotes). Aliases and literals are free. The design,
** what it allows and where it is looser than SQL is described at the top
** of grammar.c.
** Returns a malloc()ed NUL-terminated string the caller frees, or NULL
** when out of memory. An empty schema gives a grammar that still admits
** queries without table or column names (SELECT 1).
*/
char *sqlx_grammar(const struct db_schema *s);

/* The SQL dialects the grammar knows: functions and syntax differ. */
enum sqlx_dialect { SQLX_SQLITE, SQLX_POSTGRES, SQLX_MARIADB, SQLX_DUCKDB };

/* The dialect a driver names ("SQLite", "PostgreSQL", "MariaDB",
** "DuckDB"); SQLite for NULL or any other name. */
enum sqlx_dialect sqlx_dialect_of(const char *name);

/*
** sqlx_grammar() for a dialect: its built-in functions instead of
** SQLite's and, beyond SQLite, EXTRACT(field FROM x) and INTERVAL
** literals; PostgreSQL and DuckDB also x::type and [NOT] ILIKE. Quoting
** is the same ("name" is standard; MariaDB runs in ANSI mode). The SQLite
** grammar is exactly sqlx_grammar()'s.
*/
char *sqlx_grammar_dialect(const struct db_schema *s, enum sqlx_dialect d);

#endif
