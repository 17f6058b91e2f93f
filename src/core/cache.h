/* cache.h - askdb's own cache directory (indexes, learned pairs, models). */
#ifndef ASKDB_CACHE_H
#define ASKDB_CACHE_H

#include <stddef.h>

/*
** The cache lives in ${ASKDB_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/askdb}
** (the same place scripts/models.sh puts the models). Only askdb's own
** files go there; a user's database is never written or created.
*/

/*
** Path of sub (e.g. "values") inside the cache directory, malloc()ed. With
** mkdir set, the directory path/sub is created (mode 0700, parents too).
** NULL on failure with the reason in err.
*/
char *cache_path(const char *sub, int mkdir_it, char *err, size_t errlen);

/*
** A 128-bit checksum (XXH3) of a file's whole content as 32 lowercase hex
** digits plus NUL in hex. Returns 0, or -1 with the reason in err.
*/
int cache_file_checksum(const char *path, char hex[33], char *err,
                        size_t errlen);

#endif
