/* config.c - the --config FILE of askdb mcp and askdb serve (config.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <getopt.h>
#include <jansson.h>

#include "askdb.h"
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

/* A real number of the file as an option's value: a whole one as an
** integer (4194304.0 is "4194304", which an option of a whole number
** takes; "%g" wrote "4.1943e+06"), any other as the shortest text that
** reads back as it (askdb_real_text(); "%g" kept six digits, and
** 0.1234567 became 0.123457). */
static void real_arg(double d, char *buf, size_t n)
{
    if (d > -1e15 && d < 1e15 && d == (double)(long long)d)
        snprintf(buf, n, "%lld", (long long)d);
    else
        askdb_real_text(d, buf, n);
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

/* The switch that turns switch name off, when opts has one: "no-X" for
** "X", "X" for "no-X" ("checks": false is --no-checks, "no-linking":
** false --linking; left out, the default would stay: checks on). NULL
** for a switch that is off when not given (no-warm, stream). */
static const struct option *off_switch(const struct option *opts,
                                       const char *name)
{
    const struct option *o;
    char no[128];

    if (strncmp(name, "no-", 3) == 0) {
        o = find_opt(opts, name + 3);
    } else {
        if (strlen(name) + 4 > sizeof no)
            return NULL;
        snprintf(no, sizeof no, "no-%s", name);
        o = find_opt(opts, no);
    }
    return o && o->has_arg == no_argument ? o : NULL;
}

/* "config 'PATH': unknown option "KEY" ..." into err, with every option
** of spec->opts a file may set, as the reader's list to pick from. */
static void unknown_opt(const char *path, const char *key,
                        const struct cli_config_spec *spec, char *err,
                        size_t errlen)
{
    const struct option *opts = spec->opts;
    const char *sep = "";
    size_t n;

    snprintf(err, errlen, "config '%s': unknown option \"%s\" under "
             "\"options\" (%s without its dashes: ", path, key,
             spec->opts_are);
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

/* "config 'PATH': unknown key "KEY" (databases, options, ...)" into
** err: the keys of every file, then the command's own. */
static void unknown_key(const char *path, const char *key,
                        const struct cli_config_spec *spec, char *err,
                        size_t errlen)
{
    size_t i, n;

    snprintf(err, errlen, "config '%s': unknown key \"%s\" (databases, "
             "options", path, key);
    for (i = 0; spec->keys && spec->keys[i]; i++) {
        n = strlen(err);
        snprintf(err + n, errlen - n, ", %s", spec->keys[i]);
    }
    n = strlen(err);
    snprintf(err + n, errlen - n, ")");
}

/* 1 when key is one of the command's own (spec->keys). */
static int own_key(const struct cli_config_spec *spec, const char *key)
{
    size_t i;

    for (i = 0; spec->keys && spec->keys[i]; i++)
        if (strcmp(spec->keys[i], key) == 0)
            return 1;
    return 0;
}

/* The length of "--config" at the start of arg, as getopt takes it with
** the command's options all: whole or cut short ("--conf"), then the end
** or "=VALUE"; 0 when arg is no --config. A cut that starts another
** option too ("--con": --config and --conversations) is getopt's to
** refuse as ambiguous, and one an option is named exactly is that one:
** neither is the file's (it was read at "--con 8", and getopt's word
** never said). */
static size_t config_flag(const char *arg, const struct option *all)
{
    const struct option *o;
    size_t n;
    int config = 0, other = 0;

    if (strncmp(arg, "--", 2) != 0)
        return 0;
    n = strcspn(arg + 2, "=");
    if (n == 0 || n > 6 || strncmp(arg + 2, "config", n) != 0)
        return 0;
    for (o = all; o->name; o++) {
        if (strncmp(o->name, arg + 2, n) != 0)
            continue;
        if (strlen(o->name) == n)
            return strcmp(o->name, "config") == 0 ? n + 2 : 0;
        if (strcmp(o->name, "config") == 0)
            config = 1;
        else
            other = 1;
    }
    return config && !other ? n + 2 : 0;
}

/* The value of the last --config in argv (before a "--"), or NULL; all
** is the command's getopt table. */
static const char *config_arg(int argc, char **argv,
                              const struct option *all)
{
    const char *v = NULL;
    size_t n;
    int i;

    for (i = 1; i < argc && strcmp(argv[i], "--") != 0; i++) {
        n = config_flag(argv[i], all);
        if (n && argv[i][n] == '=')
            v = argv[i] + n + 1;
        else if (n && i + 1 < argc)
            v = argv[++i];
    }
    return v;
}

/* Free v[0..n) and v. */
static void free_args(int n, char **v)
{
    int i;

    for (i = 0; v && i < n; i++)
        free(v[i]);
    free(v);
}

/* 1 when path starts with a URL's scheme, "NAME://" (postgresql://...,
** and one askdb does not read, which the open then names as such): a
** server's address, not a file to find from the config's folder. NAME is
** read as the library reads it (a letter, then letters, digits, '+', '-'
** or '.'; two characters at least, so that C://... stays a path). */
static int is_url(const char *path)
{
    size_t i = 0;

    while ((path[i] >= 'a' && path[i] <= 'z') ||
           (path[i] >= 'A' && path[i] <= 'Z') ||
           (i > 0 && ((path[i] >= '0' && path[i] <= '9') || path[i] == '+' ||
                      path[i] == '-' || path[i] == '.')))
        i++;
    return i > 1 && strncmp(path + i, "://", 3) == 0;
}

/* NAME=PATH (name may be NULL), PATH taken from dir when it is a relative
** path (not a URL). */
static int push_db(char ***v, int *n, const char *dir, const char *name,
                   const char *path)
{
    int as_is = path[0] == '/' || is_url(path);
    char buf[8192];
    int len;

    len = snprintf(buf, sizeof buf, "%s%s%s%s", name ? name : "",
                   name ? "=" : "", as_is ? "" : dir, as_is ? "" : "/");
    if (len < 0 || (size_t)len + strlen(path) >= sizeof buf)
        return -1;
    memcpy(buf + len, path, strlen(path) + 1);
    return push(v, n, name ? "db" : NULL, buf);
}

/* The file at path as arguments (cli_config_read): 0 with *root and
** *argv (*argc strings) the caller's, or -1 with why in err. */
static int file_args(const char *path, const struct cli_config_spec *spec,
                     json_t **root_out, int *argc, char ***argv, char *err,
                     size_t errlen)
{
    const struct option *o;
    json_t *root, *dbs, *flags, *v;
    json_error_t jerr;
    struct stat st;
    char **out = NULL, dir[4096], num[64];
    const char *key, *slash;
    size_t i;
    int n = 0;

    *argc = 0;
    *argv = NULL;
    *root_out = NULL;
    root = json_load_file(path, JSON_REJECT_DUPLICATES, &jerr);
    if (!root) {
        /* jansson opens a folder and reads it as empty text ("'[' or '{'
        ** expected near end of file (line 1)"); its line is -1 where it
        ** has none (a file it cannot open). */
        if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
            snprintf(err, errlen, "cannot read config '%s': it is a "
                     "folder, not a file", path);
        else if (jerr.line > 0)
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
        if (strcmp(key, "databases") != 0 && strcmp(key, "options") != 0 &&
            !own_key(spec, key)) {
            unknown_key(path, key, spec, err, errlen);
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
            /* It becomes "--db=NAME=PATH", which is cut at its first '='
            ** (a name with one was another name, its rest the path's). */
            if (!*key || strchr(key, '=')) {
                snprintf(err, errlen, "config '%s': database name \"%s\" %s",
                         path, key, *key ? "has an '=' (a name is the part "
                         "before the '=' of --db NAME=PATH)" : "is empty");
                goto out;
            }
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
        o = find_opt(spec->opts, key);
        if (!o) {
            unknown_opt(path, key, spec, err, errlen);
            goto out;
        }
        /* The kind of value the flag takes, checked here: given as
        ** "--KEY=VALUE" a switch would be refused in getopt's words,
        ** which name no file, and a bare "--KEY" (true) of an option that
        ** takes a value would take the next argument as its value. False
        ** is a switch's counterpart where it has one (off_switch()), else
        ** leaves the option out; so what passes is pushed below. */
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
        if (json_is_false(v) && o->has_arg == no_argument) {
            o = off_switch(spec->opts, key);
            if (o && push(&out, &n, o->name, NULL))
                goto nomem;
        } else if (json_is_true(v)) {
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
                real_arg(json_real_value(v), num, sizeof num);
            if (push(&out, &n, key, num))
                goto nomem;
        }
    }
    *argc = n;
    *argv = out;
    *root_out = root;
    return 0;
nomem:
    snprintf(err, errlen, "config '%s': out of memory or a path too long",
             path);
out:
    free_args(n, out);
    json_decref(root);
    return -1;
}

int cli_config_read(int argc, char **argv,
                    const struct cli_config_spec *spec, struct cli_config *c,
                    char *err, size_t errlen)
{
    int i;

    memset(c, 0, sizeof *c);
    c->path = config_arg(argc, argv,
                         spec->all_opts ? spec->all_opts : spec->opts);
    if (c->path && file_args(c->path, spec, &c->root, &c->nfile, &c->file,
                             err, errlen))
        return -1;
    /* argv[0], the file's arguments, then the command line's. */
    c->argv = calloc((size_t)(argc + c->nfile) + 1, sizeof *c->argv);
    if (!c->argv) {
        snprintf(err, errlen, "out of memory");
        cli_config_free(c);
        return -1;
    }
    c->argc = argc + c->nfile;
    c->argv[0] = argv[0];
    for (i = 0; i < c->nfile; i++)
        c->argv[1 + i] = c->file[i];
    for (i = 1; i < argc; i++)
        c->argv[c->nfile + i] = argv[i];
    return 0;
}

void cli_config_free(struct cli_config *c)
{
    free_args(c->nfile, c->file);
    free(c->argv);
    json_decref(c->root);
    memset(c, 0, sizeof *c);
}
