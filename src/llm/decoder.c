/* decoder.c - one llama.cpp context that decodes the calls of many threads
** together, as sequences of one batch (see decoder.h). */
#define _GNU_SOURCE   /* pthread_sigmask(), clock_gettime() */
#include "llm/decoder.h"

/*
** Design invariants:
**
** - Locks: ctx_mu guards the context (every llama_* call on it: decode,
**   logits, memory and state functions); mu guards the list of calls,
**   their states and submissions, and the lanes' busy/reservation/LRU
**   fields. Order: ctx_mu before mu. A lane's conversation list (cache,
**   ncache) is written only with ctx_mu held, by the lane's call or by
**   the thread after a step of it, and read by others only with ctx_mu
**   held; the lane's own call reads it without a lock (nobody else writes
**   it while the call is between steps).
** - A call registers in llm_dec_begin() and leaves in llm_dec_end(). It
**   is WORK (sampling, streaming, memory operations), READY (submitted,
**   waiting for a step), RUN (in the batch being decoded) or DONE (the
**   step is over, its thread not yet back).
** - Scheduling: the thread wakes when a call submits. It then waits until
**   no registered call is WORK or DONE - between steps a call only samples
**   and streams, a millisecond or two - but at most DEC_GATHER_MS, so
**   that one slow call (a grammar filtering the whole vocabulary) does
**   not hold the others back. Then it builds one batch: first every generation
**   step (at most LLM_DEC_SEQS tokens a call, taken whole), then prompt
**   chunks in the order the calls began, each at most DEC_CHUNK tokens
**   while other calls are registered - so a newcomer's prompt stalls the
**   others' generation one short step at a time - and the batch at most
**   DEC_BATCH tokens. A call not taken stays READY for the next step; a
**   READY call that was cancelled is answered at once, without decoding.
** - Logits: after llama_decode() the thread copies each call's rows into
**   the call's own buffer, so that calls sample without touching the
**   context, while the next batch is already being decoded.
** - Cancellation: the context's abort callback stops a decode only when
**   every call in its batch is cancelled; otherwise a cancelled call
**   leaves at its next step and the others never notice.
** - Failure: when a decode fails, each call in the batch has the tokens
**   it put into that batch removed from its sequences again (llama.cpp
**   removes them too on an abort), so a lane's conversation is exactly
**   what its list says. A lane's conversation may hold cells past its
**   list after a failed copy of logits: llm_dec_begin() removes
**   everything past the prefix it keeps.
** - Room: the KV cache is one unified buffer of n_ctx cells. A busy lane
**   counts its call's reservation (prompt + reply budget, at most n_ctx),
**   an idle lane its conversation's length. Cells shared by several lanes
**   are counted once per lane, so the sum is an upper bound and a decode
**   never runs out of cells. A call whose reservation does not fit waits;
**   idle conversations are dropped, least recently used first, to make
**   room. A call that needs a larger context waits until no call runs,
**   then the context is made again, larger (every conversation is lost).
** - Same logits as alone: a token's row does not depend on what else is
**   in its batch (one thread; the tests check it), but attention sums a
**   sequence's cells in cache order, and llama.cpp gives new tokens the
**   lowest free cells. While no cells are freed a sequence's cells stay
**   in position order; once another call ends (its candidates removed)
**   or begins (its lane's old conversation cut), later tokens may land in
**   the holes, and the rounding - rarely a near tie - can change.
** - Pad: with AVX-512 a batch of 4k + 3 rows gets one more, a row that
**   asks for no logits in a sequence of its own, removed after the step,
**   because 4 rows multiply faster together than 3 one at a time
**   (pad_batch()).
** - Text logits: a call that writes SQL (llm_dec_text_only()) needs the
**   logits of the tokens SQL is written with: the printable-ASCII ones
**   (62% of Qwen's 151,936), the control ones, the single bytes, and its
**   prompt's (a value copied from the question or the schema). When every
**   call of a batch is such a call, llama.cpp's graph stops after the
**   final norm (the eval callback on_node() keeps that tensor's rows and
**   ends the computation there) and own_rows() multiplies those tokens'
**   rows of the output layer with ggml's own vec_dot, on the same threads;
**   every other logit is -INFINITY. The output layer is 151,936 rows of
**   1,536 (Q6_K): a fifth of a one-row step. The first decode of every
**   context with k output rows (for each k) runs the whole graph and
**   compares llama.cpp's logits of its rows with the decoder's for the
**   whole vocabulary, bit for bit (the same kernel, the same quantized
**   rows); any difference (ggml multiplies several rows of some types
**   with llamafile's kernel) or a weight layout vec_dot cannot read (a
**   repacked type), and the context keeps llama.cpp's logits.
**   ASKDB_LOGITS=all turns it off.
** - The thread is started with every signal blocked (and so are the
**   OpenMP threads llama.cpp starts from it): signals stay with the
**   threads that wait for them (askdb serve's sigwait).
*/

#ifdef ASKDB_HAVE_LLAMA

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <ggml-backend.h>
#include <ggml-cpu.h>
#include <ggml.h>

#include "core/clock.h"
#include "llm/hugepage.h"

#define DEC_BATCH 512          /* tokens per llama_decode() */
#define DEC_CHUNK 64           /* a prompt chunk while others run */
#define DEC_GATHER_MS 10       /* longest wait for late calls */
#define DEC_WAIT_MS 50         /* how often a waiting begin looks at its
                                  cancel */
#define DEC_CTX_STEP 1024      /* a grown context is a multiple of this */

/* ------------------------------------------------------------------ */
/* Process-wide llama.cpp setup                                        */
/* ------------------------------------------------------------------ */

static pthread_once_t backend_once = PTHREAD_ONCE_INIT;
static int log_on;                        /* ASKDB_LLAMA_LOG=1, set once */
static _Thread_local char first_error[256]; /* see on_log() */

/* llama.cpp's log callback: keep this thread's first error line since
** first_error was last emptied (the first is the cause, later ones say
** what failed because of it), print everything only when
** ASKDB_LLAMA_LOG=1. */
static void on_log(enum ggml_log_level level, const char *text, void *ud)
{
    size_t n;

    (void)ud;
    if (level == GGML_LOG_LEVEL_ERROR && text && !first_error[0]) {
        snprintf(first_error, sizeof first_error, "%s", text);
        n = strlen(first_error);
        while (n > 0 &&
               (first_error[n - 1] == '\n' || first_error[n - 1] == ' '))
            first_error[--n] = '\0';
    }
    if (log_on && text)
        fputs(text, stderr);
}

/* llama_log_set() and llama_backend_init() act on the whole process, so
** they run once and are never undone; llama_backend_free() only frees
** quantization tables, which stay reachable until exit. */
static void backend_init_once(void)
{
    const char *v = getenv("ASKDB_LLAMA_LOG");

    log_on = v && strcmp(v, "1") == 0;
    llama_log_set(on_log, NULL);
    llama_backend_init();
}

void llm_dec_init_backend(void)
{
    pthread_once(&backend_once, backend_init_once);
}

const char *llm_dec_error(void)
{
    return first_error;
}

void llm_dec_clear_error(void)
{
    first_error[0] = '\0';
}

/* ------------------------------------------------------------------ */
/* The decoder                                                         */
/* ------------------------------------------------------------------ */

enum { C_WORK, C_READY, C_RUN, C_DONE };

struct lane {
    int base;                  /* its first sequence id */
    llama_token *cache;        /* the conversation's tokens (n_ctx slots) */
    int ncache;
    int busy;                  /* a call runs in it */
    long res;                  /* that call's reservation, in cells */
    unsigned long used;        /* when a call last began in it */
    unsigned long scope;       /* llm_dec_set_scope() of its last call */
};

struct llm_dec_call {
    struct llm_dec *d;
    struct lane *lane;
    const atomic_int *cancel;
    char *err;
    size_t errlen;
    int state;                 /* C_* (mu) */
    /* The submission: items [0, n), a generation step or a prompt
    ** chunk; the thread takes [0, taken) into the batch at [first..). */
    int step;
    int n, taken, first;
    llama_token tok[DEC_BATCH];
    llama_pos pos[DEC_BATCH];
    signed char seq[DEC_BATCH];   /* lane sequence, 0..LLM_DEC_SEQS-1 */
    signed char want[DEC_BATCH];  /* logits wanted */
    int rc;                    /* the step's llama_decode() result */
    int others;                /* the step decoded other calls' tokens */
    long shared;               /* steps with others, so far */
    long own;                  /* steps with text logits, so far */
    float *rows;               /* LLM_DEC_SEQS rows of n_vocab logits */
    int text_only;             /* llm_dec_text_only(): its logits may be
                                  the text ones */
    llama_token *extra;        /* its prompt's tokens not in d->text */
    int nextra;
    struct llm_dec_call *next; /* d->calls */
};

struct llm_dec {
    struct llama_model *model;
    const char *name;
    int n_vocab;
    struct llama_context *ctx; /* NULL after a failed resize */
    struct llama_batch batch;  /* DEC_BATCH tokens, one sequence id each */
    int n_ctx, n_ctx_first, n_ctx_max, threads;
    int huge;                  /* llm_dec_new()'s huge */
    int nlanes;
    int pad;                   /* pad 4k+3 rows to 4k+4 (pad_batch()) */
    int padded;                /* the batch being decoded has the pad */
    /* Text logits (see the design notes): out is -1 once they are off
    ** for the context (ASKDB_LOGITS=all, no text list, a comparison that
    ** differed), else 0; seen[k] is 1 once a batch of k output rows has
    ** been compared. */
    int out, out_off;
    signed char *seen;         /* norm_cap + 1 flags */
    int own;                   /* this batch's logits are own_rows()' */
    int check;                 /* this batch's are compared with them */
    const struct ggml_tensor *out_w;   /* the output layer's weights */
    int n_embd;
    float *norm;               /* the batch's final-norm rows, in order */
    size_t nnorm, norm_cap;    /* rows */
    int norm_bad;              /* a final norm on_node() could not keep */
    void *q8;                  /* norm's rows quantized for vec_dot */
    llama_token *text;         /* the text tokens, ascending */
    int ntext;
    unsigned char *in_text;    /* n_vocab flags */
    float **dst;               /* own_rows(): the rows, norm_cap */
    int *qix;                  /* and their quantized norm rows */
    struct lane *lanes;
    pthread_mutex_t ctx_mu;
    pthread_mutex_t mu;
    pthread_cond_t work;       /* a call submitted or ended; stop */
    pthread_cond_t done;       /* a step ended; a lane came free */
    struct llm_dec_call *calls;    /* registered, oldest first (mu) */
    int ncalls;
    struct llm_dec_call *run[LLM_DEC_LANES];   /* the batch's calls */
    int nrun;
    unsigned long clock;       /* counts begins, for the lanes' LRU */
    int stop;
    int started;               /* the thread runs */
    pthread_t th;
};

static int is_cancelled(const struct llm_dec_call *c)
{
    return c->cancel && atomic_load(c->cancel);
}

/* llama.cpp's abort callback, asked between the graph's nodes: stop only
** when every call in the batch is cancelled. */
static bool on_abort(void *ud)
{
    const struct llm_dec *d = ud;
    int i;

    for (i = 0; i < d->nrun; i++)
        if (!is_cancelled(d->run[i]))
            return false;
    return d->nrun > 0;
}

/* ------------------------------------------------------------------ */
/* Text logits (see the design notes)                                  */
/* ------------------------------------------------------------------ */

/* llama.cpp's eval callback, asked about every node of the graph before
** it is computed (ask) and told of the nodes it asked for after: keep
** the rows of the final norm ("result_norm", one per output of the
** ubatch, in batch order) and, when the batch's logits are ours, stop
** the graph there; note the output layer's weights ("result_output"'s
** first source) while they are unknown. */
static bool on_node(struct ggml_tensor *t, bool ask, void *ud)
{
    struct llm_dec *d = ud;
    size_t rows;

    if (!d->own && !d->check)
        return !ask;
    if (ask && d->check && strcmp(t->name, "result_output") == 0)
        d->out_w = t->src[0];
    if (strcmp(t->name, "result_norm") != 0)
        return !ask;
    if (ask)
        return true;
    rows = (size_t)t->ne[1];
    if (t->type != GGML_TYPE_F32 || !ggml_is_contiguous(t) ||
        t->ne[0] != d->n_embd || d->nnorm + rows > d->norm_cap) {
        d->norm_bad = 1;
    } else {
        memcpy(d->norm + d->nnorm * (size_t)d->n_embd, t->data,
               rows * (size_t)d->n_embd * sizeof *d->norm);
        d->nnorm += rows;
    }
    return !d->own;
}

/* Whether vec_dot can read the output layer as llama.cpp found it: plain
** rows of a type ggml's CPU code multiplies, in memory. */
static int out_usable(const struct llm_dec *d)
{
    const struct ggml_tensor *w = d->out_w;
    const struct ggml_type_traits_cpu *tt;

    if (!w || !w->data || !w->buffer ||
        !ggml_backend_buffer_is_host(w->buffer) || w->ne[0] != d->n_embd ||
        w->ne[1] != d->n_vocab || w->ne[2] != 1 || w->ne[3] != 1 ||
        w->nb[1] != ggml_row_size(w->type, w->ne[0]))
        return 0;
    tt = ggml_get_type_traits_cpu(w->type);
    return tt && tt->vec_dot && tt->nrows == 1 &&
           ggml_get_type_traits_cpu(tt->vec_dot_type)->from_float;
}

/* Rows [0, n) of d->norm quantized into d->q8, as mul_mat quantizes its
** second operand. Returns the size of one quantized row. */
static size_t quantize_norm(struct llm_dec *d, size_t n)
{
    enum ggml_type vt = ggml_get_type_traits_cpu(d->out_w->type)->vec_dot_type;
    ggml_from_float_t q = ggml_get_type_traits_cpu(vt)->from_float;
    size_t qrow = ggml_row_size(vt, d->n_embd), i;

    for (i = 0; i < n; i++)
        q((const float *)d->norm + i * (size_t)d->n_embd,
          (char *)d->q8 + i * qrow, d->n_embd);
    return qrow;
}

/* dst[r][id] for each token id of ids[0..nids) (0..nids-1 when ids is
** NULL) and each row r < nrows: the output layer's row id times
** quantized norm row q[r], with ggml's vec_dot, on d->threads threads. */
static void dot_rows(struct llm_dec *d, const llama_token *ids, int nids,
                     float *const *dst, const int *q, int nrows, size_t qrow)
{
    ggml_vec_dot_t dot = ggml_get_type_traits_cpu(d->out_w->type)->vec_dot;
    const char *w = d->out_w->data;
    size_t wrow = d->out_w->nb[1];
    int j;

#pragma omp parallel for num_threads(d->threads) schedule(static)
    for (j = 0; j < nids; j++) {
        int id = ids ? ids[j] : j, r;

        for (r = 0; r < nrows; r++)
            dot(d->n_embd, dst[r] + id, 0, w + (size_t)id * wrow, 0,
                (const char *)d->q8 + (size_t)q[r] * qrow, 0, 1);
    }
}

/* After the context's first decode with k output rows, the whole graph
** run: whether the decoder's arithmetic gives every one of them bit for
** bit (ggml may multiply k rows with another kernel than one: llamafile's
** for Q8_0 with AVX2). seen[k] then, else text logits off for good. */
static void compare_out(struct llm_dec *d, int k)
{
    size_t row = (size_t)d->n_vocab;
    float *mine = malloc((size_t)k * row * sizeof *mine);
    const float *ref;
    size_t qrow;
    int i, b, ok = 0;

    if (!d->q8 && out_usable(d))
        d->q8 = malloc(d->norm_cap *
                       ggml_row_size(ggml_get_type_traits_cpu(d->out_w->type)
                                         ->vec_dot_type,
                                     d->n_embd));
    if (mine && d->q8 && !d->norm_bad && d->nnorm == (size_t)k &&
        out_usable(d)) {
        qrow = quantize_norm(d, d->nnorm);
        for (i = 0; i < k; i++) {
            d->dst[i] = mine + (size_t)i * row;
            d->qix[i] = i;
        }
        dot_rows(d, NULL, d->n_vocab, d->dst, d->qix, k, qrow);
        for (i = 0, b = 0, ok = 1; ok && i < k; i++, b++) {
            while (b < d->batch.n_tokens && !d->batch.logits[b])
                b++;
            ref = b < d->batch.n_tokens ? llama_get_logits_ith(d->ctx, b)
                                        : NULL;
            ok = ref && memcmp(d->dst[i], ref, row * sizeof *mine) == 0;
        }
    }
    if (ok)
        d->seen[k] = 1;
    else
        d->out = -1;
    free(mine);
}

/* The batch's logits (ctx_mu held, after a decode that stopped at the
** final norm): each RUN call's rows -INFINITY but for the text tokens
** and its own extra ones. Returns -1 when the norm rows are not the
** batch's outputs (no logits then). */
static int own_rows(struct llm_dec *d)
{
    struct llm_dec_call *c;
    int first[LLM_DEC_LANES], nrows[LLM_DEC_LANES];
    size_t qrow;
    int i, j, r, k = 0;

    for (j = 0; j < d->nrun; j++) {
        c = d->run[j];
        first[j] = k;
        for (i = 0, r = 0; i < c->taken; i++) {
            if (!c->want[i])
                continue;
            if (r >= LLM_DEC_SEQS || (size_t)k >= d->nnorm)
                return -1;
            d->dst[k] = c->rows + (size_t)r++ * (size_t)d->n_vocab;
            d->qix[k] = k;
            k++;
        }
        nrows[j] = r;
    }
    if (d->norm_bad || (size_t)k != d->nnorm)
        return -1;
    qrow = quantize_norm(d, d->nnorm);
    for (i = 0; i < k; i++)
        for (j = 0; j < d->n_vocab; j++)
            d->dst[i][j] = -INFINITY;
    dot_rows(d, d->text, d->ntext, d->dst, d->qix, k, qrow);
    for (j = 0; j < d->nrun; j++)
        if (d->run[j]->nextra > 0 && nrows[j] > 0)
            dot_rows(d, d->run[j]->extra, d->run[j]->nextra,
                     d->dst + first[j], d->qix + first[j], nrows[j], qrow);
    return 0;
}

/* The text tokens of the model's vocabulary into d->text and d->in_text:
** pieces of printable ASCII, tab, newline and carriage return; single
** bytes; control tokens. Returns -1 when out of memory. */
static int text_tokens(struct llm_dec *d)
{
    const struct llama_vocab *v = llama_model_get_vocab(d->model);
    char piece[512];
    int id, n, i, ok;

    d->text = malloc((size_t)d->n_vocab * sizeof *d->text);
    d->in_text = calloc((size_t)d->n_vocab, 1);
    if (!d->text || !d->in_text)
        return -1;
    for (id = 0; id < d->n_vocab; id++) {
        n = llama_token_to_piece(v, id, piece, sizeof piece, 0, true);
        ok = n < 0 || n == 1 || llama_vocab_is_control(v, id) ||
             llama_vocab_is_eog(v, id);
        if (!ok)
            for (ok = n > 0, i = 0; ok && i < n; i++)
                ok = (piece[i] >= ' ' && piece[i] <= '~') ||
                     piece[i] == '\t' || piece[i] == '\n' ||
                     piece[i] == '\r';
        if (ok) {
            d->in_text[id] = 1;
            d->text[d->ntext++] = id;
        }
    }
    return 0;
}

/*
** (Re)create the context with n_ctx cells; every conversation is lost.
** ctx_mu and mu held (or the decoder not shared yet). On failure there
** is no context and err says why.
*/
static askdb_status make_context(struct llm_dec *d, int n_ctx, char *err,
                                 size_t errlen)
{
    struct llama_context_params cp = llama_context_default_params();
    struct hp_snap before = {NULL, 0, 1};
    llama_token *cache;
    int i, got;

    /* The first context's buffers are advised with the model's (local.c);
    ** a larger one made later gets its own advice here. */
    if (d->ctx) {
        llama_free(d->ctx);
        hp_snapshot(&before, d->huge);
    }
    d->ctx = NULL;
    for (i = 0; i < d->nlanes; i++)
        d->lanes[i].ncache = 0;
    cp.n_ctx = (uint32_t)n_ctx;
    cp.n_batch = DEC_BATCH;
    cp.n_ubatch = DEC_BATCH;
    /* Unified: all sequences share the n_ctx cells (and a prompt's);
    ** split per sequence, each would get only n_ctx / n_seq_max. */
    cp.n_seq_max = (uint32_t)(d->nlanes * LLM_DEC_SEQS + d->pad);
    cp.kv_unified = true;
    cp.n_threads = d->threads;
    cp.n_threads_batch = d->threads;
    cp.no_perf = true;
    cp.cb_eval = on_node;
    cp.cb_eval_user_data = d;
    d->out = d->out_off ? -1 : 0;   /* compared again: a new graph */
    d->out_w = NULL;
    if (d->seen)
        memset(d->seen, 0, d->norm_cap + 1);
    llm_dec_clear_error();
    d->ctx = llama_init_from_model(d->model, cp);
    if (!d->ctx) {
        free(before.r);
        snprintf(err, errlen, "cannot create a %d-token context for the "
                              "local model '%s'%s%s", n_ctx, d->name,
                 first_error[0] ? ": " : " (out of memory?)", first_error);
        return ASKDB_ERR_LLM;
    }
    (void)hp_advise_new(&before);
    llama_set_abort_callback(d->ctx, on_abort, d);
    /* llama.cpp may round n_ctx up: the lists follow what it made. */
    got = (int)llama_n_ctx(d->ctx);
    for (i = 0; i < d->nlanes; i++) {
        cache = realloc(d->lanes[i].cache, (size_t)got * sizeof *cache);
        if (!cache) {
            llama_free(d->ctx);
            d->ctx = NULL;
            snprintf(err, errlen, "out of memory");
            return ASKDB_ERR_NOMEM;
        }
        d->lanes[i].cache = cache;
    }
    d->n_ctx = got;
    return ASKDB_OK;
}

/* ------------------------------------------------------------------ */
/* The thread                                                          */
/* ------------------------------------------------------------------ */

/* Some registered call is in state st (mu held). */
static int any_in(const struct llm_dec *d, int st)
{
    const struct llm_dec_call *c;

    for (c = d->calls; c; c = c->next)
        if (c->state == st)
            return 1;
    return 0;
}

/*
** Pad a batch of nb = 4k + 3 rows with one more (mu held; returns the new
** count). ggml's CPU kernels for the repacked weights multiply the rows
** of a batch 4 at a time and the rest one at a time, and with AVX-512
** the 4-row kernel costs less than three 1-row ones: a step of 4 rows
** takes 117 ms, one of 3 rows 133 ms (bench/batch_rows.c, models/
** README.md; with AVX2 alone they cost the same, so d->pad is 0 there).
** The pad row is a copy of row 0's token in a sequence of its own (id
** nlanes * LLM_DEC_SEQS) at position 0: it sees only itself, asks for no
** logits (so the output layer skips it) and leaves no cell behind
** (unpad()). Only when the lanes' counts leave a cell free for it.
*/
static int pad_batch(struct llm_dec *d, int nb)
{
    long used = 0;
    int i;

    if (!d->pad || nb % 4 != 3 || nb >= DEC_BATCH)
        return nb;
    for (i = 0; i < d->nlanes; i++)
        used += d->lanes[i].busy ? d->lanes[i].res : d->lanes[i].ncache;
    if (used >= d->n_ctx)
        return nb;
    d->batch.token[nb] = d->batch.token[0];
    d->batch.pos[nb] = 0;
    d->batch.n_seq_id[nb] = 1;
    d->batch.seq_id[nb][0] = d->nlanes * LLM_DEC_SEQS;
    d->batch.logits[nb] = 0;
    d->padded = 1;
    return nb + 1;
}

/* After a decode (ctx_mu held): the pad row's cell out again. */
static void unpad(struct llm_dec *d)
{
    if (d->padded)
        llama_memory_seq_rm(llama_get_memory(d->ctx),
                            d->nlanes * LLM_DEC_SEQS, -1, -1);
    d->padded = 0;
}

/*
** Build the next batch from the READY calls (mu held; see the design
** notes for the order and the caps). Cancelled READY calls are answered
** (DONE, rc 2) without decoding. Returns the batch's token count; its
** calls are RUN and listed in d->run.
*/
static int gather(struct llm_dec *d)
{
    struct llm_dec_call *c;
    int nb = 0, pass, k, i, cap;

    d->nrun = 0;
    for (pass = 0; pass < 2; pass++)
        for (c = d->calls; c; c = c->next) {
            if (c->state != C_READY || c->step != (pass == 0))
                continue;
            if (is_cancelled(c)) {
                c->state = C_DONE;
                c->rc = 2;
                c->taken = 0;
                continue;
            }
            cap = DEC_BATCH - nb;
            if (pass == 1 && d->ncalls > 1 && cap > DEC_CHUNK)
                cap = DEC_CHUNK;
            k = c->n < cap ? c->n : cap;
            if (k <= 0 || (c->step && k < c->n))
                continue;   /* the next step takes it */
            for (i = 0; i < k; i++) {
                d->batch.token[nb + i] = c->tok[i];
                d->batch.pos[nb + i] = c->pos[i];
                d->batch.n_seq_id[nb + i] = 1;
                d->batch.seq_id[nb + i][0] = c->lane->base + c->seq[i];
                d->batch.logits[nb + i] = c->want[i];
            }
            c->first = nb;
            c->taken = k;
            c->rc = 0;
            c->state = C_RUN;
            d->run[d->nrun++] = c;
            nb += k;
        }
    for (i = 0; i < d->nrun; i++)
        d->run[i]->others = d->nrun > 1;
    d->batch.n_tokens = pad_batch(d, nb);
    return nb;
}

/* Every call of the batch may have text logits (mu held). */
static int all_text(const struct llm_dec *d)
{
    int j;

    for (j = 0; j < d->nrun; j++)
        if (!d->run[j]->text_only)
            return 0;
    return d->nrun > 0;
}

/* Before a decode (mu held): whose logits the batch gets. d->own: the
** decoder's (the graph stops at the final norm); d->check (its output
** rows): llama.cpp's, compared with the decoder's, the first time a
** batch has that many; neither: llama.cpp's. */
static void plan_logits(struct llm_dec *d)
{
    int i, k = 0;

    for (i = 0; i < d->batch.n_tokens; i++)
        k += d->batch.logits[i] != 0;
    d->own = 0;
    d->check = 0;
    d->nnorm = 0;
    d->norm_bad = 0;
    if (d->out < 0 || k == 0 || (size_t)k > d->norm_cap)
        return;
    if (d->seen[k])
        d->own = all_text(d);
    else
        d->check = k;
}

/* After a successful decode (ctx_mu held): each RUN call's logits rows
** into its buffer (own_rows() when the graph stopped at the final norm;
** the context's first rows compared first). */
static void copy_rows(struct llm_dec *d)
{
    size_t row = (size_t)d->n_vocab * sizeof(float);
    struct llm_dec_call *c;
    const float *src;
    int i, j, r;

    if (d->own) {
        if (own_rows(d) == 0)
            return;
        d->out = -1;   /* never again: llama.cpp's logits from now on */
        for (j = 0; j < d->nrun; j++)
            d->run[j]->rc = -1;
        return;
    }
    if (d->check)
        compare_out(d, d->check);
    for (j = 0; j < d->nrun; j++) {
        c = d->run[j];
        for (i = 0, r = 0; i < c->taken; i++) {
            if (!c->want[i])
                continue;
            src = llama_get_logits_ith(d->ctx, c->first + i);
            if (!src || r >= LLM_DEC_SEQS) {
                c->rc = -1;
                break;
            }
            memcpy(c->rows + (size_t)r++ * (size_t)d->n_vocab, src, row);
        }
    }
}

/* After a failed decode (ctx_mu held): each RUN call's tokens of the
** batch out of its sequences again. */
static void forget_batch(struct llm_dec *d)
{
    llama_memory_t mem = llama_get_memory(d->ctx);
    llama_pos from[LLM_DEC_SEQS];
    struct llm_dec_call *c;
    int i, j, s;

    for (j = 0; j < d->nrun; j++) {
        c = d->run[j];
        for (s = 0; s < LLM_DEC_SEQS; s++)
            from[s] = -1;
        for (i = 0; i < c->taken; i++)
            if (from[c->seq[i]] < 0 || c->pos[i] < from[c->seq[i]])
                from[c->seq[i]] = c->pos[i];
        for (s = 0; s < LLM_DEC_SEQS; s++)
            if (from[s] >= 0)
                llama_memory_seq_rm(mem, c->lane->base + s, from[s], -1);
    }
}

/* The step is over (ctx_mu and mu held): conversations grow by their
** decoded tokens, every RUN call is DONE with the result r. */
static void finish(struct llm_dec *d, int r)
{
    struct llm_dec_call *c;
    struct lane *ln;
    int i, j;

    for (j = 0; j < d->nrun; j++) {
        c = d->run[j];
        ln = c->lane;
        if (r == 0 && c->rc == 0) {
            for (i = 0; i < c->taken; i++)
                if (c->seq[i] == 0 && c->pos[i] == ln->ncache)
                    ln->cache[ln->ncache++] = c->tok[i];
            c->shared += c->others;
            c->own += d->own;
        } else if (c->rc == 0) {
            c->rc = r;
        }
        c->state = C_DONE;
    }
    d->nrun = 0;
}

static void *dec_main(void *ud)
{
    struct llm_dec *d = ud;
    struct timespec ts;
    int r;

    pthread_mutex_lock(&d->mu);
    for (;;) {
        while (!d->stop && !any_in(d, C_READY))
            pthread_cond_wait(&d->work, &d->mu);
        if (d->stop)
            break;
        clockx_deadline_in(&ts, DEC_GATHER_MS);
        while (!d->stop && (any_in(d, C_WORK) || any_in(d, C_DONE)) &&
               pthread_cond_timedwait(&d->work, &d->mu, &ts) != ETIMEDOUT)
            ;
        if (gather(d) == 0) {
            pthread_cond_broadcast(&d->done);   /* cancelled ones */
            continue;
        }
        plan_logits(d);
        pthread_mutex_unlock(&d->mu);
        pthread_mutex_lock(&d->ctx_mu);
        r = llama_decode(d->ctx, d->batch);
        unpad(d);
        if (r == 0)
            copy_rows(d);
        else
            forget_batch(d);
        pthread_mutex_lock(&d->mu);
        finish(d, r);
        pthread_mutex_unlock(&d->ctx_mu);
        pthread_cond_broadcast(&d->done);
    }
    pthread_mutex_unlock(&d->mu);
    return NULL;
}

/* ------------------------------------------------------------------ */
/* Creating and freeing                                                */
/* ------------------------------------------------------------------ */

askdb_status llm_dec_new(struct llama_model *model, const char *name,
                         int lanes, int threads, int n_ctx, int n_ctx_max,
                         int huge, struct llm_dec **out, char *err,
                         size_t errlen)
{
    struct llm_dec *d;
    sigset_t all, old;
    askdb_status rc = ASKDB_ERR_NOMEM;
    const char *v;
    int i;

    *out = NULL;
    d = calloc(1, sizeof *d);
    if (!d) {
        snprintf(err, errlen, "out of memory");
        return ASKDB_ERR_NOMEM;
    }
    d->model = model;
    d->name = name;
    d->nlanes = lanes < 1 ? 1 : lanes > LLM_DEC_LANES ? LLM_DEC_LANES : lanes;
    /* one more sequence for the pad row, within llama.cpp's 256 */
    d->pad = ggml_cpu_has_avx512() && d->nlanes < LLM_DEC_LANES;
    d->threads = threads;
    d->huge = huge;
    d->n_ctx_first = n_ctx < n_ctx_max ? n_ctx : n_ctx_max;
    d->n_ctx_max = n_ctx_max;
    d->n_vocab = llama_vocab_n_tokens(llama_model_get_vocab(model));
    d->n_embd = llama_model_n_embd(model);
    d->norm_cap = DEC_BATCH;
    v = getenv("ASKDB_LOGITS");
    d->out_off = (v && strcmp(v, "all") == 0) || text_tokens(d) != 0;
    d->norm = malloc(d->norm_cap * (size_t)d->n_embd * sizeof *d->norm);
    d->dst = malloc(d->norm_cap * sizeof *d->dst);
    d->qix = malloc(d->norm_cap * sizeof *d->qix);
    d->seen = calloc(d->norm_cap + 1, 1);
    if (!d->norm || !d->dst || !d->qix || !d->seen)
        d->out_off = 1;
    pthread_mutex_init(&d->ctx_mu, NULL);
    pthread_mutex_init(&d->mu, NULL);
    pthread_cond_init(&d->work, NULL);
    pthread_cond_init(&d->done, NULL);
    d->lanes = calloc((size_t)d->nlanes, sizeof *d->lanes);
    d->batch = llama_batch_init(DEC_BATCH, 0, 1);
    if (!d->lanes || !d->batch.token) {
        snprintf(err, errlen, "out of memory");
        goto fail;
    }
    for (i = 0; i < d->nlanes; i++)
        d->lanes[i].base = i * LLM_DEC_SEQS;
    rc = make_context(d, d->n_ctx_first, err, errlen);
    if (rc)
        goto fail;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    d->started = pthread_create(&d->th, NULL, dec_main, d) == 0;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (!d->started) {
        snprintf(err, errlen, "cannot start the local model's decoding "
                              "thread");
        rc = ASKDB_ERR_NOMEM;
        goto fail;
    }
    *out = d;
    return ASKDB_OK;
fail:
    llm_dec_free(d);
    return rc;
}

void llm_dec_free(struct llm_dec *d)
{
    int i;

    if (!d)
        return;
    if (d->started) {
        pthread_mutex_lock(&d->mu);
        d->stop = 1;
        pthread_cond_broadcast(&d->work);
        pthread_mutex_unlock(&d->mu);
        pthread_join(d->th, NULL);
    }
    if (d->ctx)
        llama_free(d->ctx);
    if (d->batch.token)
        llama_batch_free(d->batch);
    for (i = 0; d->lanes && i < d->nlanes; i++)
        free(d->lanes[i].cache);
    free(d->lanes);
    free(d->text);
    free(d->in_text);
    free(d->norm);
    free(d->q8);
    free(d->dst);
    free(d->qix);
    free(d->seen);
    pthread_mutex_destroy(&d->ctx_mu);
    pthread_mutex_destroy(&d->mu);
    pthread_cond_destroy(&d->work);
    pthread_cond_destroy(&d->done);
    free(d);
}

/* ------------------------------------------------------------------ */
/* Beginning and ending a call                                         */
/* ------------------------------------------------------------------ */

/* Length of the common prefix of a[0..na) and b[0..nb). */
static int common(const llama_token *a, int na, const llama_token *b,
                  int nb)
{
    int k = 0;

    while (k < na && k < nb && a[k] == b[k])
        k++;
    return k;
}

/*
** The free lane for a call whose prompt is toks[0..n), or NULL when every
** lane is busy. Whichever free lane it takes, the call gets the longest
** prefix any lane holds (keep_prefix() copies it from another lane when
** needed), so the choice only decides which conversation is cut: the
** lane that loses the fewest tokens of its own (an empty lane loses
** none), then the one that holds most of the prompt itself, then the
** least recently used.
*/
static struct lane *pick_lane(struct llm_dec *d, const llama_token *toks,
                              int n)
{
    struct lane *best = NULL, *ln;
    int i, k, loss, bk = 0, bloss = 0;

    for (i = 0; i < d->nlanes; i++) {
        ln = &d->lanes[i];
        if (ln->busy)
            continue;
        k = common(ln->cache, ln->ncache, toks, n - 1);
        loss = ln->ncache - k;
        if (!best || loss < bloss || (loss == bloss && k > bk) ||
            (loss == bloss && k == bk && ln->used < best->used)) {
            best = ln;
            bk = k;
            bloss = loss;
        }
    }
    return best;
}

/*
** Make room for res cells in lane L: 1 when the other lanes leave that
** many, after dropping idle conversations (least recently used first) if
** needed; 0 (nothing dropped) when even that would not do.
*/
static int make_room(struct llm_dec *d, struct lane *L, long res)
{
    long used = 0, idle = 0;
    struct lane *ln, *old;
    int i;

    for (i = 0; i < d->nlanes; i++) {
        ln = &d->lanes[i];
        if (ln == L)
            continue;
        used += ln->busy ? ln->res : ln->ncache;
        idle += ln->busy ? 0 : ln->ncache;
    }
    if (used - idle + res > d->n_ctx)
        return 0;
    while (used + res > d->n_ctx) {
        old = NULL;
        for (i = 0; i < d->nlanes; i++) {
            ln = &d->lanes[i];
            if (ln != L && !ln->busy && ln->ncache > 0 &&
                (!old || ln->used < old->used))
                old = ln;
        }
        llama_memory_seq_rm(llama_get_memory(d->ctx), old->base, -1, -1);
        used -= old->ncache;
        old->ncache = 0;
    }
    return 1;
}

/*
** L's conversation keeps its first k cells, or none where the memory
** cannot drop a partial sequence (ctx_mu held).
*/
static void cut_conversation(struct llm_dec *d, struct lane *L, int k)
{
    llama_memory_t mem = llama_get_memory(d->ctx);

    if (!llama_memory_seq_rm(mem, L->base, k, -1)) {
        llama_memory_seq_rm(mem, L->base, -1, -1);
        k = 0;
    }
    L->ncache = k;
}

/*
** L's conversation keeps the longest prefix of toks[0..n - 1) it shares,
** or takes a longer one from another lane's conversation (ctx_mu and mu
** held).
*/
static void keep_prefix(struct llm_dec *d, struct lane *L,
                        const llama_token *toks, int n)
{
    llama_memory_t mem = llama_get_memory(d->ctx);
    struct lane *donor = NULL, *ln;
    int k = common(L->cache, L->ncache, toks, n - 1), kd, i;

    for (i = 0; i < d->nlanes; i++) {
        ln = &d->lanes[i];
        if (ln == L)
            continue;
        kd = common(ln->cache, ln->ncache, toks, n - 1);
        if (kd > k) {
            k = kd;
            donor = ln;
        }
    }
    if (donor) {
        llama_memory_seq_rm(mem, L->base, -1, -1);
        llama_memory_seq_cp(mem, donor->base, L->base, 0, k);
        memcpy(L->cache, toks, (size_t)k * sizeof *toks);
        L->ncache = k;
        L->scope = donor->scope;
    } else {
        cut_conversation(d, L, k);
    }
}

/*
** One attempt to begin (ctx_mu and mu held): 1 when the call must wait
** (no lane, no room, or the context must grow while calls run); else 0
** with *rc the outcome (ASKDB_OK: c is registered in a lane).
*/
static int try_begin(struct llm_dec *d, struct llm_dec_call *c,
                     const llama_token *toks, int n, long reply,
                     askdb_status *rc)
{
    long need = (long)n + reply, want, res;
    struct lane *L;

    *rc = ASKDB_OK;
    if (!d->ctx || (need > d->n_ctx && d->n_ctx < d->n_ctx_max)) {
        /* A new context drops every conversation: only when idle. */
        if (d->ncalls > 0)
            return 1;
        want = (need + DEC_CTX_STEP - 1) / DEC_CTX_STEP * DEC_CTX_STEP;
        if (want < d->n_ctx_first)
            want = d->n_ctx_first;
        if (want > d->n_ctx_max)
            want = d->n_ctx_max;
        *rc = make_context(d, (int)want, c->err, c->errlen);
        if (*rc)
            return 0;
    }
    if (n >= d->n_ctx) {
        snprintf(c->err, c->errlen,
                 "the prompt is %d tokens but the local model '%s' holds at "
                 "most %d (its context): the schema is too large for this "
                 "model; use a model with a longer context (--model) or a "
                 "remote one (--llm-url)", n, d->name, d->n_ctx);
        *rc = ASKDB_ERR_LLM;
        return 0;
    }
    L = pick_lane(d, toks, n);
    if (!L)
        return 1;
    res = need < d->n_ctx ? need : d->n_ctx;
    if (!make_room(d, L, res))
        return 1;
    c->lane = L;
    L->res = res;
    L->busy = 1;
    L->used = ++d->clock;
    keep_prefix(d, L, toks, n);
    c->state = C_WORK;
    c->next = NULL;
    {
        struct llm_dec_call **pp = &d->calls;

        while (*pp)
            pp = &(*pp)->next;
        *pp = c;
    }
    d->ncalls++;
    return 0;
}

askdb_status llm_dec_begin(struct llm_dec *d, const llama_token *toks, int n,
                           long reply, const atomic_int *cancel,
                           struct llm_dec_call **out, char *err,
                           size_t errlen)
{
    struct llm_dec_call *c;
    struct timespec ts;
    askdb_status rc;

    *out = NULL;
    c = calloc(1, sizeof *c);
    if (c)
        c->rows = malloc((size_t)LLM_DEC_SEQS * (size_t)d->n_vocab *
                         sizeof *c->rows);
    if (!c || !c->rows) {
        if (c)
            free(c);
        snprintf(err, errlen, "out of memory");
        return ASKDB_ERR_NOMEM;
    }
    c->d = d;
    c->cancel = cancel;
    c->err = err;
    c->errlen = errlen;
    for (;;) {
        pthread_mutex_lock(&d->ctx_mu);
        pthread_mutex_lock(&d->mu);
        if (!try_begin(d, c, toks, n, reply, &rc))
            break;
        pthread_mutex_unlock(&d->ctx_mu);
        if (is_cancelled(c)) {
            pthread_mutex_unlock(&d->mu);
            snprintf(err, errlen, "cancelled");
            rc = ASKDB_ERR_CANCELLED;
            goto fail;
        }
        clockx_deadline_in(&ts, DEC_WAIT_MS);
        pthread_cond_timedwait(&d->done, &d->mu, &ts);
        pthread_mutex_unlock(&d->mu);
    }
    pthread_mutex_unlock(&d->mu);
    pthread_mutex_unlock(&d->ctx_mu);
    if (rc)
        goto fail;
    *out = c;
    return ASKDB_OK;
fail:
    free(c->rows);
    free(c);
    return rc;
}

void llm_dec_end(struct llm_dec_call *c)
{
    struct llm_dec *d;
    struct llm_dec_call **pp;
    int s;

    if (!c)
        return;
    d = c->d;
    pthread_mutex_lock(&d->ctx_mu);
    for (s = 1; s < LLM_DEC_SEQS; s++)
        llama_memory_seq_rm(llama_get_memory(d->ctx), c->lane->base + s, -1,
                            -1);
    pthread_mutex_lock(&d->mu);
    for (pp = &d->calls; *pp; pp = &(*pp)->next)
        if (*pp == c) {
            *pp = c->next;
            break;
        }
    d->ncalls--;
    c->lane->busy = 0;
    c->lane->res = 0;
    pthread_cond_broadcast(&d->done);   /* a lane is free */
    pthread_cond_signal(&d->work);      /* one less to wait for */
    pthread_mutex_unlock(&d->mu);
    pthread_mutex_unlock(&d->ctx_mu);
    free(c->rows);
    free(c->extra);
    free(c);
}

static int cmp_token(const void *a, const void *b)
{
    llama_token x = *(const llama_token *)a, y = *(const llama_token *)b;

    return (x > y) - (x < y);
}

void llm_dec_text_only(struct llm_dec_call *c, const llama_token *toks,
                       int n)
{
    struct llm_dec *d = c->d;
    int i, k = 0;

    if (!d->in_text || c->text_only)
        return;
    c->extra = malloc((size_t)(n > 0 ? n : 1) * sizeof *c->extra);
    if (!c->extra)
        return;   /* all of the logits, then */
    for (i = 0; i < n; i++)
        if (toks[i] >= 0 && toks[i] < d->n_vocab && !d->in_text[toks[i]])
            c->extra[k++] = toks[i];
    qsort(c->extra, (size_t)k, sizeof *c->extra, cmp_token);
    for (i = 0, c->nextra = 0; i < k; i++)
        if (i == 0 || c->extra[i] != c->extra[i - 1])
            c->extra[c->nextra++] = c->extra[i];
    c->text_only = 1;
}

/* ------------------------------------------------------------------ */
/* Steps                                                               */
/* ------------------------------------------------------------------ */

/* Submit c's items and wait until a step has taken them (or some of a
** prompt chunk's); returns llama_decode()'s result for that step. */
static int submit(struct llm_dec_call *c)
{
    struct llm_dec *d = c->d;
    int r;

    pthread_mutex_lock(&d->mu);
    c->state = C_READY;
    pthread_cond_signal(&d->work);
    while (c->state != C_DONE)
        pthread_cond_wait(&d->done, &d->mu);
    c->state = C_WORK;
    r = c->rc;
    pthread_mutex_unlock(&d->mu);
    return r;
}

/* The status and message of a failed step of n tokens at pos. */
static askdb_status failed(struct llm_dec_call *c, int r, int n, int pos)
{
    if (is_cancelled(c)) {
        snprintf(c->err, c->errlen, "cancelled");
        return ASKDB_ERR_CANCELLED;
    }
    snprintf(c->err, c->errlen, "the local model failed to evaluate %d "
                                "tokens at position %d (llama_decode "
                                "returned %d)", n, pos, r);
    return ASKDB_ERR_LLM;
}

askdb_status llm_dec_eval(struct llm_dec_call *c, const llama_token *toks,
                          int n, int last)
{
    int done = 0, k, i, at, r;

    while (done < n) {
        if (is_cancelled(c)) {
            snprintf(c->err, c->errlen, "cancelled");
            return ASKDB_ERR_CANCELLED;
        }
        k = n - done < DEC_BATCH ? n - done : DEC_BATCH;
        at = c->lane->ncache;
        for (i = 0; i < k; i++) {
            c->tok[i] = toks[done + i];
            c->pos[i] = at + i;
            c->seq[i] = 0;
            c->want[i] = last && done + i == n - 1;
        }
        c->n = k;
        c->step = 0;
        r = submit(c);
        if (r)
            return failed(c, r, c->taken ? c->taken : k, at);
        done += c->taken;
    }
    return ASKDB_OK;
}

askdb_status llm_dec_step(struct llm_dec_call *c, const llama_token *tok,
                          const int *seq, const int *pos, int n)
{
    int i, r;

    if (n < 1 || n > LLM_DEC_SEQS) {
        snprintf(c->err, c->errlen, "%d tokens in one step (1 to %d)", n,
                 LLM_DEC_SEQS);
        return ASKDB_ERR_LLM;
    }
    for (i = 0; i < n; i++) {
        c->tok[i] = tok[i];
        c->pos[i] = pos[i];
        c->seq[i] = (signed char)seq[i];
        c->want[i] = 1;
    }
    c->n = n;
    c->step = 1;
    r = submit(c);
    return r ? failed(c, r, n, pos[0]) : ASKDB_OK;
}

const float *llm_dec_logits(const struct llm_dec_call *c, int row)
{
    return c->rows + (size_t)row * (size_t)c->d->n_vocab;
}

int llm_dec_cached(const struct llm_dec_call *c)
{
    return c->lane->ncache;
}

void llm_dec_trim(struct llm_dec_call *c, int n)
{
    struct llm_dec *d = c->d;
    struct lane *L = c->lane;

    if (n < 0 || n >= L->ncache)
        return;
    pthread_mutex_lock(&d->ctx_mu);
    cut_conversation(d, L, n);
    pthread_mutex_unlock(&d->ctx_mu);
}

unsigned long llm_dec_scope(const struct llm_dec_call *c)
{
    return c->lane->scope;
}

void llm_dec_set_scope(struct llm_dec_call *c, unsigned long scope)
{
    c->lane->scope = scope;
}

long llm_dec_room(const struct llm_dec_call *c)
{
    return c->lane->res;
}

long llm_dec_text_steps(const struct llm_dec_call *c)
{
    return c->own;
}

long llm_dec_shared_steps(const struct llm_dec_call *c)
{
    return c->shared;
}

/* ------------------------------------------------------------------ */
/* Sequences and prompt-cache files                                    */
/* ------------------------------------------------------------------ */

void llm_dec_share(struct llm_dec_call *c, int s, int n)
{
    struct llm_dec *d = c->d;

    pthread_mutex_lock(&d->ctx_mu);
    llama_memory_seq_cp(llama_get_memory(d->ctx), c->lane->base,
                        c->lane->base + s, 0, n);
    pthread_mutex_unlock(&d->ctx_mu);
}

void llm_dec_drop(struct llm_dec_call *c, int s)
{
    struct llm_dec *d = c->d;

    pthread_mutex_lock(&d->ctx_mu);
    llama_memory_seq_rm(llama_get_memory(d->ctx), c->lane->base + s, -1, -1);
    pthread_mutex_unlock(&d->ctx_mu);
}

int llm_dec_load(struct llm_dec_call *c, const char *path,
                 const llama_token *toks, int n)
{
    struct llm_dec *d = c->d;
    struct lane *L = c->lane;
    size_t got = 0;
    int ok;

    pthread_mutex_lock(&d->ctx_mu);
    L->ncache = 0;   /* the load replaces the conversation */
    ok = llama_state_seq_load_file(d->ctx, path, L->base, L->cache,
                                   (size_t)n, &got) != 0 &&
         got == (size_t)n &&
         memcmp(L->cache, toks, (size_t)n * sizeof *toks) == 0;
    if (ok)
        L->ncache = n;
    else
        llama_memory_seq_rm(llama_get_memory(d->ctx), L->base, -1, -1);
    pthread_mutex_unlock(&d->ctx_mu);
    return ok;
}

int llm_dec_save(struct llm_dec_call *c, const char *path,
                 const llama_token *toks, int n)
{
    struct llm_dec *d = c->d;
    size_t w;

    pthread_mutex_lock(&d->ctx_mu);
    w = llama_state_seq_save_file(d->ctx, path, c->lane->base, toks,
                                  (size_t)n);
    pthread_mutex_unlock(&d->ctx_mu);
    return w > 0;
}

#endif /* ASKDB_HAVE_LLAMA */
