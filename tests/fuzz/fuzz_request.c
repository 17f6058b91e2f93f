/* fuzz_request.c - libFuzzer harness for the server's request bodies. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "server/request.h"

/*
** The input is a POST body from anyone on the network: any bytes, not
** NUL-terminated. Each parser either accepts it with fields that keep
** their promises (strings without NUL and within their caps, a good
** conversation id), or refuses it with a reason and nothing to free.
*/

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The code points of UTF-8 text, as the limits count them. */
static size_t chars(const char *s)
{
    size_t c = 0;

    for (; *s; s++)
        c += ((unsigned char)*s & 0xC0) != 0x80;
    return c;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct srv_ask_req a;
    struct srv_sql_req q;
    char why[512];
    int rc;

    why[0] = '\0';
    rc = srv_parse_ask((const char *)data, size, &a, why, sizeof why);
    if (rc == 0) {
        if (!a.root || !a.database || !a.question || !*a.question ||
            chars(a.question) > SRV_MAX_QUESTION ||
            chars(a.database) > SRV_MAX_NAME ||
            (a.conversation_id && !srv_good_id(a.conversation_id)) ||
            (a.answer != 0 && a.answer != 1))
            abort();
        srv_req_free(&a);
    } else if ((rc != SRV_BAD_JSON && rc != SRV_BAD_REQUEST) || !why[0] ||
               a.root) {
        abort();
    }
    why[0] = '\0';
    rc = srv_parse_sql((const char *)data, size, &q, why, sizeof why);
    if (rc == 0) {
        if (!q.root || !q.database || !q.sql ||
            chars(q.sql) > SRV_MAX_SQL)
            abort();
        json_decref(q.root);
    } else if ((rc != SRV_BAD_JSON && rc != SRV_BAD_REQUEST) || !why[0] ||
               q.root) {
        abort();
    }
    return 0;
}
