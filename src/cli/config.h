/* config.h - the --config FILE of askdb mcp and askdb serve: the file's
** databases and options as command-line arguments. */
#ifndef ASKDB_CLI_CONFIG_H
#define ASKDB_CLI_CONFIG_H

#include <getopt.h>
#include <jansson.h>
#include <stddef.h>

/* What a command's config file may hold besides "databases". */
struct cli_config_spec {
    const struct option *opts;  /* the flags "options" may set (getopt) */
    const char *opts_are;       /* them, as an error names them: "any
                                   flag of askdb mcp" */
    const char *const *keys;    /* the other keys the command reads from
                                   the file itself (NULL-terminated; NULL
                                   for none) */
    const struct option *all_opts; /* the command's getopt table, in which
                                   --config cut short is looked for as
                                   getopt looks (NULL: opts is all) */
};

/* A command line with its --config file read (cli_config_read). */
struct cli_config {
    const char *path;    /* the last --config FILE given, or NULL */
    json_t *root;        /* the file's object, or NULL: the command reads
                            its spec->keys from it (strings live as long) */
    int argc;
    char **argv;         /* argv[0], the file's arguments, then the command
                            line's: what the command parses, so that a
                            flag given overrides the file's */
    int nfile;
    char **file;         /* the file's arguments (owned) */
};

/*
** Read the --config file of argv[0..argc) (before a "--"; the last one
** given; cut short where getopt takes it so, spec->all_opts), a JSON
** object, and turn it into command-line arguments, so that the command's
** own parser checks them and flags given after override them:
**
**   {"databases": {"shop": "shop.db", ...}   or ["shop.db", ...],
**    "options": {"llm-url": "http://...", "max-rows": 200,
**                "no-linking": true}}
**
** A database becomes "--db=NAME=PATH" (NAME not empty, without '=') or
** the operand PATH (a relative PATH is taken from the file's folder; a
** URL, NAME://..., as written), an option "--KEY=VALUE" (true: "--KEY";
** false: the switch's counterpart, "--no-KEY" for KEY and "--KEY" for
** no-KEY, where spec->opts has one, else left out; a number as the
** shortest text that reads back as it, a whole one as an integer). Each
** KEY must be a long option of spec->opts other than config, db and
** help, with a value of its kind (true or false for a switch); any other
** key, there or at the top (but spec->keys), is an error that names the
** file and the key and lists the keys it may use. Without --config,
** c->argv holds argv alone and c->root is NULL.
** Returns 0 with *c filled (cli_config_free() frees it), or -1 with the
** reason in err ("cannot read config 'PATH': ... (line N)", "config
** 'PATH': ...") and nothing to free.
*/
int cli_config_read(int argc, char **argv,
                    const struct cli_config_spec *spec, struct cli_config *c,
                    char *err, size_t errlen);

/* Free what cli_config_read() filled in (a zeroed one: nothing). */
void cli_config_free(struct cli_config *c);

#endif
