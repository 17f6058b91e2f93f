/* local.c - the in-process model provider: a GGUF model run by llama.cpp. */
#define _GNU_SOURCE   /* sched_getaffinity(), CPU_COUNT() */
#include <math.h>
#include <stdio.h>

#include "llm/local.h"

/*
** Built with ASKDB_HAVE_LLAMA (the Makefile adds it when scripts/llama.sh
** has built llama.cpp), this file runs a GGUF model in the process through
** llama.cpp's public C API. Without it, creating the provider fails with
** ASKDB_ERR_UNSUPPORTED and says how to get one.
**
** Design invariants of the llama.cpp provider:
**
** - The model (memory-mapped) and its decoder (decoder.h: one context,
**   the thread that decodes it, and lanes of LOCAL_SEQ_MAX sequences) are
**   owned by the provider llm_local_new() or llm_local_load() made;
**   providers attached to a loaded model borrow both. Calls on one
**   provider are serialised by the caller (one agent, one thread at a
**   time); calls on different providers of one loaded model run at once,
**   each in a lane of its own, and the decoder decodes the tokens of all
**   of them in one batch per step. llm_local_new() is the one-lane case.
** - Prefix reuse: each call formats the whole conversation with the
**   model's chat template and tokenizes it. The decoder gives it the lane
**   whose conversation (sequence 0) shares the longest prefix with it, or
**   copies a longer one from another lane's conversation (the cells are
**   shared, not evaluated again); everything after it is removed and only
**   the rest of the prompt is evaluated. At least the last prompt token
**   is always evaluated again so that logits for the first sampled token
**   exist. The agent sends system prompt and schema first and the
**   question last, so a second question on the same database - from the
**   same agent or another one - evaluates little more than itself, and a
**   repair turn reuses the whole previous conversation up to the tokens of
**   the old reply.
** - The formatted prompt is tokenized with special tokens parsed (the
**   template's role markers must become control tokens), so message
**   contents - the question, the schema's sample values, the model's own
**   earlier replies - are defused first: wherever one holds the text of a
**   control token (e.g. "<|im_end|>"), a zero-width space goes after its
**   first byte and it stays plain text; nobody can forge a role boundary.
** - Prompt-cache files: a request may mark its stable prefix (llm.h:
**   stable_msgs, stable_bytes; the agent marks the system prompt and the
**   whole schema). Its tokens are found by rendering and tokenizing the
**   prefix alone and keeping what it has in common with the prompt. When
**   the KV cache does not already hold them, sequence 0's state for them
**   is loaded from ${cache}/prompts/<XXH3-128 of model identity and
**   tokens>.kv (llama_state_seq_load_file into the lane's sequence 0; the
**   file's tokens must equal them, else it is removed), or evaluated
**   alone (files or not: every path to a prompt evaluates it in the same
**   batches, see use_stable_prefix(); the system message first, with a
**   file of its own that every database shares) and then written there
**   (written to a temporary name and renamed, so a reader never sees half
**   a file). So the first question of a later process on the same
**   database skips the schema's evaluation. The directory is kept under
**   ASKDB_PROMPT_CACHE_MB (default 1024; 0 turns the files off), the
**   least recently used files go first; askdb_config.no_prompt_cache
**   turns them off too. Any failure there only costs the evaluation.
** - The context starts at LOCAL_CTX tokens a lane (or the model's
**   training context when that is smaller) and is recreated larger, up to
**   the training context, when a prompt plus its reply budget does not
**   fit (once no other call runs); that drops every conversation once. A
**   prompt longer than the largest context is an error that says so.
** - Generation stops at an end-of-generation token, after max_tokens, when
**   the context is full (its share of it, see Candidates), at the first
**   of req->stop (not included in the text) and at the closing ``` of a
**   ```sql block (included, so the reply stays a well-formed block). With
**   req->grammar every token must be one the grammar allows (see
**   sample_one()); when the grammar's root rule is complete only
**   end-of-generation tokens are allowed, so the model stops there.
** - Candidates (llm_complete_n): the KV cache is one unified buffer of
**   n_ctx cells shared by every lane's sequences. Sequence 0 of the lane
**   is the conversation and is the only one the prefix reuse looks at.
**   The prompt is evaluated once in sequence 0 and shared with sequences
**   1.. by llama_memory_seq_cp, which only tags the prompt's cells with
**   more sequence ids (no copy). Then every step decodes one token per
**   live sequence (in one llama_batch with the other calls' tokens); each
**   sequence samples from its own copy of its row of logits with its own
**   sampler chain and grammar state, and stops on its own.
**   Replies beyond LOCAL_SEQ_MAX run in later rounds in sequences 1.. .
**   With llm_request.gate, sequences 1.. wait until reply 0 chooses a
**   token it is unsure of and then branch off it there: they share its
**   cells and tokens up to that one and sample their own in its place
**   (generate(), seq_branch()); when it never is unsure they never
**   start, nor do later rounds. With
**   llm_request.follow_cap, once reply 0 has ended, a sequence that
**   reaches the cap's length stops and its reply comes back cut.
**   Sequences 1.. are removed when the call ends, whatever happened, so
**   the next call finds sequence 0 alone. One call with n = 1 is exactly
**   the single-sequence case of the same code. The reply budget is split:
**   each sequence gets at most (reservation - prompt) / sequences tokens,
**   where the reservation is prompt + max_tokens a sequence, cut to the
**   context.
** - Streaming: req->on_token gets the text as it is generated, except for
**   a tail that could still turn out to be the start of a stop string or
**   an incomplete UTF-8 sequence; that tail follows once it is decided.
**   Only sequence 0 (reply 0) streams.
** - Process-wide state (decoder.c): llama_backend_init() and
**   llama_log_set() run once per process. llama.cpp's log is dropped
**   unless ASKDB_LLAMA_LOG=1; its first error line is kept per thread so
**   that load failures can say why. (llama.cpp's GBNF parser prints its
**   own parse errors on stderr directly, bypassing the log.)
** - Cancellation (llm_request.cancel): a call stops at its next step; a
**   decode in progress is aborted only when every call in its batch is
**   cancelled, so one cancelled question never costs another its tokens.
*/

#ifdef ASKDB_HAVE_LLAMA

#include <assert.h>
#include <ctype.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <llama.h>
#include <xxhash.h>

#include "core/cache.h"
#include "core/clock.h"
#include "core/text.h"
#include "llm/decoder.h"
#include "llm/hugepage.h"

/* File name of the default model; models/README.md and scripts/models.sh
** fetch it into the cache. */
#define LOCAL_DEFAULT_MODEL "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"

/*
** The model file the config selects: cfg->model when it is a .gguf path,
** else (no model named) the default model in the cache directory the
** scripts use, ${ASKDB_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/askdb}/
** models/. The result is malloc()ed; NULL when out of memory, when no
** cache directory can be named, or when cfg->model names something else
** (a remote model's name: answering with the default model instead would
** leave the user thinking the model named had answered); err says why.
*/
static char *model_path(const askdb_config *cfg, askdb_status *rc,
                        char *err, size_t errlen)
{
    const char *dir = getenv("ASKDB_CACHE_DIR"), *sub = "";
    size_t n;
    char *p;

    *rc = ASKDB_ERR_NOMEM;
    if (text_ends_nocase(cfg->model, ".gguf")) {
        p = strdup(cfg->model);
        if (!p)
            snprintf(err, errlen, "out of memory");
        return p;
    }
    if (cfg->model && *cfg->model) {
        /* A URL reaches here only when the provider was named local. */
        if (cfg->llm_url && *cfg->llm_url)
            snprintf(err, errlen, "the model '%s' (--model or ASKDB_MODEL) "
                     "is not a .gguf file, and the provider is local "
                     "(--provider or ASKDB_PROVIDER), which runs a .gguf "
                     "file here and uses no URL; for the server at the "
                     "URL give --provider openai or anthropic, or leave "
                     "the provider unset", cfg->model);
        else
            snprintf(err, errlen, "the model '%s' (--model or ASKDB_MODEL) "
                     "is not a .gguf file, and with no URL the model runs "
                     "here (local), from a .gguf file; for a remote model "
                     "give --provider openai or anthropic, or --llm-url "
                     "URL", cfg->model);
        *rc = ASKDB_ERR_USAGE;
        return NULL;
    }
    if (!dir || !*dir) {
        dir = getenv("XDG_CACHE_HOME");
        sub = "/askdb";
        if (!dir || !*dir) {
            dir = getenv("HOME");
            sub = "/.cache/askdb";
        }
    }
    if (!dir || !*dir) {
        snprintf(err, errlen, "cannot find the default local model: HOME "
                              "is not set (pass --model PATH.gguf or set "
                              "ASKDB_CACHE_DIR)");
        *rc = ASKDB_ERR_USAGE;
        return NULL;
    }
    n = strlen(dir) + strlen(sub) + sizeof "/models/" +
        sizeof LOCAL_DEFAULT_MODEL;
    p = malloc(n);
    if (!p) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    snprintf(p, n, "%s%s/models/%s", dir, sub, LOCAL_DEFAULT_MODEL);
    return p;
}

/*
** ASKDB_ERR_USAGE with a message when the model file at path cannot be
** read; ASKDB_OK when it is a readable regular file. `given` says whether
** the user named the file (--model) or it is the default.
*/
static askdb_status check_model_file(const char *path, int given, char *err,
                                     size_t errlen)
{
    struct stat st;
    FILE *f;

    if (stat(path, &st) != 0) {
        if (given)
            snprintf(err, errlen, "cannot open model file '%s': %s (check "
                                  "--model or ASKDB_MODEL; 'make model' "
                                  "fetches the default model)",
                     path, strerror(errno));
        else
            snprintf(err, errlen, "the default local model '%s' is not "
                                  "there: run 'make model' to fetch it, or "
                                  "point --model (ASKDB_MODEL) at a .gguf "
                                  "file, or use a remote model: --llm-url "
                                  "URL --model NAME", path);
        return ASKDB_ERR_USAGE;
    }
    if (!S_ISREG(st.st_mode)) {
        snprintf(err, errlen, "model file '%s' is not a regular file (pass "
                              "--model PATH.gguf)", path);
        return ASKDB_ERR_USAGE;
    }
    f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "cannot open model file '%s': %s", path,
                 strerror(errno));
        return ASKDB_ERR_USAGE;
    }
    fclose(f);
    return ASKDB_OK;
}

#define LOCAL_CTX 8192         /* first context size, in tokens (a
                                  lane's share of a shared one) */
#define LOCAL_CTX_MAX 32768    /* never larger, whatever the model says */
#define LOCAL_MAX_TOKENS 512   /* reply cap when the request gives none */
#define LOCAL_SEQ_MAX LLM_DEC_SEQS   /* sequences decoded together
                                        (candidates) */
#define LOCAL_KV_MIN 64        /* shorter stable prefixes get no file */
#define LOCAL_KV_MB 1024       /* prompt-cache files, default cap in MiB */

struct local {
    llm base;                  /* first: llm_free() frees through it */
    struct llama_model *model;
    const struct llama_vocab *vocab;
    struct llm_dec *dec;       /* the context and its thread */
    const char *tmpl;          /* the model's chat template (borrowed from
                                  the model), or "chatml" */
    int n_vocab;
    llama_token_data *cand;    /* n_vocab candidates, for sampling */
    float *branch_row;         /* the row gated candidates branch at, kept
                                  from an earlier step (keep_row()) */
    double load_ms;            /* reported once, on the first reply */
    double huge_mb;            /* with it (hp_advise_new()) */
    char *path;
    char **special;            /* texts of the control tokens (see
                                  defuse()), nspecial of them */
    int nspecial;
    int kv_on;                 /* prompt-cache files in use */
    long long kv_cap;          /* their directory's cap in bytes */
    XXH128_hash_t model_id;    /* model file path, size and mtime */
    int owner;                 /* 1: model, decoder, path and special are
                                  ours; 0: borrowed from the loaded model
                                  this one was attached to
                                  (llm_local_attach) */
};

/* ------------------------------------------------------------------ */
/* Prompt                                                              */
/* ------------------------------------------------------------------ */

/* Whether a user-defined token's text looks like a marker ("<|start|>",
** "<tool_call>", "[INST]"): llama.cpp always parses those as one token,
** and some chat templates use them as role markers. */
static int markup(const char *t)
{
    size_t n = strlen(t);

    return n >= 3 && ((t[0] == '<' && t[n - 1] == '>') ||
                      (t[0] == '[' && t[n - 1] == ']'));
}

/* The texts of the model's control tokens and marker-like user-defined
** tokens (at least 2 bytes, each once) into l->special; -1 when out of
** memory. */
static int collect_special(struct local *l)
{
    int n = llama_vocab_n_tokens(l->vocab), id, i;
    const char *t;
    char **bigger;

    for (id = 0; id < n; id++) {
        enum llama_token_attr a = llama_vocab_get_attr(l->vocab, id);

        if (!(a & (LLAMA_TOKEN_ATTR_CONTROL | LLAMA_TOKEN_ATTR_UNKNOWN |
                   LLAMA_TOKEN_ATTR_USER_DEFINED)))
            continue;
        t = llama_vocab_get_text(l->vocab, id);
        if (!t || strlen(t) < 2 ||
            (!(a & (LLAMA_TOKEN_ATTR_CONTROL | LLAMA_TOKEN_ATTR_UNKNOWN)) &&
             !markup(t)))
            continue;
        for (i = 0; i < l->nspecial && strcmp(l->special[i], t) != 0; i++)
            ;
        if (i < l->nspecial)
            continue;
        bigger = realloc(l->special, (size_t)(l->nspecial + 1) *
                                         sizeof *bigger);
        if (!bigger)
            return -1;
        l->special = bigger;
        if (!(l->special[l->nspecial] = strdup(t)))
            return -1;
        l->nspecial++;
    }
    return 0;
}

/*
** s with a zero-width space (U+200B) after the first byte of every
** control token's text in it, so that tokenizing it with special tokens
** parsed keeps it plain text: a malloc()ed copy, or NULL when s holds
** none (or out of memory, with *nomem set).
*/
static char *defuse(struct local *l, const char *s, int *nomem)
{
    static const char zwsp[] = "\xe2\x80\x8b";
    const char *hit, *at, *h;
    size_t len, cap, k;
    char *out, *bigger;
    int i;

    for (i = 0; i < l->nspecial && !strstr(s, l->special[i]); i++)
        ;
    if (i == l->nspecial)
        return NULL;
    cap = strlen(s) + 64;
    out = malloc(cap);
    if (!out)
        goto nomem;
    for (len = 0, at = s;; at = hit + 1) {
        hit = NULL;   /* the earliest control text at or after at */
        for (i = 0; i < l->nspecial; i++)
            if ((h = strstr(at, l->special[i])) != NULL && (!hit || h < hit))
                hit = h;
        k = hit ? (size_t)(hit - at) + 1 : strlen(at);
        if (len + k + sizeof zwsp > cap) {
            cap = 2 * cap + k + sizeof zwsp;
            bigger = realloc(out, cap);
            if (!bigger)
                goto nomem;
            out = bigger;
        }
        memcpy(out + len, at, k);
        len += k;
        if (!hit)
            break;
        memcpy(out + len, zwsp, sizeof zwsp - 1);
        len += sizeof zwsp - 1;
    }
    out[len] = '\0';
    return out;
nomem:
    free(out);
    *nomem = 1;
    return NULL;
}

/*
** Messages m[0..nm) in the model's chat format, the content of the last
** one replaced by last when that is not NULL; with add_ass, ending with
** the start of the assistant's turn. Returns a malloc()ed string, or NULL
** with m->errmsg set.
*/
static char *render(struct local *l, const struct llm_msg *m, int nm,
                    const char *last, int add_ass, askdb_status *rc)
{
    struct llama_chat_message *msgs;
    char **safe;   /* defused copies of contents, or NULL */
    size_t total = 0;
    char *text = NULL, *bigger;
    int i, cap, n, nomem = 0;

    *rc = ASKDB_ERR_NOMEM;
    msgs = calloc((size_t)nm, sizeof *msgs);
    safe = calloc((size_t)nm, sizeof *safe);
    if (!msgs || !safe)
        goto out;
    for (i = 0; i < nm; i++) {
        msgs[i].role = m[i].role;
        msgs[i].content = last && i == nm - 1 ? last : m[i].content;
        safe[i] = defuse(l, msgs[i].content, &nomem);
        if (nomem)
            goto out;
        if (safe[i])
            msgs[i].content = safe[i];
        total += strlen(msgs[i].content) + 64;
    }
    if (total > INT_MAX / 2) {
        snprintf(l->base.errmsg, sizeof l->base.errmsg,
                 "the prompt is too long for the local model (%zu bytes)",
                 total);
        *rc = ASKDB_ERR_LLM;
        goto out;
    }
    cap = (int)total + 256;
    for (;;) {
        bigger = realloc(text, (size_t)cap);
        if (!bigger)
            goto out;
        text = bigger;
        n = llama_chat_apply_template(l->tmpl, msgs, (size_t)nm,
                                      add_ass != 0, text, cap);
        if (n < 0) {
            snprintf(l->base.errmsg, sizeof l->base.errmsg,
                     "the chat template of the local model '%s' is not one "
                     "llama.cpp knows; use a model with a ChatML, Llama or "
                     "other built-in template", l->path);
            *rc = ASKDB_ERR_LLM;
            goto out;
        }
        if (n < cap)
            break;
        cap = n + 1;
    }
    text[n] = '\0';
    *rc = ASKDB_OK;
out:
    if (*rc == ASKDB_ERR_NOMEM)
        snprintf(l->base.errmsg, sizeof l->base.errmsg, "out of memory");
    if (*rc) {
        free(text);
        text = NULL;
    }
    for (i = 0; safe && i < nm; i++)
        free(safe[i]);
    free(safe);
    free(msgs);
    return text;
}

/* The request's conversation, ending with the start of the assistant's
** turn (see render()). */
static char *format_prompt(struct local *l, const struct llm_request *req,
                           askdb_status *rc)
{
    return render(l, req->msgs, req->nmsgs, NULL, 1, rc);
}

/* Tokens of text (special tokens parsed) into *out (malloc()ed); returns
** the count, or -1 with m->errmsg set. */
static int tokenize(struct local *l, const char *text, llama_token **out)
{
    int len = (int)strlen(text), cap = len + 8, n;
    llama_token *t = malloc((size_t)cap * sizeof *t), *bigger;

    if (!t)
        goto nomem;
    n = llama_tokenize(l->vocab, text, len, t, cap, true, true);
    if (n < 0 && n != INT32_MIN) {
        cap = -n;
        bigger = realloc(t, (size_t)cap * sizeof *t);
        if (!bigger)
            goto nomem;
        t = bigger;
        n = llama_tokenize(l->vocab, text, len, t, cap, true, true);
    }
    if (n <= 0) {
        free(t);
        snprintf(l->base.errmsg, sizeof l->base.errmsg,
                 "the local model could not tokenize the prompt");
        return -1;
    }
    *out = t;
    return n;
nomem:
    free(t);
    snprintf(l->base.errmsg, sizeof l->base.errmsg, "out of memory");
    return -1;
}

/* ------------------------------------------------------------------ */
/* Prompt-cache files                                                  */
/* ------------------------------------------------------------------ */

/* The cap of the prompt-cache directory in bytes: ASKDB_PROMPT_CACHE_MB
** MiB (a whole number; anything else means the default), 0 = no files. */
static long long kv_cap(void)
{
    const char *e = getenv("ASKDB_PROMPT_CACHE_MB");
    long long mb;
    char *end;

    if (!e || !*e)
        return (long long)LOCAL_KV_MB << 20;
    errno = 0;
    mb = strtoll(e, &end, 10);
    if (errno || *end || mb < 0 || mb > (1LL << 30))
        return (long long)LOCAL_KV_MB << 20;
    return mb << 20;
}

#ifndef ASKDB_LLAMA_ID   /* the llama.cpp build (the Makefile sets it) */
#define ASKDB_LLAMA_ID "llama.cpp"
#endif

/* What a prompt-cache file depends on besides its tokens: the format, the
** llama.cpp build and the context's layout (which write the state) and
** the model file (path, size, modification time). */
static XXH128_hash_t model_identity(const char *path)
{
    char buf[PATH_MAX + 128];
    struct stat sb;
    int n;

    memset(&sb, 0, sizeof sb);
    (void)stat(path, &sb);
    n = snprintf(buf, sizeof buf, "askdb-kv-1 %s seq%d unified f16\n%s\n"
                 "%lld\n%lld.%09ld", ASKDB_LLAMA_ID, LOCAL_SEQ_MAX, path,
                 (long long)sb.st_size, (long long)sb.st_mtim.tv_sec,
                 (long)sb.st_mtim.tv_nsec);
    if (n < 0)
        n = 0;
    if ((size_t)n >= sizeof buf)
        n = (int)sizeof buf - 1;
    return XXH3_128bits(buf, (size_t)n);
}

/*
** How many of the prompt's tokens toks[0..n) are the request's stable
** prefix (llm.h): the prefix is rendered and tokenized alone and compared
** with the prompt token by token (the tokens at the cut may differ, so
** only the common part counts), at most n - 1. 0 when the request marks
** none or it is shorter than LOCAL_KV_MIN.
*/
static int prefix_tokens(struct local *l, const struct llm_request *req,
                         int nm, size_t bytes, const llama_token *toks, int n)
{
    const struct llm_msg *m = req->msgs;
    int k = 0, np;
    llama_token *pt = NULL;
    char *cut = NULL, *text;
    askdb_status rc;

    if (nm < 0 || nm > req->nmsgs || (nm == req->nmsgs && bytes > 0) ||
        (nm == 0 && bytes == 0))
        return 0;
    if (bytes > 0) {
        if (bytes > strlen(m[nm].content))
            return 0;
        cut = strndup(m[nm].content, bytes);
        if (!cut)
            return 0;
        nm++;
    }
    text = render(l, m, nm, cut, 0, &rc);
    if (text && (np = tokenize(l, text, &pt)) > 0) {
        while (k < np && k < n - 1 && pt[k] == toks[k])
            k++;
        free(pt);
    }
    free(text);
    free(cut);
    return k >= LOCAL_KV_MIN ? k : 0;
}

static int stable_tokens(struct local *l, const struct llm_request *req,
                         const llama_token *toks, int n)
{
    return prefix_tokens(l, req, req->stable_msgs, req->stable_bytes, toks,
                         n);
}

/*
** How many of the stable prefix's k tokens are its system message, the
** part every database's prompt shares: 0 when the request has no system
** message before the rest of its stable prefix, or it is shorter than
** LOCAL_KV_MIN.
*/
static int system_tokens(struct local *l, const struct llm_request *req,
                         const llama_token *toks, int k)
{
    int s;

    if (req->nmsgs < 1 || strcmp(req->msgs[0].role, "system") != 0 ||
        req->stable_msgs < 1 ||
        (req->stable_msgs == 1 && req->stable_bytes == 0))
        return 0;
    s = prefix_tokens(l, req, 1, 0, toks, k);
    return s < k ? s : 0;
}

/*
** The file of the prefix toks[0..n), ${cache}/prompts/<32 hex>.kv, and in
** *dir its directory (both malloc()ed); NULL when the cache directory
** cannot be made.
*/
static char *kv_path(struct local *l, const llama_token *toks, int n,
                     char **dir)
{
    XXH3_state_t *st = XXH3_createState();
    XXH128_hash_t h;
    char err[256], *d, *p;
    size_t len;

    *dir = NULL;
    if (!st || XXH3_128bits_reset(st) == XXH_ERROR) {
        XXH3_freeState(st);
        return NULL;
    }
    XXH3_128bits_update(st, &l->model_id, sizeof l->model_id);
    XXH3_128bits_update(st, toks, (size_t)n * sizeof *toks);
    h = XXH3_128bits_digest(st);
    XXH3_freeState(st);
    d = cache_path("prompts", 1, err, sizeof err);
    if (!d)
        return NULL;
    len = strlen(d) + 40;
    p = malloc(len);
    if (!p) {
        free(d);
        return NULL;
    }
    snprintf(p, len, "%s/%016llx%016llx.kv", d, (unsigned long long)h.high64,
             (unsigned long long)h.low64);
    *dir = d;
    return p;
}

/*
** Load the prefix toks[0..n) into the call's conversation from path. 1
** when done; 0 when there is no usable file: the conversation is then
** empty if the load got under way, and a damaged or foreign file (other
** tokens, another llama.cpp) is removed.
*/
static int kv_load(struct llm_dec_call *c, const char *path,
                   const llama_token *toks, int n)
{
    if (access(path, R_OK) != 0)
        return 0;
    if (!llm_dec_load(c, path, toks, n)) {
        unlink(path);
        return 0;
    }
    (void)utimensat(AT_FDCWD, path, NULL, 0);   /* recently used */
    return 1;
}

struct kv_file {
    char *path;
    time_t mtime;
    long long size;
};

static int kv_older(const void *a, const void *b)
{
    const struct kv_file *x = a, *y = b;

    return x->mtime < y->mtime ? -1 : x->mtime > y->mtime;
}

/* Remove the least recently used .kv files of dir until the rest take at
** most cap bytes; temporary files older than an hour (left by a process
** that died) go too. */
static void kv_prune(const char *dir, long long cap)
{
    struct kv_file *f = NULL, *bigger;
    size_t n = 0, room = 0, i, len, k;
    long long total = 0;
    time_t now = time(NULL);
    struct dirent *e;
    struct stat sb;
    DIR *d = opendir(dir);
    char *p;
    int kv;

    if (!d)
        return;
    while ((e = readdir(d)) != NULL) {
        len = strlen(e->d_name);
        kv = len > 3 && strcmp(e->d_name + len - 3, ".kv") == 0;
        if (!kv && !(len > 4 && strcmp(e->d_name + len - 4, ".tmp") == 0))
            continue;
        k = strlen(dir) + len + 2;
        p = malloc(k);
        if (!p)
            break;
        snprintf(p, k, "%s/%s", dir, e->d_name);
        if (stat(p, &sb) != 0 || !S_ISREG(sb.st_mode)) {
            free(p);
            continue;
        }
        if (!kv) {   /* a temporary file */
            if (now - sb.st_mtime > 3600)
                unlink(p);
            free(p);
            continue;
        }
        if (n == room) {
            room = room ? 2 * room : 16;
            bigger = realloc(f, room * sizeof *f);
            if (!bigger) {
                free(p);
                break;
            }
            f = bigger;
        }
        f[n].path = p;
        f[n].mtime = sb.st_mtime;
        f[n].size = (long long)sb.st_size;
        total += f[n++].size;
    }
    closedir(d);
    if (total > cap) {
        qsort(f, n, sizeof *f, kv_older);
        for (i = 0; i < n && total > cap; i++)
            if (unlink(f[i].path) == 0)
                total -= f[i].size;
    }
    for (i = 0; i < n; i++)
        free(f[i].path);
    free(f);
}

/* Write the conversation's state, which holds exactly toks[0..n), to
** path through a temporary file that is renamed, then keep dir under the
** cap. 1 when the file was written. */
static int kv_save(struct local *l, struct llm_dec_call *c, const char *dir,
                   const char *path, const llama_token *toks, int n)
{
    size_t len = strlen(path) + 16;
    char *tmp = malloc(len);
    int ok, fd;

    if (!tmp)
        return 0;
    /* A name of its own (two agents of one process may save the same
    ** prefix at once); llama.cpp then writes it afresh. */
    snprintf(tmp, len, "%s.XXXXXX.tmp", path);
    fd = mkstemps(tmp, 4);
    if (fd < 0) {
        free(tmp);
        return 0;
    }
    close(fd);
    ok = llm_dec_save(c, tmp, toks, n) && rename(tmp, path) == 0;
    if (!ok)
        unlink(tmp);
    free(tmp);
    kv_prune(dir, l->kv_cap);
    return ok;
}

/* Evaluate what the call's conversation lacks of toks[0..n) and, with a
** path, write the file of the prefix (*saved 1 when written). */
static askdb_status eval_and_keep(struct local *l, struct llm_dec_call *c,
                                  const llama_token *toks, int n,
                                  const char *dir, const char *path,
                                  int *saved)
{
    int have = llm_dec_cached(c);
    askdb_status rc = llm_dec_eval(c, toks + have, n - have, 0);

    *saved = !rc && path && kv_save(l, c, dir, path, toks, n);
    return rc;
}

/*
** Make the call's conversation hold the request's stable prefix when it
** holds less of the prompt: from the prefix's file, or evaluated alone
** and then written to it (with the files off, evaluated alone). *file is
** how many tokens came from the file, *saved 1 when the file was written,
** *kept how many of the tokens the conversation held it kept.
** Only a failed evaluation is an error; the files are a help, never a
** cause of failure.
**
** The prefix is a decode of its own even when nothing is kept, so that
** every path to a prompt - cold, warmed up, from a file - evaluates it in
** the same batches: llama.cpp's kernels need not give a row the same
** bits in a batch of another shape (the AVX-512 ones do not), and a near
** tie of the greedy choice would then move with the warm-up. For the
** same reason its system message (system_tokens()), which every
** database's prompt shares, is a decode of its own before the rest, with
** a file of its own: a process's first question on a database without
** a file then evaluates only the schema, as a later database's first
** question in a long-running process does. And that question evaluates
** the schema from the same token on: a conversation that holds the
** system message and a few tokens more (another database's, whose
** prompt begins as this one's) keeps only the system message. Past the
** prefix the same holds for a question: a conversation whose cells after
** the prefix were evaluated for another scope (req->scope: another
** question) keeps only the prefix, so that the question is evaluated
** from there as in a new process, not from wherever the question before
** it parted from it ("Question: How many" shared, the rest not).
*/
static askdb_status use_stable_prefix(struct local *l,
                                      struct llm_dec_call *c,
                                      const struct llm_request *req,
                                      const llama_token *toks, int n,
                                      long *file, int *saved, int *kept)
{
    int k = stable_tokens(l, req, toks, n), sys, sys_saved;
    askdb_status rc = ASKDB_OK;
    char *dir = NULL, *path = NULL;

    *file = 0;
    *saved = 0;
    if (req->scope && k > 0 && k < llm_dec_cached(c) &&
        llm_dec_scope(c) != req->scope)
        llm_dec_trim(c, k);
    llm_dec_set_scope(c, req->scope);
    *kept = llm_dec_cached(c);
    if (k <= *kept)
        return ASKDB_OK;
    if (l->kv_on)
        path = kv_path(l, toks, k, &dir);
    if (path && kv_load(c, path, toks, k)) {
        *file = k;
        goto done;
    }
    /* The system message first, alone, from its own file or into it: a
    ** new database's first question then evaluates only its schema. (A
    ** failed load above has emptied the conversation.) */
    sys = system_tokens(l, req, toks, k);
    if (sys > 0 && sys < llm_dec_cached(c))
        llm_dec_trim(c, sys);
    *kept = llm_dec_cached(c);   /* (a failed load above kept nothing) */
    if (sys > llm_dec_cached(c)) {
        char *sdir = NULL, *spath = NULL;

        if (l->kv_on)
            spath = kv_path(l, toks, sys, &sdir);
        if (spath && kv_load(c, spath, toks, sys))
            *file = sys;
        else
            rc = eval_and_keep(l, c, toks, sys, sdir, spath, &sys_saved);
        free(spath);
        free(sdir);
    }
    if (!rc)
        rc = eval_and_keep(l, c, toks, k, dir, path, saved);
done:
    free(path);
    free(dir);
    return rc;
}

/*
** The request's grammar as a llama.cpp sampler in *grammar (NULL when the
** request has none); each sequence gets a clone of it (see
** sample_one()). ASKDB_ERR_LLM with m->errmsg set when it does not parse.
*/
static askdb_status make_grammar(struct local *l,
                                 const struct llm_request *req,
                                 struct llama_sampler **grammar)
{
    *grammar = NULL;
    if (!req->grammar || !*req->grammar)
        return ASKDB_OK;
    llm_dec_clear_error();
    *grammar = llama_sampler_init_grammar(l->vocab, req->grammar, "root");
    if (!*grammar) {
        snprintf(l->base.errmsg, sizeof l->base.errmsg,
                 "the grammar for the local model does not parse as GBNF "
                 "with a rule 'root'%s%s",
                 llm_dec_error()[0] ? ": " : "", llm_dec_error());
        return ASKDB_ERR_LLM;
    }
    return ASKDB_OK;
}

/*
** The sampler chain of one sequence: greedy for temperature 0, else
** temperature + random draw with the seed (-1 = random). NULL with
** m->errmsg set when out of memory.
*/
static struct llama_sampler *make_chain(struct local *l, double temperature,
                                        int seed)
{
    struct llama_sampler *chain;
    uint32_t s = seed < 0 ? LLAMA_DEFAULT_SEED : (uint32_t)seed;

    chain = llama_sampler_chain_init(llama_sampler_chain_default_params());
    if (!chain) {
        snprintf(l->base.errmsg, sizeof l->base.errmsg, "out of memory");
        return NULL;
    }
    if (temperature <= 0) {
        llama_sampler_chain_add(chain, llama_sampler_init_greedy());
    } else {
        llama_sampler_chain_add(chain,
                                llama_sampler_init_temp((float)temperature));
        llama_sampler_chain_add(chain, llama_sampler_init_dist(s));
    }
    return chain;
}

/* All of the vocabulary with the logits of one row, in l->cand (as
** llama_sampler_sample() builds it). */
static llama_token_data_array candidates(struct local *l, const float *row)
{
    llama_token_data_array arr;
    int i;

    for (i = 0; i < l->n_vocab; i++) {
        l->cand[i].id = i;
        l->cand[i].logit = row[i];
        l->cand[i].p = 0.0f;
    }
    arr.data = l->cand;
    arr.size = (size_t)l->n_vocab;
    arr.selected = -1;
    arr.sorted = false;
    return arr;
}

/*
** One token from a row of logits. Filtering the whole vocabulary through
** the grammar costs 40-200 ms a token (152k tokens for Qwen); asking it
** about one token costs well under a millisecond. So: sample without the
** grammar, ask the grammar about the chosen token only, and only when it
** refuses filter the whole vocabulary and sample again - what llama.cpp's
** own common sampler does. The result is the same token the grammar-first
** chain would pick for greedy decoding.
*/
static llama_token sample_one(struct local *l, struct llama_sampler *chain,
                              struct llama_sampler *grammar,
                              const float *row)
{
    llama_token_data_array arr = candidates(l, row);
    llama_token_data one;
    llama_token t;

    llama_sampler_apply(chain, &arr);
    if (arr.selected < 0)
        return -1;
    t = arr.data[arr.selected].id;
    llama_sampler_accept(chain, t);
    if (!grammar)
        return t;
    one.id = t;
    one.logit = 1.0f;
    one.p = 0.0f;
    arr.data = &one;
    arr.size = 1;
    arr.selected = -1;
    arr.sorted = false;
    llama_sampler_apply(grammar, &arr);
    if (one.logit != -INFINITY) {
        llama_sampler_accept(grammar, t);
        return t;
    }
    arr = candidates(l, row);
    llama_sampler_apply(grammar, &arr);
    llama_sampler_apply(chain, &arr);
    t = arr.selected >= 0 ? arr.data[arr.selected].id : t;
    llama_sampler_accept(grammar, t);
    llama_sampler_accept(chain, t);
    return t;
}

/* ------------------------------------------------------------------ */
/* Stop conditions and streaming                                       */
/* ------------------------------------------------------------------ */

/* First occurrence of needle in hay[0..len), ignoring ASCII case when
** nocase; NULL when none. */
static const char *find(const char *hay, size_t len, const char *needle,
                        int nocase)
{
    size_t n = strlen(needle), i;

    if (n == 0 || n > len)
        return NULL;
    for (i = 0; i + n <= len; i++)
        if (nocase ? strncasecmp(hay + i, needle, n) == 0
                   : memcmp(hay + i, needle, n) == 0)
            return hay + i;
    return NULL;
}

/*
** Where the reply text[0..len) ends, if it has ended: at the first stop
** string (excluded) or just after the ``` that closes a ```sql block.
** Returns the length to keep, or -1 when generation should go on.
*/
static long reply_end(const char *text, size_t len, const char *const *stop)
{
    const char *p, *best = NULL, *open, *close;
    long keep = -1;
    size_t i;

    for (i = 0; stop && stop[i]; i++) {
        p = find(text, len, stop[i], 0);
        if (p && (!best || p < best))
            best = p;
    }
    if (best)
        keep = (long)(best - text);
    open = find(text, len, "```sql", 1);
    if (open) {
        open += 6;
        close = find(open, len - (size_t)(open - text), "```", 0);
        if (close && (keep < 0 || close + 3 - text < keep))
            keep = (long)(close + 3 - text);
    }
    return keep;
}

/*
** With llm_request.sql_end: the length of text[0..len) up to and with the
** ';' that ends the statement of its ```sql block (the first one outside
** '...', "...", `...` and [...]; a doubled quote inside a string closes
** and reopens it), or -1 while there is none. The SQL grammar has no
** comments and no second statement, so nothing but white space and the
** closing fence can follow that ';'.
*/
static long sql_end(const char *text, size_t len)
{
    const char *open = find(text, len, "```sql", 1);
    size_t i;
    char q = 0;

    if (!open)
        return -1;
    for (i = (size_t)(open - text) + 6; i < len; i++) {
        char ch = text[i];

        if (q) {
            if (ch == q)
                q = 0;
        } else if (ch == '\'' || ch == '"' || ch == '`') {
            q = ch;
        } else if (ch == '[') {
            q = ']';
        } else if (ch == ';') {
            return (long)i + 1;
        }
    }
    return -1;
}

/*
** How many bytes at the end of text[0..len) must wait before they are
** streamed: the longest tail that starts a stop string, or an incomplete
** UTF-8 sequence, whichever is longer.
*/
static size_t held_tail(const char *text, size_t len, const char *const *stop)
{
    size_t hold = 0, i, k, n, need;
    unsigned char c;

    for (i = 0; stop && stop[i]; i++) {
        n = strlen(stop[i]);
        if (n == 0)
            continue;
        for (k = n - 1 < len ? n - 1 : len; k > hold; k--)
            if (memcmp(text + len - k, stop[i], k) == 0) {
                hold = k;
                break;
            }
    }
    for (k = 1; k <= 3 && k <= len; k++) {
        c = (unsigned char)text[len - k];
        if ((c & 0xC0) != 0x80) {   /* lead byte (or ASCII) */
            need = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
            if (need > k && k > hold)
                hold = k;
            break;
        }
    }
    return hold;
}

/* Stream text[*sent..upto) to the request's callback. */
static void stream_to(const struct llm_request *req, const char *text,
                      size_t *sent, size_t upto)
{
    if (req->on_token && upto > *sent)
        req->on_token(req->token_ud, text + *sent, upto - *sent);
    if (upto > *sent)
        *sent = upto;
}

/* ------------------------------------------------------------------ */
/* The provider                                                        */
/* ------------------------------------------------------------------ */

/* p[0..n) appended to *text (*len bytes of *cap, kept NUL-terminated);
** returns 0, or -1 when out of memory. */
static int append_bytes(const char *p, size_t n, char **text, size_t *len,
                        size_t *cap)
{
    char *bigger;

    if (*len + n + 1 > *cap) {
        size_t c = (*cap ? *cap * 2 : 1024) + n;
        bigger = realloc(*text, c);
        if (!bigger)
            return -1;
        *text = bigger;
        *cap = c;
    }
    memcpy(*text + *len, p, n);
    *len += n;
    (*text)[*len] = '\0';
    return 0;
}

/* The text of one token (special tokens render as nothing) appended the
** same way. */
static int append_piece(struct local *l, llama_token t, char **text,
                        size_t *len, size_t *cap)
{
    char piece[256];
    int n = llama_token_to_piece(l->vocab, t, piece, sizeof piece, 0, false);

    if (n < 0)   /* longer than any real token; drop it rather than fail */
        n = 0;
    return append_bytes(piece, (size_t)n, text, len, cap);
}

/* The probability of token t in a row of logits (softmax at temperature
** 1 over the whole vocabulary). */
static double token_p(const struct local *l, const float *row, llama_token t)
{
    float max = row[0];
    double sum = 0;
    int i;

    for (i = 1; i < l->n_vocab; i++)
        if (row[i] > max)
            max = row[i];
    for (i = 0; i < l->n_vocab; i++)
        sum += exp((double)(row[i] - max));
    return exp((double)(row[t] - max)) / sum;
}

/* One reply being generated in one sequence of the call's lane. */
struct seq {
    int id;                      /* lane sequence; 0 = the conversation */
    struct llama_sampler *chain;
    struct llama_sampler *grammar;   /* NULL without a grammar */
    int own_grammar;             /* grammar is a clone, freed with s */
    struct llm_reply *out;
    int stream;                  /* pass the text on to req->on_token */
    int waiting;                 /* not started: waits for the gate */
    int row;                     /* its row of logits from the last step */
    const float *first_row;      /* instead, once: a branch's saved row */
    int pos;                     /* where its next token goes */
    int max;                     /* token cap */
    int n;                       /* tokens sampled */
    double min_p;                /* least token_p() of a chosen token */
    double min_p_words;          /* the same without white-space tokens */
    int done;
    int cut;                     /* LLM_CUT_FOLLOW: stopped at the follow
                                    cap; LLM_CUT_MAX_TOKENS: at
                                    max_tokens before its end;
                                    LLM_CUT_CONTEXT: at the context's
                                    room, which was less */
    int settled;                 /* stopped: llm_request.on_end said so */
    int told;                    /* its end was passed to on_end */
    int reply;                   /* its index among the call's replies */
    int branched;                /* tokens taken from sequence 0 */
    char *text;
    size_t len, cap, sent;
    llama_token *toks;           /* the tokens sampled, in order */
    int tcap;
};

/* A sequence's state before the step that sampled its token n + 1: what a
** candidate branching off it there starts from (see generate()); row:
** the logits that token was sampled from. */
struct seq_mark {
    int pos, n;
    const float *row;
    double min_p, min_p_words;
};

/* Append t to s->toks and count it. -1 when out of memory. */
static int push_token(struct seq *s, llama_token t)
{
    if (s->n == s->tcap) {
        int c = s->tcap ? s->tcap * 2 : 64;
        llama_token *bigger = realloc(s->toks, (size_t)c * sizeof *bigger);

        if (!bigger)
            return -1;
        s->toks = bigger;
        s->tcap = c;
    }
    s->toks[s->n++] = t;
    return 0;
}

/* A reply's token cap: the request's, or LOCAL_MAX_TOKENS. */
static int req_max_tokens(const struct llm_request *req)
{
    return req->max_tokens > 0 ? req->max_tokens : LOCAL_MAX_TOKENS;
}

/*
** Sample the next token of s. Returns 1 with the token in *tok when it
** must be evaluated (s goes on), 0 when s has ended (text cut at its stop
** condition), -1 when out of memory. A token nobody samples after (the
** one that reaches the cap or a stop) is not evaluated.
*/
static int seq_step(struct local *l, struct llm_dec_call *c,
                    const struct llm_request *req, struct seq *s, double t0,
                    llama_token *tok)
{
    const float *row = s->first_row ? s->first_row
                                    : llm_dec_logits(c, s->row);
    llama_token t = sample_one(l, s->chain, s->grammar, row);
    double p;
    size_t at;
    long keep;

    s->first_row = NULL;
    if (t < 0)
        return -1;
    p = token_p(l, row, t);
    if (s->n == 0)
        s->out->ttft_ms = clockx_now_ms() - t0;
    if (llama_vocab_is_eog(l->vocab, t))
        return 0;
    if (push_token(s, t) != 0)
        return -1;
    at = s->len;
    if (append_piece(l, t, &s->text, &s->len, &s->cap) != 0)
        return -1;
    if (p < s->min_p)
        s->min_p = p;
    while (at < s->len && isspace((unsigned char)s->text[at]))
        at++;
    if (at < s->len && p < s->min_p_words)
        s->min_p_words = p;
    keep = reply_end(s->text, s->len, req->stop);
    if (keep >= 0) {
        s->len = (size_t)keep;
        s->text[s->len] = '\0';
        return 0;
    }
    if (req->sql_end && req->grammar &&
        (keep = sql_end(s->text, s->len)) >= 0) {
        /* What follows is the grammar's: close the block, decode no more. */
        s->len = (size_t)keep;
        return append_bytes("\n```", 4, &s->text, &s->len, &s->cap) ? -1 : 0;
    }
    if (s->stream)
        stream_to(req, s->text, &s->sent,
                  s->len - held_tail(s->text, s->len, req->stop));
    if (s->n >= s->max) {
        /* Out of tokens, not at an end: the end-of-turn token and the
        ** stop and fence ends were looked for above, on this token too,
        ** so a reply whose last token ends it is whole. */
        s->cut = s->max < req_max_tokens(req) ? LLM_CUT_CONTEXT
                                              : LLM_CUT_MAX_TOKENS;
        return 0;
    }
    *tok = t;
    return 1;
}

/*
** Start the waiting sequence s as a branch of g at mark m (g's state
** before the step that sampled its token m->n + 1): s shares g's cells
** before m->pos (the prompt and g's first m->n tokens), takes those tokens
** as its own (text, sampler and grammar state, least probabilities) and
** its next token comes from g's row of logits m->row, the one g sampled
** that token from. -1 when out of memory.
*/
static int seq_branch(struct local *l, struct llm_dec_call *c, struct seq *s,
                      const struct seq *g, const struct seq_mark *m)
{
    int i;

    for (i = 0; i < m->n; i++) {
        llama_token t = g->toks[i];

        if (push_token(s, t) != 0 ||
            append_piece(l, t, &s->text, &s->len, &s->cap) != 0)
            return -1;
        llama_sampler_accept(s->chain, t);
        if (s->grammar)
            llama_sampler_accept(s->grammar, t);
    }
    s->branched = m->n;
    s->min_p = m->min_p;
    s->min_p_words = m->min_p_words;
    s->pos = m->pos;
    s->first_row = m->row;
    s->waiting = 0;
    llm_dec_share(c, s->id, m->pos);
    return 0;
}

/* A copy of a row of logits in l->branch_row (made on first use). -1
** when out of memory. */
static int keep_row(struct local *l, const float *row)
{
    if (!l->branch_row) {
        l->branch_row = malloc((size_t)l->n_vocab * sizeof *l->branch_row);
        if (!l->branch_row)
            return -1;
    }
    memcpy(l->branch_row, row, (size_t)l->n_vocab * sizeof *l->branch_row);
    return 0;
}

/*
** Pass the replies of seqs[0..ns) that have ended since the last step
** (not cut, not gated) to req->on_end, in sequence order, with how many
** are still being written or waiting to branch, plus later, the replies
** of later rounds. Returns 1 when on_end said the rest are not needed:
** every sequence not done has then ended, settled.
*/
static int tell_ends(const struct llm_request *req, struct seq *seqs, int ns,
                     int later)
{
    int i, pending = later;

    if (!req->on_end || req->first_reply != 0)
        return 0;
    for (i = 0; i < ns; i++)
        pending += !seqs[i].done;
    for (i = 0; i < ns; i++) {
        if (!seqs[i].done || seqs[i].told || seqs[i].cut ||
            seqs[i].waiting)
            continue;
        seqs[i].told = 1;
        if (req->on_end(req->end_ud, seqs[i].reply, seqs[i].text, pending)) {
            for (i = 0; i < ns; i++)
                if (!seqs[i].done)
                    seqs[i].done = seqs[i].settled = 1;
            return 1;
        }
    }
    return 0;
}

/*
** Generate the replies of seqs[0..ns), whose first logits are at their
** rows: each step samples one token per live sequence and evaluates them
** in one step of the shared batch, until every sequence has ended.
** Sequence 0's tokens join the conversation. Waiting sequences (the gate,
** llm_request.gate) start when sequence 0 chooses a token with less than
** req->gate probability, as branches of it (seq_branch()) at that token,
** or at an earlier one below req->branch_p when that is higher: they
** take its tokens before the branch point as their own and sample their
** own token in its place from the same logits, kept since; if sequence 0
** ends sure, they never start. A sequence other than reply 0 that
** reaches lim tokens stops, cut (the follow cap, llm_request.follow_cap);
** lim < 0: from reply 0's length once it has ended (the first round,
** where seqs[0] is reply 0). Ended replies go to req->on_end
** (tell_ends()); later: how many replies later rounds will make. Returns
** ASKDB_OK with *settled 1 when on_end ended the rest.
*/
static askdb_status generate(struct local *l, struct llm_dec_call *c,
                             const struct llm_request *req, struct seq *seqs,
                             int ns, double t0, long lim, int later,
                             int *settled)
{
    llama_token tok[LOCAL_SEQ_MAX];
    int sid[LOCAL_SEQ_MAX], at[LOCAL_SEQ_MAX];
    double bp = req->branch_p;
    struct seq_mark pre, mark;
    askdb_status rc;
    int i, nb, r, row0, marked = 0;

    memset(&mark, 0, sizeof mark);
    if (bp < req->gate)
        bp = req->gate;
    for (;;) {
        if (req->cancel && atomic_load(req->cancel)) {
            snprintf(l->base.errmsg, sizeof l->base.errmsg, "cancelled");
            return ASKDB_ERR_CANCELLED;
        }
        pre.pos = seqs[0].pos;
        pre.n = seqs[0].n;
        pre.min_p = seqs[0].min_p;
        pre.min_p_words = seqs[0].min_p_words;
        row0 = seqs[0].row;
        nb = 0;
        for (i = 0; i < ns; i++) {
            if (i > 0 && lim < 0 && seqs[0].done)
                lim = llm_follow_limit(req, seqs[0].n);
            if (seqs[i].waiting) {   /* sequence 0 has just sampled */
                if (seqs[0].min_p_words >= req->gate) {
                    seqs[i].done = seqs[0].done;   /* sure to the end */
                    continue;
                }
                if (seq_branch(l, c, &seqs[i], &seqs[0], &mark) != 0)
                    goto nomem;
            }
            if (seqs[i].done)
                continue;
            r = seq_step(l, c, req, &seqs[i], t0, &tok[nb]);
            if (r < 0)
                goto nomem;
            if (i == 0 && ns > 1 && seqs[1].waiting && !marked &&
                seqs[0].min_p_words < bp) {
                /* the branch point, and the row it was sampled from: a
                ** copy when the branches start at a later step */
                mark = pre;
                mark.row = llm_dec_logits(c, row0);
                if (seqs[0].min_p_words >= req->gate) {
                    if (keep_row(l, mark.row) != 0)
                        goto nomem;
                    mark.row = l->branch_row;
                }
                marked = 1;
            }
            if (r == 0) {
                seqs[i].done = 1;
                continue;
            }
            if (seqs[i].id != 0 && lim >= 0 && seqs[i].n >= lim) {
                seqs[i].done = 1;
                seqs[i].cut = LLM_CUT_FOLLOW;
                continue;
            }
            sid[nb] = seqs[i].id;
            at[nb] = seqs[i].pos++;
            seqs[i].row = nb++;
        }
        /* Settled: every sequence left has ended, its row not evaluated. */
        if (tell_ends(req, seqs, ns, later)) {
            *settled = 1;
            nb = 0;
        }
        if (nb == 0)
            return ASKDB_OK;
        rc = llm_dec_step(c, tok, sid, at, nb);
        if (rc)
            return rc;
    }
nomem:
    snprintf(l->base.errmsg, sizeof l->base.errmsg, "out of memory");
    return ASKDB_ERR_NOMEM;
}

/*
** Give the sequences of seqs[0..ns) other than 0 the prompt toks[0..n)
** that sequence 0 holds. In the first round (right after the prompt was
** evaluated) they share all its cells and its row of logits. In later
** rounds those logits have moved on, so they share all but the last
** prompt token and evaluate that again, each, in one step.
*/
static askdb_status share_prompt(struct llm_dec_call *c,
                                 const llama_token *toks, int n,
                                 struct seq *seqs, int ns, int first_round)
{
    llama_token tok[LOCAL_SEQ_MAX];
    int sid[LOCAL_SEQ_MAX], at[LOCAL_SEQ_MAX];
    int i;

    for (i = 0; i < ns; i++) {
        seqs[i].pos = n;
        if (seqs[i].id != 0 && !seqs[i].waiting)
            llm_dec_share(c, seqs[i].id, first_round ? n : n - 1);
    }
    if (first_round)
        return ASKDB_OK;
    for (i = 0; i < ns; i++) {
        tok[i] = toks[n - 1];
        sid[i] = seqs[i].id;
        at[i] = n - 1;
        seqs[i].row = i;
    }
    return llm_dec_step(c, tok, sid, at, ns);
}

/*
** One round: replies out[first..first+ns) in sequences decoded together.
** The first round has reply 0 in sequence 0 (the conversation, which
** keeps it) and the others in sequences 1..; a later round uses
** sequences 1..ns only. The prompt toks[0..n) is in sequence 0. Each
** sequence has its own sampler chain and its own clone of grammar (which
** stays in its start state), except a lone sequence (n = 1), which uses
** grammar itself; at most room tokens each. Sequences 1.. are emptied on
** the way out.
*/
static askdb_status run_round(struct local *l, struct llm_dec_call *c,
                              const struct llm_request *req,
                              struct llama_sampler *grammar,
                              const llama_token *toks, int n, int first,
                              int ns, long room, double t0, int later,
                              int *settled, struct llm_reply *out)
{
    int max = req_max_tokens(req);
    struct seq seqs[LOCAL_SEQ_MAX];
    askdb_status rc = ASKDB_ERR_NOMEM;
    int i, reply, gated = first == 0 && req->gate > 0;

    assert(ns >= 1 && ns <= LOCAL_SEQ_MAX);
    memset(seqs, 0, sizeof seqs);
    for (i = 0; i < ns; i++) {
        struct seq *s = &seqs[i];

        reply = first + i;
        s->id = first == 0 ? i : i + 1;
        s->reply = reply;
        s->out = &out[reply];
        s->stream = reply == 0 && req->first_reply == 0;
        s->min_p = 1;
        s->min_p_words = 1;
        s->row = 0;
        s->max = max < room ? max : (int)room;
        s->done = s->max <= 0;
        s->waiting = !s->done && gated && i > 0;
        s->chain = make_chain(l, llm_candidate_temperature(req, reply),
                              llm_candidate_seed(req, reply));
        if (!s->chain)
            goto out;
        if (grammar && ns == 1 && first == 0) {
            s->grammar = grammar;
        } else if (grammar) {
            s->grammar = llama_sampler_clone(grammar);
            s->own_grammar = 1;
            if (!s->grammar)
                goto nomem;
        }
        s->cap = 256;
        s->text = malloc(s->cap);
        if (!s->text)
            goto nomem;
        s->text[0] = '\0';
    }
    rc = share_prompt(c, toks, n, seqs, ns, first == 0);
    if (rc)
        goto out;
    rc = generate(l, c, req, seqs, ns, t0,
                  first == 0 ? -1 : llm_follow_limit(req,
                                                     out[0].completion_tokens),
                  later, settled);
    if (rc)
        goto out;
    for (i = 0; i < ns; i++) {
        if (seqs[i].waiting && !seqs[i].settled) {
            seqs[i].out->gated = 1;
            continue;
        }
        if (seqs[i].stream)
            stream_to(req, seqs[i].text, &seqs[i].sent, seqs[i].len);
        seqs[i].out->text = seqs[i].text;
        seqs[i].out->completion_tokens = seqs[i].n;
        seqs[i].out->min_p = seqs[i].min_p;
        seqs[i].out->min_p_words = seqs[i].min_p_words;
        seqs[i].out->cut = seqs[i].cut;
        seqs[i].out->settled = seqs[i].settled;
        seqs[i].out->branch_tokens = seqs[i].branched;
        seqs[i].text = NULL;
    }
    goto out;
nomem:
    rc = ASKDB_ERR_NOMEM;
    snprintf(l->base.errmsg, sizeof l->base.errmsg, "out of memory");
out:
    for (i = 0; i < ns; i++) {
        if (seqs[i].id != 0 && !seqs[i].waiting)
            llm_dec_drop(c, seqs[i].id);
        llama_sampler_free(seqs[i].chain);
        if (seqs[i].own_grammar)
            llama_sampler_free(seqs[i].grammar);
        free(seqs[i].text);
        free(seqs[i].toks);
    }
    return rc;
}

/*
** n replies (llm.h: llm_complete_n; n = 1 is llm_complete): format and
** tokenize, take a lane of the decoder (which keeps the longest prefix
** any lane holds), evaluate the rest of the prompt once in its sequence
** 0, then generate in rounds of up to LOCAL_SEQ_MAX sequences.
*/
static askdb_status local_run(struct local *l, const struct llm_request *req,
                              int n, struct llm_reply *out)
{
    int max = req_max_tokens(req);
    int ns = n < LOCAL_SEQ_MAX ? n : LOCAL_SEQ_MAX;
    struct llama_sampler *grammar = NULL;
    struct llm_dec_call *c = NULL;
    llama_token *toks = NULL;
    double t0 = clockx_now_ms();
    char *prompt = NULL;
    askdb_status rc;
    int ntok, reused, first, k, i, saved, settled = 0;
    long file;

    if (!l->cand) {
        l->cand = malloc((size_t)l->n_vocab * sizeof *l->cand);
        if (!l->cand) {
            snprintf(l->base.errmsg, sizeof l->base.errmsg,
                     "out of memory");
            return ASKDB_ERR_NOMEM;
        }
    }
    prompt = format_prompt(l, req, &rc);
    if (!prompt)
        goto out;
    rc = ASKDB_ERR_LLM;
    ntok = tokenize(l, prompt, &toks);
    if (ntok < 0)
        goto out;
    /* The grammar first: a bad one should fail before any work. */
    rc = make_grammar(l, req, &grammar);
    if (rc)
        goto out;
    rc = llm_dec_begin(l->dec, toks, ntok, (long)max * ns, req->cancel, &c,
                       l->base.errmsg, sizeof l->base.errmsg);
    if (rc)
        goto out;
    if (grammar && req->sql_end)   /* one ```sql block: text */
        llm_dec_text_only(c, toks, ntok);
    rc = use_stable_prefix(l, c, req, toks, ntok, &file, &saved, &reused);
    if (rc)
        goto out;
    if (file)
        reused = (int)file;   /* the rest of the prefix was evaluated */
    rc = llm_dec_eval(c, toks + llm_dec_cached(c),
                      ntok - llm_dec_cached(c), 1);
    if (rc)
        goto out;
    for (first = 0; first < n; first += k) {
        k = first == 0 ? ns : n - first < ns - 1 ? n - first : ns - 1;
        if (first > 0 && req->gate > 0 && out[0].min_p_words >= req->gate) {
            for (i = first; i < n; i++)
                out[i].gated = 1;   /* sure: no later rounds either */
            break;
        }
        rc = run_round(l, c, req, grammar, toks, ntok, first, k,
                       (llm_dec_room(c) - ntok) / ns, t0, n - first - k,
                       &settled, out);
        if (rc)
            goto out;
        if (settled) {
            for (i = first + k; i < n; i++)
                out[i].settled = 1;   /* not begun */
            break;
        }
    }
    /* What was evaluated for each reply: reply 0 the prompt after the
    ** reused prefix; the others of the first round nothing (they share
    ** sequence 0's prompt, the gate's replies its first tokens too);
    ** later rounds the last prompt token each. */
    for (i = 0; i < n; i++) {
        out[i].prompt_tokens = ntok;
        out[i].cached_tokens = i == 0 ? reused : i < ns ? ntok : ntok - 1;
        out[i].shared_steps = llm_dec_shared_steps(c);
        out[i].text_steps = llm_dec_text_steps(c);
    }
    out[0].load_ms = l->load_ms;
    out[0].huge_mb = l->load_ms > 0 ? l->huge_mb : 0;
    out[0].file_tokens = file;
    out[0].file_saved = saved;
    l->load_ms = 0;
out:
    llm_dec_end(c);
    llama_sampler_free(grammar);
    free(toks);
    free(prompt);
    return rc;
}

/* llm_vtab.complete */
static askdb_status local_complete(llm *m, const struct llm_request *req,
                                   struct llm_reply *out)
{
    return local_run((struct local *)m, req, 1, out);
}

/* llm_vtab.complete_n */
static askdb_status local_complete_n(llm *m, const struct llm_request *req,
                                     int n, struct llm_reply *out)
{
    return local_run((struct local *)m, req, n, out);
}

/* llm_vtab.warm: the stable prefix into the lane's sequence 0, as a
** call would put it there (use_stable_prefix()); nothing else. */
static askdb_status local_warm(llm *m, const struct llm_request *req)
{
    struct local *l = (struct local *)m;
    struct llm_dec_call *c = NULL;
    llama_token *toks = NULL;
    char *prompt;
    askdb_status rc;
    int ntok, saved, kept;
    long file;

    prompt = format_prompt(l, req, &rc);
    if (!prompt)
        return rc;
    rc = ASKDB_ERR_LLM;
    ntok = tokenize(l, prompt, &toks);
    if (ntok < 0)
        goto out;
    rc = llm_dec_begin(l->dec, toks, ntok, 1, req->cancel, &c,
                       l->base.errmsg, sizeof l->base.errmsg);
    if (rc)
        goto out;
    rc = use_stable_prefix(l, c, req, toks, ntok, &file, &saved, &kept);
out:
    llm_dec_end(c);
    free(toks);
    free(prompt);
    return rc;
}

/* llm_vtab.destroy */
static void local_destroy(llm *m)
{
    struct local *l = (struct local *)m;
    int i;

    free(l->cand);
    free(l->branch_row);
    if (l->owner) {
        llm_dec_free(l->dec);
        if (l->model)
            llama_model_free(l->model);
        for (i = 0; i < l->nspecial; i++)
            free(l->special[i]);
        free(l->special);
        free(l->path);
    }
    free(l);
}

static const struct llm_vtab local_vtab = {"local", local_complete,
                                           local_destroy, 1,
                                           local_complete_n, local_warm};

/* Threads for generation and prompt batches: cfg->threads, or every core
** this process may run on (its affinity mask, so that taskset and cpusets
** are honoured; more threads than cores stall llama.cpp's threads on each
** other). */
static int thread_count(const askdb_config *cfg)
{
    cpu_set_t set;
    long n;

    if (cfg->threads > 0)
        return cfg->threads;
    if (sched_getaffinity(0, sizeof set, &set) == 0)
        n = CPU_COUNT(&set);
    else
        n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 && n < 1024 ? (int)n : 1;
}

/*
** Load the model (memory-mapped) and make its decoder with `lanes` lanes:
** one context of LOCAL_CTX tokens a lane (at most the model's training
** context) and the thread that decodes it. ASKDB_ERR_USAGE when the file
** is missing or not a model llama.cpp can load, with the reason in err;
** ASKDB_ERR_LLM when the context cannot be made.
*/
static askdb_status load(const askdb_config *cfg, int lanes,
                         struct local **out, char *err, size_t errlen)
{
    struct llama_model_params mp;
    struct hp_snap before = {NULL, 0, 1};
    struct local *l;
    askdb_status rc;
    double t0;
    long n_ctx;
    int train;

    *out = NULL;
    l = calloc(1, sizeof *l);
    if (!l) {
        snprintf(err, errlen, "out of memory");
        return ASKDB_ERR_NOMEM;
    }
    l->base.vt = &local_vtab;
    l->owner = 1;
    l->path = model_path(cfg, &rc, err, errlen);
    if (!l->path)
        goto fail;
    l->kv_cap = kv_cap();
    l->kv_on = !cfg->no_prompt_cache && l->kv_cap > 0;
    l->model_id = model_identity(l->path);
    rc = check_model_file(l->path, text_ends_nocase(cfg->model, ".gguf"),
                          err, errlen);
    if (rc)
        goto fail;

    llm_dec_init_backend();
    t0 = clockx_now_ms();
    hp_snapshot(&before, cfg->huge_pages);
    mp = llama_model_default_params();
    mp.load_mode = LLAMA_LOAD_MODE_MMAP;
    llm_dec_clear_error();
    l->model = llama_model_load_from_file(l->path, mp);
    if (!l->model) {
        snprintf(err, errlen, "cannot load model file '%s'%s%s (is it a "
                              "GGUF model? set ASKDB_LLAMA_LOG=1 to see "
                              "llama.cpp's log)", l->path,
                 llm_dec_error()[0] ? ": " : "", llm_dec_error());
        rc = ASKDB_ERR_USAGE;
        goto fail;
    }
    l->vocab = llama_model_get_vocab(l->model);
    l->n_vocab = llama_vocab_n_tokens(l->vocab);
    if (collect_special(l) != 0) {
        snprintf(err, errlen, "out of memory");
        rc = ASKDB_ERR_NOMEM;
        goto fail;
    }
    l->tmpl = llama_model_chat_template(l->model, NULL);
    if (!l->tmpl)
        l->tmpl = "chatml";   /* what llama.cpp itself assumes */
    train = llama_model_n_ctx_train(l->model);
    if (train <= 0 || train > LOCAL_CTX_MAX)
        train = LOCAL_CTX_MAX;
    n_ctx = (long)LOCAL_CTX * lanes;
    rc = llm_dec_new(l->model, l->path, lanes, thread_count(cfg),
                     n_ctx < train ? (int)n_ctx : train, train,
                     cfg->huge_pages, &l->dec, err, errlen);
    if (rc)
        goto fail;
    l->huge_mb = (double)hp_advise_new(&before) / (1 << 20);
    l->load_ms = clockx_now_ms() - t0;
    *out = l;
    return ASKDB_OK;
fail:
    free(before.r);
    local_destroy(&l->base);
    return rc;
}

askdb_status llm_local_load(const askdb_config *cfg, llm **out, char *err,
                            size_t errlen)
{
    struct local *l = NULL;
    askdb_status rc;

    *out = NULL;
    rc = load(cfg, cfg->parallel > 0 ? cfg->parallel : 1, &l, err, errlen);
    if (rc == ASKDB_OK)
        *out = &l->base;
    return rc;
}

askdb_status llm_local_new(const askdb_config *cfg, llm **out, char *err,
                           size_t errlen)
{
    struct local *l = NULL;
    askdb_status rc;

    *out = NULL;
    rc = load(cfg, 1, &l, err, errlen);
    if (rc == ASKDB_OK)
        *out = &l->base;
    return rc;
}

askdb_status llm_local_attach(llm *loaded, llm **out, char *err,
                              size_t errlen)
{
    const struct local *w = (const struct local *)loaded;
    struct local *l;

    *out = NULL;
    l = calloc(1, sizeof *l);
    if (!l) {
        snprintf(err, errlen, "out of memory");
        return ASKDB_ERR_NOMEM;
    }
    l->base.vt = &local_vtab;
    l->owner = 0;
    l->model = w->model;
    l->vocab = w->vocab;
    l->n_vocab = w->n_vocab;
    l->dec = w->dec;
    l->tmpl = w->tmpl;
    l->path = w->path;
    l->special = w->special;
    l->nspecial = w->nspecial;
    l->kv_on = w->kv_on;
    l->kv_cap = w->kv_cap;
    l->model_id = w->model_id;
    *out = &l->base;
    return ASKDB_OK;
}

#else /* !ASKDB_HAVE_LLAMA */

/* 1 when cfg names no provider, URL, key, model or callback. */
static int nothing_configured(const askdb_config *cfg)
{
    return !(cfg->provider && *cfg->provider) &&
           !(cfg->model && *cfg->model) &&
           !(cfg->llm_url && *cfg->llm_url) &&
           !(cfg->api_key && *cfg->api_key) && !cfg->llm_fn;
}

/* Without llama.cpp: ASKDB_ERR_UNSUPPORTED, saying how to build it in and
** how to use a remote model instead. */
askdb_status llm_local_new(const askdb_config *cfg, llm **out, char *err,
                           size_t errlen)
{
    *out = NULL;
    snprintf(err, errlen, "%s%s",
             "the local model is not built into this askdb (run 'make "
             "llama model' and rebuild to build it in, or use a remote "
             "model: --llm-url URL --model NAME)",
             nothing_configured(cfg)
                 ? "; no model is configured: point --llm-url or "
                   "ASKDB_LLM_URL at an OpenAI-compatible server, or pass "
                   "--provider openai or --provider anthropic with --model "
                   "NAME (the key in OPENAI_API_KEY or ANTHROPIC_API_KEY)"
                 : "");
    return ASKDB_ERR_UNSUPPORTED;
}

askdb_status llm_local_load(const askdb_config *cfg, llm **out, char *err,
                            size_t errlen)
{
    return llm_local_new(cfg, out, err, errlen);
}

askdb_status llm_local_attach(llm *loaded, llm **out, char *err,
                              size_t errlen)
{
    (void)loaded;
    *out = NULL;
    snprintf(err, errlen, "the local model is not built into this askdb");
    return ASKDB_ERR_UNSUPPORTED;
}
#endif /* ASKDB_HAVE_LLAMA */
