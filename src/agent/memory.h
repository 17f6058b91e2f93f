/* memory.h - verified question/SQL pairs per database, for few-shot prompts. */
#ifndef ASKDB_MEMORY_H
#define ASKDB_MEMORY_H

#include <stddef.h>

#include "askdb.h"
#include "core/buf.h"

/*
** The memory is one SQLite file askdb owns (default
** ${cache}/memory.sqlite, see core/cache.h), never the user's database.
** It holds pairs (db_key, question, sql, added_at), where db_key is the
** database's canonical absolute path (realpath): pairs follow the file,
** not its content, so they survive changes to the data. An FTS5 index
** over the questions (porter stemming, unicode61, diacritics removed)
** finds the stored questions most similar to a new one by bm25.
**
** A question is stored once per database: two questions are the same
** when they are equal after trimming, collapsing runs of white space to
** one space and lower-casing ASCII letters; adding it again replaces the
** SQL. memory_learn() is the verified way in: it runs the SQL through the
** database's read-only guard first. memory_add() stores without checking
** (for callers that verified already, and for tests).
**
** Ownership: every char * handed out is malloc()ed and the caller's;
** memory_pair arrays are freed with memory_pairs_free(). One handle is
** used by one thread at a time; several processes may share a file (a
** busy timeout waits for the other's write).
*/

struct memory;

/* One stored pair. score: how similar to the asked question (higher is
** more similar; -bm25), 0 in listings. */
struct memory_pair {
    char *question;
    char *sql;
    char *added_at;          /* UTC, "YYYY-MM-DDTHH:MM:SSZ" */
    double score;
};

/* Longest question accepted, in characters: the one a question may have
** (ASKDB_MAX_QUESTION), so that every question asked can be learned; the
** longest SQL, in bytes. */
#define MEMORY_MAX_QUESTION ASKDB_MAX_QUESTION
#define MEMORY_MAX_SQL 65536

/*
** Open the store at path (NULL = ${cache}/memory.sqlite). With create set,
** a missing or empty file is accepted when it can be made (its folder
** exists and is writable; for the default store, the nearest folder of
** the cache directory that exists, the rest made with the store) and is
** made, with its schema, by the first pair stored: a refused pair or a
** batch that stores nothing leaves no file, and until then the handle
** reads as an empty store. Returns 0 and *out, or 1 when the store does
** not exist and create is 0 (*out NULL: "nothing learned yet"), or with
** the reason in err MEMORY_OPEN_REFUSED: an empty path, a database's
** companion file, not an askdb memory store (any other SQLite database is
** refused and left untouched), a newer format; MEMORY_OPEN_FAILED: the
** file or its folder cannot be opened, read or created (I/O, a missing
** folder, permissions, locked, out of memory).
*/
#define MEMORY_OPEN_REFUSED (-1)
#define MEMORY_OPEN_FAILED (-2)
int memory_open(const char *path, int create, struct memory **out,
                char *err, size_t errlen);
void memory_close(struct memory *m);

/* The file the handle uses (borrowed, lives with m). */
const char *memory_file(const struct memory *m);

/* SQLite's message of the last failure on m's store (borrowed, until the
** next call on m), or "" when the store is not made yet. */
const char *memory_errmsg(struct memory *m);

/*
** The db_key of a database path: its canonical absolute path (realpath),
** or for a server's URL the URL as askdb labels it (db_redact(): without
** the password), so that the URL a user types, password and all, names
** the pairs learned through it. malloc()ed. NULL (errno set) when the
** file cannot be resolved.
*/
char *memory_db_key(const char *db_path);

/*
** Store one pair as given (no verification). question and sql are trimmed;
** empty or too long text, or text that is not UTF-8, is an error.
** Returns 0 (added), 1 (replaced the SQL of the same question) or -1 with
** the reason in err.
*/
int memory_add(struct memory *m, const char *db_key, const char *question,
               const char *sql, char *err, size_t errlen);

/* What memory_learn() returns besides 0 (added) and 1 (replaced). */
#define MEMORY_REJECTED (-1)     /* the pair is refused; err says why */
#define MEMORY_ERROR (-2)        /* the store failed; err says why */

/*
** Verify a pair on db, then store it under db's db_key. Verified means
** the SQL passes the read-only guard's check (exactly one read-only
** statement, see db/db.h) and runs without error within db's limits; a
** result with no rows is accepted. *out (if not NULL) gets the row
** count of the run (capped at db's max_rows and max_bytes: truncated
** says when a cap stopped it) and whether the question was replaced.
** Never writes to db. Returns 0, 1, MEMORY_REJECTED or MEMORY_ERROR,
** with the reason in err.
*/
int memory_learn(struct memory *m, askdb_db *db, const char *question,
                 const char *sql, askdb_learned *out, char *err,
                 size_t errlen);

/*
** Group many adds into one transaction (much faster on disk): begin, then
** memory_add()/memory_learn() as usual, then end with commit set (keep
** them) or not (drop them). Returns 0 or -1 with the reason in err. A new
** store's batch begins when its first pair makes the store.
*/
int memory_batch_begin(struct memory *m, char *err, size_t errlen);
int memory_batch_end(struct memory *m, int commit, char *err, size_t errlen);

/* The most pairs memory_similar() gives (askdb_config.memory's cap). */
#define MEMORY_MAX_K 100

/*
** The k stored pairs of db_key whose questions are most similar to
** question, best first (at most MEMORY_MAX_K). Any text is a valid question: it is cut into
** words and each becomes a quoted FTS5 string, so FTS5 syntax in it
** (quotes, NEAR, AND, *, ^, :) is only text. No words, no match or k <= 0
** give *n = 0. Returns 0, or -1 (store error; *out NULL, *n 0).
*/
int memory_similar(struct memory *m, const char *db_key,
                   const char *question, int k, struct memory_pair **out,
                   int *n);

/* Every pair of db_key, oldest first (score 0). Returns 0 or -1. */
int memory_list(struct memory *m, const char *db_key,
                struct memory_pair **out, int *n);

/*
** Remove the pair of db_key with this question (same folding as for
** duplicates), or every pair of db_key when question is NULL. Returns the
** number removed (0 when there was none) or -1 with the reason in err.
*/
int memory_forget(struct memory *m, const char *db_key,
                  const char *question, char *err, size_t errlen);

void memory_pairs_free(struct memory_pair *p, int n);

/* Free what one pair holds (not the pair itself). */
void memory_pair_clear(struct memory_pair *p);

/*
** The words part of the FTS5 query memory_similar() uses for question:
** its words (runs of letters, digits, '_' and non-ASCII bytes; at most 32
** of at most 64 bytes; English function words such as "the" and repeats
** left out) each as a quoted string, joined with OR. "" when there are
** no words; NULL when out of memory. Exposed for tests.
*/
char *memory_fts_query(const char *question);

/*
** Append pairs to a prompt: nothing when n is 0, else
**     Examples of questions about this database and their SQL:
**     Q: <question>
**     SQL: <sql>
** for each pair. Line breaks in a question become spaces.
*/
void memory_render(struct buf *b, const struct memory_pair *p, int n);

#endif
