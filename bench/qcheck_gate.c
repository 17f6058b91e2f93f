/* qcheck_gate.c - how often the question check would ask the model.
**
**   build/qcheck_gate --spider DIR [--limit N] [--no-values]
**
** The question check (src/agent/context.c) asks the model "is this a
** question about this database?" only when nothing in the question
** matches a table, a column (schema linking's scores) or a stored value
** (value retrieval). On Spider every question is about its database, so
** each such model call costs time and risks a wrong "no". This counts,
** over train.json, the questions with no match at all; value indexes go
** to $ASKDB_CACHE_DIR (set it to a temporary directory).
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/link.h"
#include "agent/values.h"
#include "db/db.h"
#include "eval/suite.h"

int main(int argc, char **argv)
{
    const char *dir = NULL;
    long limit = 0, n = 0, none = 0, novalues = 0, i;
    int use_values = 1;
    char err[512], cur[256] = "";
    askdb_config cfg = askdb_config_default();
    askdb_db *db = NULL;
    struct vindex *vi = NULL;
    const struct db_schema *s = NULL;
    struct suite suite;

    for (i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--spider") == 0 && i + 1 < argc)
            dir = argv[++i];
        else if (strcmp(argv[i], "--limit") == 0 && i + 1 < argc)
            limit = strtol(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--no-values") == 0)
            use_values = 0; /* as askdb with values off (the default) */
        else {
            fprintf(stderr, "usage: qcheck_gate --spider DIR [--limit N] "
                            "[--no-values]\n");
            return 2;
        }
    }
    if (!dir) {
        fprintf(stderr, "qcheck_gate: --spider DIR is required\n");
        return 2;
    }
    if (suite_load_spider(dir, &suite, err, sizeof err) != ASKDB_OK) {
        fprintf(stderr, "qcheck_gate: %s\n", err);
        return 2;
    }
    for (i = 0; i < suite.n; i++) {
        const struct suite_item *it = &suite.items[i];
        const char *id = it->db_id, *q = it->question;
        struct value_match *m = NULL;
        struct link_hint h[8];
        struct link_result lr;
        double best = 0;
        int nm = 0, k;

        if (limit && n >= limit)
            break;
        if (it->malformed)
            continue;
        if (strcmp(id, cur) != 0) {
            vindex_free(vi);
            vi = NULL;
            askdb_db_close(db);
            db = NULL;
            if (askdb_db_open(it->db_path, &cfg, &db) || db_schema(db, &s)) {
                fprintf(stderr, "qcheck_gate: %s: %s\n", it->db_path,
                        askdb_db_errmsg(db));
                askdb_db_close(db);
                db = NULL;
                cur[0] = '\0';
                continue;
            }
            if (use_values && vindex_open(db, NULL, &vi, err, sizeof err))
                vi = NULL;
            snprintf(cur, sizeof cur, "%s", id);
        }
        if (!db)
            continue;
        if (vi && vindex_match(vi, q, 8, &m, &nm))
            nm = 0;
        for (k = 0; k < nm; k++) {
            h[k].table = m[k].table;
            h[k].column = m[k].column;
            h[k].weight = 1;
        }
        if (link_schema(s, q, h, nm, NULL, &lr) == ASKDB_OK) {
            for (k = 0; k < lr.ntables; k++)
                if (lr.table_score[k] > best)
                    best = lr.table_score[k];
            link_result_free(&lr);
        }
        n++;
        if (best <= 0 && nm == 0) {
            none++;
            if (getenv("QCHECK_VERBOSE"))
                printf("  %s: %s\n", id, q);
        }
        if (nm == 0)
            novalues++;
        value_matches_free(m, nm);
    }
    vindex_free(vi);
    askdb_db_close(db);
    suite_free(&suite);
    printf("questions: %ld\nwith no name or value match (the model is "
           "asked): %ld (%.2f%%)\nwith no value match: %ld (%.1f%%)\n", n,
           none, n ? 100.0 * none / n : 0, novalues,
           n ? 100.0 * novalues / n : 0);
    return 0;
}
