/* config.c - `askdb mcp --config FILE`: the file's settings as options. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <getopt.h>
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

/* The option of opts called name (a flag without its dashes), or NULL;
** --config, --db and --help are not options of a config file. */
static const struct option *find_opt(const struct option *opts,
                                     const char *name)
{
    if (strcmp(name, "config") == 0 || strcmp(name, "db") == 0 ||
        strcmp(name, "help") == 0)
        return NULL;
    for (; opts->name; opts++)
        if (strcmp(opts->name, name) == 0)
            return opts;
    return NULL;
}

/* "config 'PATH': unknown option "KEY" ..." into err, with every option
** of opts a file may set, as the reader's list to pick from. */
static void unknown_opt(const char *path, const char *key,
                        const struct option *opts, char *err, size_t errlen)
{
    const char *sep = "";
    size_t n;

    snprintf(err, errlen, "config '%s': unknown option \"%s\" under "
             "\"options\" (any flag of askdb mcp without its dashes: ",
             path, key);
    for (; opts->name; opts++) {
        if (!find_opt(opts, opts->name))
            continue;
        n = strlen(err);
        snprintf(err + n, errlen - n, "%s%s", sep, opts->name);
        sep = ", ";
    }
    n = strlen(err);
    snprintf(err + n, errlen - n, ")");
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

int mcp_config_argv(const char *path, const struct option *opts, int *argc,
                    char ***argv, char *err, size_t errlen)
{
    const struct option *o;
    json_t *root, *dbs, *flags, *v;
    json_error_t jerr;
    char **out = NULL, dir[4096], num[64];
    const char *key, *slash;
    size_t i;
    int n = 0, rc = -1;

    *argc = 0;
    *argv = NULL;
    root = json_load_file(path, JSON_REJECT_DUPLICATES, &jerr);
    if (!root) {
        /* jansson's line is -1 where it has none (a file it cannot open) */
        if (jerr.line > 0)
            snprintf(err, errlen, "cannot read config '%s': %s (line %d)",
                     path, jerr.text, jerr.line);
        else
            snprintf(err, errlen, "cannot read config '%s': %s", path,
                     jerr.text);
        return -1;
    }
    slash = strrchr(path, '/');
    snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - path) : 1,
             slash ? path : ".");
    if (slash == path)
        snprintf(dir, sizeof dir, "/");
    dbs = json_object_get(root, "databases");
    flags = json_object_get(root, "options");
    if (!json_is_object(root) || (dbs && !json_is_object(dbs) &&
                                  !json_is_array(dbs)) ||
        (flags && !json_is_object(flags))) {
        snprintf(err, errlen, "config '%s': expected {\"databases\": "
                 "{NAME: PATH} or [PATH], \"options\": {FLAG: VALUE}}",
                 path);
        goto out;
    }
    json_object_foreach(root, key, v) {
        if (strcmp(key, "databases") != 0 && strcmp(key, "options") != 0) {
            snprintf(err, errlen, "config '%s': unknown key \"%s\" "
                     "(databases, options)", path, key);
            goto out;
        }
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
    json_object_foreach(flags, key, v) {
        if (strcmp(key, "config") == 0 || strcmp(key, "db") == 0) {
            snprintf(err, errlen, "config '%s': '%s' is not an option "
                     "here (databases go under \"databases\")", path, key);
            goto out;
        }
        o = find_opt(opts, key);
        if (!o) {
            unknown_opt(path, key, opts, err, errlen);
            goto out;
        }
        /* The kind of value the flag takes, checked here: given as
        ** "--KEY=VALUE" a switch would be refused in getopt's words,
        ** which name no file, and a bare "--KEY" (true) of an option that
        ** takes a value would take the next argument as its value. False
        ** leaves any option out; so what passes is pushed below. */
        if (o->has_arg == no_argument && !json_is_boolean(v)) {
            snprintf(err, errlen, "config '%s': option \"%s\" is a switch: "
                     "true or false", path, key);
            goto out;
        }
        if (o->has_arg != no_argument && !json_is_string(v) &&
            !json_is_number(v) && !json_is_false(v)) {
            snprintf(err, errlen, "config '%s': option \"%s\" takes a "
                     "value: a string or a number", path, key);
            goto out;
        }
        if (json_is_true(v)) {
            if (push(&out, &n, key, NULL))
                goto nomem;
        } else if (json_is_string(v)) {
            if (push(&out, &n, key, json_string_value(v)))
                goto nomem;
        } else if (json_is_number(v)) {
            if (json_is_integer(v))
                snprintf(num, sizeof num, "%" JSON_INTEGER_FORMAT,
                         json_integer_value(v));
            else
                snprintf(num, sizeof num, "%g", json_real_value(v));
            if (push(&out, &n, key, num))
                goto nomem;
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
