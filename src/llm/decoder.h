/* decoder.h - one llama.cpp context that decodes the calls of many threads
** together, as sequences of one batch (the local provider's engine). */
#ifndef ASKDB_LLM_DECODER_H
#define ASKDB_LLM_DECODER_H

#ifdef ASKDB_HAVE_LLAMA

#include <stdatomic.h>
#include <stddef.h>

#include <llama.h>

#include "askdb.h"

/*
** A decoder owns one llama_context over a model it borrows, a thread that
** runs every llama_decode() of that context, and lanes: a lane is
** LLM_DEC_SEQS sequences of the context's unified KV cache, and one call
** (one llm_complete_n of the local provider) runs in one lane at a time.
** Sequence 0 of a lane is its conversation: its tokens stay in the KV
** cache after the call, for the next call's prefix reuse; sequences 1..
** hold a call's other candidates and are emptied when it ends.
**
** A call submits tokens (a prompt chunk, or one sampled token per live
** sequence) and waits; the thread gathers what every running call has
** submitted into one llama_batch, decodes it once, and hands each call
** its rows of logits. Sampling, stop conditions and streaming stay on the
** calling thread. See decoder.c for the scheduling rules.
**
** Thread-safety: every function may be called from any thread; one call
** handle is used by one thread at a time.
*/

#define LLM_DEC_SEQS 4       /* sequences per lane (a call's candidates) */
#define LLM_DEC_LANES 64     /* lanes at most (llama.cpp: 256 sequences) */

struct llm_dec;
struct llm_dec_call;

/* Process-wide llama.cpp setup (backend, log callback), done once; every
** entry point of the local provider calls it before using llama.cpp. */
void llm_dec_init_backend(void);

/* The first llama.cpp error line logged on this thread since
** llm_dec_clear_error() ("" when none): why a load or context failed. */
const char *llm_dec_error(void);
void llm_dec_clear_error(void);

/*
** A decoder over model (borrowed: it must outlive the decoder) with
** `lanes` lanes (1..LLM_DEC_LANES), a context of n_ctx tokens that may be
** recreated up to n_ctx_max when a call needs more, and `threads` CPU
** threads. name names the model in messages. huge: a context made again
** later gets its buffers on 2 MiB pages (llm/hugepage.h; the first one's
** are the caller's to advise, with the model's). On failure returns
** ASKDB_ERR_LLM or ASKDB_ERR_NOMEM with the reason in err.
*/
askdb_status llm_dec_new(struct llama_model *model, const char *name,
                         int lanes, int threads, int n_ctx, int n_ctx_max,
                         int huge, struct llm_dec **out, char *err,
                         size_t errlen);

/* Stop the thread and free everything; no call may be running. */
void llm_dec_free(struct llm_dec *d);

/*
** Begin a call whose prompt is toks[0..n) and whose replies take up to
** `reply` tokens in all: wait for a free lane and for room in the KV
** cache (evicting the conversations of idle lanes, least recently used
** first), then choose the lane whose conversation shares the longest
** prefix with toks and keep that prefix (at most n - 1 tokens: the last
** prompt token is always evaluated, for its logits). When another lane,
** busy or idle, shares a longer prefix, that prefix is copied from it
** (its cells get one more sequence id; nothing is evaluated). The call
** stops waiting when *cancel becomes non-zero (cancel may be NULL).
** Errors (with err set, NUL-terminated): ASKDB_ERR_CANCELLED,
** ASKDB_ERR_LLM (the prompt does not fit into the largest context, or a
** context could not be made), ASKDB_ERR_NOMEM. err must stay valid until
** llm_dec_end(): later failures of the call are written there too.
*/
askdb_status llm_dec_begin(struct llm_dec *d, const llama_token *toks, int n,
                           long reply, const atomic_int *cancel,
                           struct llm_dec_call **out, char *err,
                           size_t errlen);

/*
** The call writes SQL (a reply of text): its logits may be only those of
** the text tokens (printable ASCII, single bytes, control tokens) and of
** its prompt toks[0..n), every other one -INFINITY; the decoder then
** skips most of the output layer (see decoder.c). Call it before the
** call evaluates anything. Out of memory it does nothing (all logits).
*/
void llm_dec_text_only(struct llm_dec_call *c, const llama_token *toks,
                       int n);

/* Tokens of the prompt that the lane's conversation holds (evaluated). */
int llm_dec_cached(const struct llm_dec_call *c);

/* Make the conversation hold at most its first n tokens (the rest of its
** cells dropped), so that what follows is evaluated from token n on. */
void llm_dec_trim(struct llm_dec_call *c, int n);

/* The scope (llm_request.scope) of the call that last ran in the lane
** whose conversation this call continues, and the call's own, set before
** it evaluates anything. */
unsigned long llm_dec_scope(const struct llm_dec_call *c);
void llm_dec_set_scope(struct llm_dec_call *c, unsigned long scope);

/* Tokens the call may add after its prompt, all sequences together: its
** reply budget, cut to what the context holds. */
long llm_dec_room(const struct llm_dec_call *c);

/*
** Evaluate toks[0..n) in the conversation after its cached tokens, in
** chunks through the shared batch; with logits for the last one when
** `last` is non-zero (row 0 of llm_dec_logits). On failure the
** conversation keeps what was evaluated before the failing chunk.
** ASKDB_ERR_CANCELLED or ASKDB_ERR_LLM.
*/
askdb_status llm_dec_eval(struct llm_dec_call *c, const llama_token *toks,
                          int n, int last);

/*
** One step: tok[i] into lane sequence seq[i] (0..LLM_DEC_SEQS-1) at
** position pos[i], i < n (n <= LLM_DEC_SEQS), each with logits (row i).
** Tokens of sequence 0 join the conversation. ASKDB_ERR_CANCELLED or
** ASKDB_ERR_LLM; then the step left nothing in the KV cache.
*/
askdb_status llm_dec_step(struct llm_dec_call *c, const llama_token *tok,
                          const int *seq, const int *pos, int n);

/* Logits row `row` of the last eval/step (n_vocab floats, borrowed until
** the next eval, step or end). */
const float *llm_dec_logits(const struct llm_dec_call *c, int row);

/* Steps of this call so far that also decoded another call's tokens. */
long llm_dec_shared_steps(const struct llm_dec_call *c);

/* Steps of this call so far whose logits were the text tokens' only. */
long llm_dec_text_steps(const struct llm_dec_call *c);

/* Lane sequence s (1..) holds the conversation's first n tokens too
** (their cells are shared, nothing is copied). */
void llm_dec_share(struct llm_dec_call *c, int s, int n);

/* Empty lane sequence s (1..). */
void llm_dec_drop(struct llm_dec_call *c, int s);

/*
** Replace the conversation with the state in path, which must hold
** exactly toks[0..n) (llama_state_seq_load_file). 1 when done; 0 when the
** file does not load or holds other tokens (the conversation is then
** empty).
*/
int llm_dec_load(struct llm_dec_call *c, const char *path,
                 const llama_token *toks, int n);

/* Write the conversation, which holds exactly toks[0..n), to path. 1 when
** written. */
int llm_dec_save(struct llm_dec_call *c, const char *path,
                 const llama_token *toks, int n);

/* End the call (NULL: no-op): sequences 1.. emptied, the lane free. */
void llm_dec_end(struct llm_dec_call *c);

#endif /* ASKDB_HAVE_LLAMA */
#endif
