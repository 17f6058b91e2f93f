/* cache.c - askdb's own cache directory and file checksums. */
#include "core/cache.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <xxhash.h>

/* mkdir -p for a path we own; 0 or -1 with errno. */
static int mkdirs(char *p)
{
    char *s;

    for (s = p + 1; *s; s++) {
        if (*s != '/')
            continue;
        *s = '\0';
        if (mkdir(p, 0700) && errno != EEXIST) {
            *s = '/';
            return -1;
        }
        *s = '/';
    }
    if (mkdir(p, 0700) && errno != EEXIST)
        return -1;
    return 0;
}

char *cache_path(const char *sub, int mkdir_it, char *err, size_t errlen)
{
    const char *dir = getenv("ASKDB_CACHE_DIR"), *mid = "";
    size_t n;
    char *p;

    if (!dir || !*dir) {
        dir = getenv("XDG_CACHE_HOME");
        mid = "/askdb";
        if (!dir || !*dir) {
            dir = getenv("HOME");
            mid = "/.cache/askdb";
        }
    }
    if (!dir || !*dir) {
        snprintf(err, errlen, "no cache directory: HOME is not set (set "
                              "ASKDB_CACHE_DIR)");
        return NULL;
    }
    n = strlen(dir) + strlen(mid) + 1 + (sub ? strlen(sub) : 0) + 1;
    p = malloc(n);
    if (!p) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    snprintf(p, n, "%s%s%s%s", dir, mid, sub && *sub ? "/" : "",
             sub ? sub : "");
    if (mkdir_it && mkdirs(p)) {
        snprintf(err, errlen, "cannot create cache directory '%s': %s", p,
                 strerror(errno));
        free(p);
        return NULL;
    }
    return p;
}

int cache_file_checksum(const char *path, char hex[33], char *err,
                        size_t errlen)
{
    XXH3_state_t *st;
    XXH128_hash_t h;
    unsigned char buf[1 << 16];
    size_t n;
    FILE *f;
    int rc = 0;

    f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "cannot read '%s': %s", path, strerror(errno));
        return -1;
    }
    st = XXH3_createState();
    if (!st || XXH3_128bits_reset(st) == XXH_ERROR) {
        snprintf(err, errlen, "out of memory");
        XXH3_freeState(st);
        fclose(f);
        return -1;
    }
    while ((n = fread(buf, 1, sizeof buf, f)) > 0)
        XXH3_128bits_update(st, buf, n);
    if (ferror(f)) {
        snprintf(err, errlen, "cannot read '%s': %s", path, strerror(errno));
        rc = -1;
    } else {
        h = XXH3_128bits_digest(st);
        snprintf(hex, 33, "%016llx%016llx", (unsigned long long)h.high64,
                 (unsigned long long)h.low64);
    }
    XXH3_freeState(st);
    fclose(f);
    return rc;
}
