/* learn.h - the `askdb learn` command: store verified question/SQL pairs. */
#ifndef ASKDB_LEARN_H
#define ASKDB_LEARN_H

#include <getopt.h>

/*
** Called by main() for `askdb learn`; argv[0] is "askdb learn" (getopt
** starts its messages with it). Prints on stdout/stderr and returns the
** exit code: 0 done, 1 a pair was rejected
** (or --forget found nothing), 2 usage or memory-store error, 3 the
** database cannot be opened.
*/
int cmd_learn(int argc, char **argv);

/* Its options (for main.c's message of an option sql refuses). */
extern const struct option cli_learn_opts[];

#endif
