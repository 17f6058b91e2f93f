/* fuzz_sse.c - libFuzzer harness for the SSE parser and streamed replies. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "llm/anthropic.h"
#include "llm/http.h"
#include "llm/openai.h"

/*
** The input is the body of a streamed reply. It is parsed three ways:
**   1. by http_sse_parse() in one piece and again in pieces whose sizes
**      come from a generator seeded by the first bytes (as the network
**      might cut it): both must yield the same events, each well formed,
**      as a plain whole-buffer reading of the SSE rules (below);
**   2. as an OpenAI Chat Completions stream;
**   3. as an Anthropic Messages stream.
** The reply must be text or an error message, and the API key must never
** appear in a message.
*/

#define KEY "sk-fuzz-9f8e7d6c5b4a"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct http_client *client;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    struct http_config cfg;
    char err[256];

    (void)argc;
    (void)argv;
    memset(&cfg, 0, sizeof cfg);
    cfg.url = "http://fuzz.invalid/v1/chat/completions";
    cfg.model = "fuzz-model";
    cfg.key = KEY;
    cfg.key_hint = "--api-key";
    if (http_client_new(&cfg, &client, err, sizeof err) != ASKDB_OK)
        abort();
    return 0;
}

/* Each event, checked, appended to a buf as name NUL length data. */
static int record(void *ud, const char *event, const char *data, size_t len)
{
    struct buf *b = ud;
    size_t elen;

    if (!event || !data)
        abort();
    elen = strnlen(event, 64);
    if (elen == 0 || elen >= 64 || data[len] != '\0')
        abort();
    buf_append(b, event, elen + 1);
    buf_append(b, &len, sizeof len);
    buf_append(b, data, len);
    return HTTP_EVENT_OK;
}

/* One field line of the reference reading. */
static void ref_line(const char *l, size_t n, struct buf *data, int *has,
                     char *event, struct buf *out)
{
    const char *colon, *v;
    size_t flen, vlen;

    if (n == 0) {
        if (*has)
            record(out, event[0] ? event : "message",
                   data->data ? data->data : "", data->len);
        buf_reset(data);
        *has = 0;
        event[0] = '\0';
        return;
    }
    if (l[0] == ':')
        return;
    colon = memchr(l, ':', n);
    flen = colon ? (size_t)(colon - l) : n;
    v = colon ? colon + 1 : l + n;
    vlen = n - (size_t)(v - l);
    if (vlen && *v == ' ') {
        v++;
        vlen--;
    }
    if (flen == 4 && memcmp(l, "data", 4) == 0) {
        if (*has)
            buf_putc(data, '\n');
        buf_append(data, v, vlen);
        *has = 1;
    } else if (flen == 5 && memcmp(l, "event", 5) == 0) {
        if (vlen > 63)
            vlen = 63;             /* askdb keeps 63 bytes of the name */
        memcpy(event, v, vlen);
        event[vlen] = '\0';
    }
}

/*
** The SSE rules read straight off the whole buffer: lines end in CRLF, CR
** or LF; a blank line dispatches the event when it had a data field; ':'
** starts a comment; one space after the colon is dropped; data lines join
** with LF. Like askdb (and unlike the spec) a last line and event without
** their terminators still count.
*/
static void reference(const char *p, size_t n, struct buf *out)
{
    struct buf data;
    char event[64];
    size_t i = 0, start;
    int has = 0;

    buf_init(&data, 0);
    event[0] = '\0';
    while (i < n) {
        start = i;
        while (i < n && p[i] != '\r' && p[i] != '\n')
            i++;
        if (i == n) {                 /* unterminated last line */
            ref_line(p + start, i - start, &data, &has, event, out);
            break;
        }
        ref_line(p + start, i - start, &data, &has, event, out);
        i += p[i] == '\r' && i + 1 < n && p[i + 1] == '\n' ? 2 : 1;
    }
    ref_line("", 0, &data, &has, event, out);
    buf_free(&data);
}

static uint64_t next(uint64_t *s)
{
    uint64_t x = *s;

    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    *s = x;
    return x;
}

/* Piece sizes for n bytes: mostly tiny (splits \r\n and "data:"), some
** medium, a few large. */
static size_t make_cuts(const uint8_t *data, size_t n, size_t *cuts)
{
    uint64_t s = 0x9e3779b97f4a7c15ULL, r;
    size_t i, k = 0, sum = 0;

    for (i = 0; i < n && i < 8; i++)
        s = (s ^ data[i]) * 0x100000001b3ULL;
    if (!s)
        s = 1;
    while (sum < n) {
        r = next(&s);
        switch (r & 3) {
        case 0:
        case 1: cuts[k] = 1 + (size_t)(r >> 8) % 4; break;
        case 2: cuts[k] = 1 + (size_t)(r >> 8) % 64; break;
        default: cuts[k] = 1 + (size_t)(r >> 8) % 1024; break;
        }
        sum += cuts[k++];
    }
    return k;
}

static void check_reply(askdb_status rc, struct llm_reply *r, const char *err,
                        size_t size)
{
    if (rc == ASKDB_OK) {
        if (!r->text || strlen(r->text) > size)
            abort();
    } else {
        if (r->text || !memchr(err, '\0', 512) || !err[0] ||
            strstr(err, KEY))
            abort();
    }
    free(r->text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *p = (const char *)data;
    struct buf whole, pieces, ref;
    struct llm_reply r;
    char err[512];
    size_t *cuts, ncuts;
    int rc1, rc2;
    askdb_status rc;

    /* 1. The same events however the stream is cut. */
    cuts = malloc((size + 1) * sizeof *cuts);
    if (!cuts)
        abort();
    ncuts = make_cuts(data, size, cuts);
    buf_init(&whole, 0);
    buf_init(&pieces, 0);
    buf_init(&ref, 0);
    reference(p, size, &ref);
    rc1 = http_sse_parse(p, size, NULL, 0, record, &whole);
    rc2 = http_sse_parse(p, size, cuts, ncuts, record, &pieces);
    if (rc1 != 0 || rc2 != 0 || buf_err(&whole) || buf_err(&pieces) ||
        whole.len != pieces.len ||
        (whole.len && memcmp(whole.data, pieces.data, whole.len) != 0))
        abort();
    if (buf_err(&ref) || ref.len != whole.len ||
        (ref.len && memcmp(ref.data, whole.data, ref.len) != 0))
        abort();
    buf_free(&ref);
    buf_free(&whole);
    buf_free(&pieces);
    free(cuts);

    /* 2, 3. Both APIs' event handling. */
    memset(&r, 0, sizeof r);
    rc = llm_openai_parse_reply(client, 1, p, size, &r, err, sizeof err);
    check_reply(rc, &r, err, size);
    memset(&r, 0, sizeof r);
    rc = llm_anthropic_parse_reply(client, 1, p, size, &r, err, sizeof err);
    check_reply(rc, &r, err, size);
    return 0;
}
