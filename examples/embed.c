/* embed.c - ask a database one question through libaskdb: embed DB QUESTION.
**
**   cc embed.c $(pkg-config --cflags --libs askdb) -o embed
**   ASKDB_LLM_URL=http://localhost:11434/v1 ASKDB_MODEL=qwen2.5-coder:1.5b \
**       ./embed shop.db "How many customers are there?"
**
** Prints the SQL, then the column names and the rows, '|' between cells.
*/
#include <askdb.h>
#include <inttypes.h>
#include <stdio.h>

static void print_value(const askdb_value *v)
{
    switch (v->type) {
    case ASKDB_INTEGER: printf("%" PRId64, v->i); break;
    case ASKDB_REAL: printf("%g", v->d); break;
    case ASKDB_TEXT: fwrite(v->s, 1, v->len, stdout); break;
    case ASKDB_BLOB: printf("(%zu bytes)", v->len); break;
    default: printf("NULL"); break;
    }
}

int main(int argc, char **argv)
{
    askdb_config cfg = askdb_config_default();
    askdb_agent *ag = NULL;
    askdb_answer *ans = NULL;
    long r;
    int c, rc = 1;

    if (argc != 3) {
        fprintf(stderr, "usage: embed DB QUESTION\n");
        return 2;
    }
    askdb_config_from_env(&cfg); /* ASKDB_PROVIDER, ASKDB_LLM_URL, ... */
    if (askdb_agent_new(&cfg, argv[1], &ag) != ASKDB_OK) {
        fprintf(stderr, "embed: %s\n", askdb_agent_errmsg(ag));
        goto out;
    }
    if (askdb_agent_ask(ag, argv[2], &ans) != ASKDB_OK) {
        fprintf(stderr, "embed: %s\n", ans && ans->error ? ans->error : "failed");
        goto out;
    }
    if (!ans->sql) { /* not a question about the data: a reply in words */
        printf("%s\n", ans->text ? ans->text : "");
        rc = 0;
        goto out;
    }
    printf("%s\n", ans->sql);
    for (c = 0; c < ans->result->ncols; c++)
        printf("%s%s", c ? "|" : "", ans->result->cols[c]);
    printf("\n");
    for (r = 0; r < ans->result->nrows; r++) {
        for (c = 0; c < ans->result->ncols; c++) {
            printf("%s", c ? "|" : "");
            print_value(askdb_result_cell(ans->result, r, c));
        }
        printf("\n");
    }
    rc = 0;
out:
    askdb_answer_free(ans);
    askdb_agent_free(ag);
    return rc;
}
