/* config.c - `askdb mcp --config FILE`: the file's settings as options. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "config.h"

/* Config files are small; a bigger one is a mistake. */
#define CONFIG_MAX (1 << 20)

/* Append "--KEY=VALUE" (value NULL: "--KEY"; key NULL: VALUE, an
** operand) to v; -1 when out of memory. */
static int push(char ***v, int *n, const char *key, const char *value)
{
    size_t len = (key ? strlen(key) + 3 : 0) + (value ? strlen(value) : 0)
                 + 2;
    char **grown = realloc(*v, (size_t)(*n + 2) * sizeof **v), *s;

    if (!grown)
        return -1;
    *v = grown;
    s = malloc(len);
    if (!s)
        return -1;
    snprintf(s, len, "%s%s%s%s", key ? "--" : "", key ? key : "",
             key && value ? "=" : "", value ? value : "");
    (*v)[(*n)++] = s;
    (*v)[*n] = NULL;
    return 0;
}

/* NAME=PATH (name may be NULL), PATH taken from dir when relative. */
static int push_db(char ***v, int *n, const char *dir, const char *name,
                   const char *path)
{
    char buf[8192];
    int len;

    len = snprintf(buf, sizeof buf, "%s%s%s%s", name ? name : "",
                   name ? "=" : "", path[0] == '/' ? "" : dir,
                   path[0] == '/' ? "" : "/");
    if (len < 0 || (size_t)len + strlen(path) >= sizeof buf)
        return -1;
    memcpy(buf + len, path, strlen(path) + 1);
    return push(v, n, name ? "db" : NULL, buf);
}

int mcp_config_argv(const char *path, int *argc, char ***argv, char *err,
                    size_t errlen)
{
    json_t *root, *dbs, *opts, *v;
    json_error_t jerr;
    char **out = NULL, dir[4096], num[64];
    const char *key, *slash;
    size_t i;
    int n = 0, rc = -1;

    *argc = 0;
    *argv = NULL;
    root = json_load_file(path, JSON_REJECT_DUPLICATES, &jerr);
    if (!root) {
        snprintf(err, errlen, "cannot read config '%s': %s (line %d)", path,
                 jerr.text, jerr.line);
        return -1;
    }
    slash = strrchr(path, '/');
    snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - path) : 1,
             slash ? path : ".");
    if (slash == path)
        snprintf(dir, sizeof dir, "/");
    dbs = json_object_get(root, "databases");
    opts = json_object_get(root, "options");
    if (!json_is_object(root) || (dbs && !json_is_object(dbs) &&
                                  !json_is_array(dbs)) ||
        (opts && !json_is_object(opts))) {
        snprintf(err, errlen, "config '%s': expected {\"databases\": "
                 "{NAME: PATH} or [PATH], \"options\": {FLAG: VALUE}}",
                 path);
        goto out;
    }
    if (json_is_array(dbs)) {
        json_array_foreach(dbs, i, v) {
            if (!json_is_string(v) || !*json_string_value(v)) {
                snprintf(err, errlen, "config '%s': databases[%zu] is not "
                         "a path", path, i);
                goto out;
            }
            if (push_db(&out, &n, dir, NULL, json_string_value(v)))
                goto nomem;
        }
    } else {
        json_object_foreach(dbs, key, v) {
            if (!json_is_string(v) || !*json_string_value(v)) {
                snprintf(err, errlen, "config '%s': database '%s' needs a "
                         "path", path, key);
                goto out;
            }
            if (push_db(&out, &n, dir, key, json_string_value(v)))
                goto nomem;
        }
    }
    json_object_foreach(opts, key, v) {
        if (strcmp(key, "config") == 0 || strcmp(key, "db") == 0) {
            snprintf(err, errlen, "config '%s': '%s' is not an option "
                     "here (databases go under \"databases\")", path, key);
            goto out;
        }
        if (json_is_true(v)) {
            if (push(&out, &n, key, NULL))
                goto nomem;
        } else if (json_is_string(v)) {
            if (push(&out, &n, key, json_string_value(v)))
                goto nomem;
        } else if (json_is_integer(v) || json_is_real(v)) {
            if (json_is_integer(v))
                snprintf(num, sizeof num, "%" JSON_INTEGER_FORMAT,
                         json_integer_value(v));
            else
                snprintf(num, sizeof num, "%g", json_real_value(v));
            if (push(&out, &n, key, num))
                goto nomem;
        } else if (!json_is_false(v)) {
            snprintf(err, errlen, "config '%s': option '%s' takes a "
                     "string, a number or true", path, key);
            goto out;
        }
    }
    *argc = n;
    *argv = out;
    out = NULL;
    rc = 0;
    goto out;
nomem:
    snprintf(err, errlen, "config '%s': out of memory or a path too long",
             path);
out:
    for (i = 0; out && out[i]; i++)
        free(out[i]);
    free(out);
    json_decref(root);
    return rc;
}
