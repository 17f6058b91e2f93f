/* outfile.h - files askdb writes for the user are never SQLite files. */
#ifndef ASKDB_OUTFILE_H
#define ASKDB_OUTFILE_H

/*
** The trace (--trace), eval's output (--out) and report (--report) are
** appended to or replaced at a path the user names, which may by mistake
** be the database being asked (`askdb ask --trace shop.db shop.db ...`)
** or another one. Such a path is refused before anything is opened for
** writing, so that askdb keeps its promise never to write a database.
*/

/*
** NULL when askdb may write path: it does not exist, is not a regular file
** (a terminal, a pipe), or is not an SQLite database, WAL or rollback
** journal (by the file's first bytes), and its name, links resolved, is
** not that of a database's rollback journal, write-ahead log or
** shared-memory index ("DB-journal", "DB-wal", "DB-shm" beside a file DB
** that is an SQLite database), whether or not that file exists yet: SQLite
** would take a trace there for the database's own, delete it, or find
** the database locked. Otherwise a static reason, e.g.
** "it is an SQLite database (askdb never writes to databases; choose
** another file)". NULL or "" is refused too: "no file named"; and "-",
** standard output to many programs, which would be a file called "-".
*/
const char *outfile_refusal(const char *path);

/* outfile_refusal(), and refused too when path is the very file db names
** (any name of it: links resolved, hard links), which a CSV file's first
** bytes cannot tell. db may be NULL or a URL (then only the first). */
const char *outfile_refusal_for(const char *path, const char *db);

/* Whether a and b (either may be NULL) name one existing file, under any
** names: links resolved, hard links. */
int outfile_same_file(const char *a, const char *b);

/* What a regular file is by its first bytes (the same test as
** outfile_refusal()'s): FILE_OTHER for none, for anything but a regular
** file, or when it cannot be read. */
enum file_kind {
    FILE_OTHER, FILE_SQLITE, FILE_SQLITE_WAL, FILE_SQLITE_JOURNAL,
    FILE_DUCKDB, FILE_PARQUET
};
enum file_kind outfile_kind(const char *path);

/* The companion-name half of outfile_refusal() alone, for files that are
** SQLite databases of askdb's own (the memory store): NULL, or why not. */
const char *outfile_companion_refusal(const char *path);

#endif
