/* extract.h - take one SQL statement out of untrusted model text. */
#ifndef ASKDB_EXTRACT_H
#define ASKDB_EXTRACT_H

#include <stddef.h>

/*
** The model's reply is untrusted text. sqlx_extract() finds the statement
** in it, after a reasoning model's "<think>...</think>" at its start (a
** draft there is not the answer; thoughts that never end give none): the
** "sql" string of a reply that is a JSON object, else the first
** ```sql (or ~~~sql) fenced block (or the first fenced block of any tag
** that starts with a statement word, or the "sql" of a ```json block),
** else the text from the first
** SELECT/WITH keyword that starts a line or is in capitals, else the text
** when it begins with any statement word (so that a write is refused, not
** missed). It strips trailing semicolons and blanks.
** sqlx_check_readonly() then makes sure the text is exactly one statement
** that begins with SELECT or WITH (a lexical check; the database guard
** does the real one).
*/

/* Returns a malloc()ed statement, or NULL when the text holds none (or out
** of memory; *why says which, a static string). Linear in the text's
** length: a WITH in prose counts when its CTE head ([RECURSIVE] name
** [(columns)] AS) ends within SQLX_CTE_HEAD_MAX bytes after it, and a
** fenced block's look reads that block only. */
char *sqlx_extract(const char *text, const char **why);
#define SQLX_CTE_HEAD_MAX 1024

/*
** 0 when sql is one statement starting with SELECT, WITH or VALUES (or a
** parenthesized SELECT); otherwise -1 with the reason in why (why_len
** bytes), suitable to feed back to the model.
*/
int sqlx_check_readonly(const char *sql, char *why, size_t why_len);

/*
** 1 when sql is, or holds, a statement that changes something: one that
** starts with a word other than SELECT, WITH, VALUES, TABLE, FROM, SHOW,
** DESCRIBE, DESC, EXPLAIN, PRAGMA or DuckDB's PIVOT, UNPIVOT and
** SUMMARIZE (an INSERT, a DROP, a SET, an ATTACH...); a PRAGMA that sets
** ("= value", or "(value)" unless the pragma reads with an argument:
** table_info(t), index_list(t), integrity_check(t)...) or acts by its
** name alone (SQLite's PRAGMA optimize, shrink_memory, wal_checkpoint and
** incremental_vacuum; DuckDB's PRAGMA enable_profiling,
** force_checkpoint...; not PRAGMA version, journal_mode or show_tables,
** which read), its name quoted or
** not (PRAGMA "enable_profiling", main.[table_info](t)); a SELECT with an
** INTO of its own (PostgreSQL's SELECT ... INTO t makes a table, MySQL's
** INTO OUTFILE or @var writes; not an INTO inside parentheses, nor
** UNPIVOT's INTO NAME); or a WITH whose CTE body or statement inserts,
** updates, deletes or merges (the word after "AS (" or after the ')'
** that closes a body: not FOR UPDATE, nor a column named update, nor
** "SELECT (update)"). 0 for reads, even those the guard refuses for what
** they call (a function that reads a file). Word by word, not parsed:
** "SELECT 1; DELETE ..." is 1.
*/
int sqlx_changes(const char *sql);

/* Length of the token starting at p: string, quoted identifier, comment,
** number, word or single punctuation; *kind gets one of SQLX_*. */
enum { SQLX_END, SQLX_SPACE, SQLX_COMMENT, SQLX_STRING, SQLX_IDENT,
       SQLX_WORD, SQLX_NUMBER, SQLX_PUNCT, SQLX_UNTERMINATED };
size_t sqlx_token(const char *p, int *kind);

#endif
