/* outfile.c - refuse to write over SQLite files (see outfile.h). */
#include "core/outfile.h"

#include <fcntl.h>
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

const char *outfile_refusal(const char *path)
{
    unsigned char h[16];
    struct stat st;
    ssize_t got;
    size_t i;
    int fd;

    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
        return NULL;
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL; /* opening it for writing will say why */
    got = pread(fd, h, sizeof h, 0);
    close(fd);
    for (i = 0; i < sizeof sqlite_files / sizeof *sqlite_files; i++)
        if (got >= (ssize_t)sqlite_files[i].len &&
            memcmp(h, sqlite_files[i].magic, sqlite_files[i].len) == 0)
            return sqlite_files[i].why;
    return NULL;
}

/* The public name (askdb.h). */
const char *askdb_output_refusal(const char *path)
{
    return outfile_refusal(path);
}
