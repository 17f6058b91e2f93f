/* outfile.c - refuse to write over SQLite and DuckDB files (see outfile.h). */
#define _XOPEN_SOURCE 700 /* realpath() */
#include "core/outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "askdb.h"

#define NEVER " (askdb never writes to databases; choose another file)"

/* The first bytes of the files SQLite keeps for a database. */
static const struct {
    const char *magic;
    size_t len;
    const char *why;
} sqlite_files[] = {
    {"SQLite format 3", 16, "it is an SQLite database" NEVER},
    {"\x37\x7f\x06\x82", 4, "it is an SQLite write-ahead log" NEVER},
    {"\x37\x7f\x06\x83", 4, "it is an SQLite write-ahead log" NEVER},
    {"\xd9\xd5\x05\xf9\x20\xa1\x63\xd7", 8, "it is an SQLite journal" NEVER},
};

/* sqlite_kind() of a DuckDB database and of a Parquet file. */
#define DUCKDB_KIND 100
#define PARQUET_KIND 101

/* Which of sqlite_files[] the file at path is, by its first bytes,
** DUCKDB_KIND for a DuckDB database, PARQUET_KIND for a Parquet file
** (DuckDB asks those in place); -1 for none (or no regular file, or
** unreadable). */
static int sqlite_kind(const char *path)
{
    unsigned char h[16];
    struct stat st;
    ssize_t got;
    size_t i;
    int fd;

    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
        return -1;
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1; /* opening it for writing will say why */
    got = pread(fd, h, sizeof h, 0);
    close(fd);
    /* A DuckDB database: "DUCK" after its 8-byte checksum. */
    if (got >= 12 && memcmp(h + 8, "DUCK", 4) == 0)
        return DUCKDB_KIND;
    if (got >= 4 && memcmp(h, "PAR1", 4) == 0)
        return PARQUET_KIND;
    for (i = 0; i < sizeof sqlite_files / sizeof *sqlite_files; i++)
        if (got >= (ssize_t)sqlite_files[i].len &&
            memcmp(h, sqlite_files[i].magic, sqlite_files[i].len) == 0)
            return (int)i;
    return -1;
}

/*
** The name path will be created or opened as, links resolved, in out
** (PATH_MAX bytes): realpath() of the file when it exists, else of the
** directory it would be made in plus its last name. A dangling link is
** followed to where it points (up to 40 links). 0 on success, -1 when
** the name cannot be resolved (the open for writing will say why).
*/
static int resolve_name(const char *path, char *out)
{
    char cur[PATH_MAX], dir[PATH_MAX], link[PATH_MAX];
    const char *base, *slash;
    struct stat st;
    ssize_t n;
    int hops;

    if (snprintf(cur, sizeof cur, "%s", path) >= (int)sizeof cur)
        return -1;
    for (hops = 0; hops < 40; hops++) {
        if (realpath(cur, out))
            return 0;
        if (lstat(cur, &st) == 0 && S_ISLNK(st.st_mode)) {
            n = readlink(cur, link, sizeof link - 1);
            if (n < 0)
                return -1;
            link[n] = '\0';
            slash = strrchr(cur, '/');
            if (link[0] == '/' || !slash) {
                memcpy(cur, link, (size_t)n + 1);
            } else {
                int dl = (int)(slash - cur);
                char tmp[PATH_MAX];
                if (snprintf(tmp, sizeof tmp, "%.*s/%s", dl, cur, link) >=
                    (int)sizeof tmp)
                    return -1;
                memcpy(cur, tmp, sizeof tmp);
            }
            continue;
        }
        /* Missing: the directory must exist; the last name is kept. */
        slash = strrchr(cur, '/');
        base = slash ? slash + 1 : cur;
        if (!slash)
            snprintf(dir, sizeof dir, ".");
        else if (slash == cur)
            snprintf(dir, sizeof dir, "/");
        else
            snprintf(dir, sizeof dir, "%.*s", (int)(slash - cur), cur);
        if (!realpath(dir, link))
            return -1;
        if (snprintf(out, PATH_MAX, "%s/%s", strcmp(link, "/") ? link : "",
                     base) >= PATH_MAX)
            return -1;
        return 0;
    }
    return -1;
}

/* The suffixes SQLite adds to a database's name for its companion files,
** and why writing one is refused. */
static const struct {
    const char *suffix;
    const char *why;
} companions[] = {
    {"-journal", "it is the name of an SQLite database's rollback journal"
                 NEVER},
    {"-wal", "it is the name of an SQLite database's write-ahead log" NEVER},
    {"-shm", "it is the name of an SQLite database's shared-memory index"
             NEVER},
    {".wal", "it is the name of a DuckDB database's write-ahead log" NEVER},
};

const char *outfile_companion_refusal(const char *path)
{
    char real[PATH_MAX], db[PATH_MAX];
    size_t i, n, k;

    if (resolve_name(path, real) != 0)
        return NULL;
    n = strlen(real);
    for (i = 0; i < sizeof companions / sizeof *companions; i++) {
        k = strlen(companions[i].suffix);
        if (n <= k || strcmp(real + n - k, companions[i].suffix) != 0)
            continue;
        memcpy(db, real, n - k);
        db[n - k] = '\0';
        if (sqlite_kind(db) == (companions[i].suffix[0] == '.' ? DUCKDB_KIND
                                                               : 0))
            return companions[i].why;
    }
    return NULL;
}

const char *outfile_refusal(const char *path)
{
    int kind;

    if (!path || !*path)
        return "no file named";
    /* Standard output to many programs; here it was a file called "-"
    ** in the working directory, made without a word. */
    if (strcmp(path, "-") == 0)
        return "'-' names no file here (askdb writes it to a file, not to "
               "standard output): give a file name, or ./- for one called -";
    kind = sqlite_kind(path);
    if (kind == DUCKDB_KIND)
        return "it is a DuckDB database" NEVER;
    if (kind == PARQUET_KIND)
        return "it is a Parquet file, which askdb reads as a database" NEVER;
    return kind >= 0 ? sqlite_files[kind].why
                     : outfile_companion_refusal(path);
}

enum file_kind outfile_kind(const char *path)
{
    int kind = sqlite_kind(path);

    return kind == DUCKDB_KIND    ? FILE_DUCKDB
           : kind == PARQUET_KIND ? FILE_PARQUET
           : kind == 0            ? FILE_SQLITE
           : kind == 1 || kind == 2 ? FILE_SQLITE_WAL
           : kind == 3            ? FILE_SQLITE_JOURNAL
                                  : FILE_OTHER;
}

const char *outfile_refusal_for(const char *path, const char *db)
{
    const char *why = outfile_refusal(path);

    if (why)
        return why;
    /* The same file under any name (links, "./x.csv", a hard link): a CSV
    ** or TSV file has no first bytes of its own to tell it by. */
    if (outfile_same_file(path, db))
        return "it is the database being asked" NEVER;
    return NULL;
}

int outfile_same_file(const char *a, const char *b)
{
    struct stat sa, sb;

    return a && b && stat(a, &sa) == 0 && stat(b, &sb) == 0 &&
           sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/* The public names (askdb.h). */
const char *askdb_output_refusal(const char *path)
{
    return outfile_refusal(path);
}

const char *askdb_output_refusal_for(const char *path, const char *db)
{
    return outfile_refusal_for(path, db);
}
