/* draft_bits.c - are a draft's logits the ones its tokens get one by one?
**
**   make build/draft_bits
**   build/draft_bits --model PATH.gguf --prompt-file FILE [--rows R]
**                    [--draft TEXT] [--flash-attn -1|0|1] [--no-repack]
**                    [--pad]
**
** FILE is a whole prompt as the model reads it (the chat template's
** special tokens spelled out, e.g. the messages of an askdb --trace
** wrapped in <|im_start|>ROLE ... <|im_end|>, ending with
** "<|im_start|>assistant\n"). DRAFT (default "```sql\nSELECT T1.name
** FROM") is tokenized and its first R+1 tokens decoded two ways after the
** prompt: one token a step, and the first R in one batch of sequence 0
** (each asking for logits) and the next one alone. For each row it
** prints whether the logits are the same bits, the largest difference
** and both argmaxes.
**
** Why: speculative decoding (drafts verified in one step) and the fence
** "```sql\n" evaluated as a batch would save steps only if they leave
** the model's numbers as they are; askdb's answers are made by the
** one-token steps. --pad adds the row src/llm/decoder.c adds to a batch
** of 3 on AVX-512; --flash-attn sets llama_context_params.flash_attn_type
** (-1 auto, as askdb); --no-repack keeps the weights as the file has them.
** Measured 2026-11-29 (docs/agent.md, "What a step costs"): 1 row the
** same bits; 2 or 3 rows not, with or without flash attention or
** repacking.
*/
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <llama.h>

#define MAX_PROMPT 8192
#define MAX_ROWS 8

static void quiet(enum ggml_log_level level, const char *text, void *ud)
{
    (void)level;
    (void)text;
    (void)ud;
}

/* Decode tok[0..n-1] into sequence 0 from position pos, every row with
** logits; with pad, one more row without logits in sequence 1 at 0. */
static int decode(struct llama_context *ctx, struct llama_batch *b,
                  const llama_token *tok, int n, int pos, int pad)
{
    int i;

    for (i = 0; i < n; i++) {
        b->token[i] = tok[i];
        b->pos[i] = pos + i;
        b->n_seq_id[i] = 1;
        b->seq_id[i][0] = 0;
        b->logits[i] = 1;
    }
    if (pad) {
        b->token[n] = tok[0];
        b->pos[n] = 0;
        b->n_seq_id[n] = 1;
        b->seq_id[n][0] = 1;
        b->logits[n] = 0;
    }
    b->n_tokens = n + pad;
    return llama_decode(ctx, *b);
}

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    char *s = NULL;
    long n;

    if (!f)
        return NULL;
    if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 &&
        fseek(f, 0, SEEK_SET) == 0 && (s = malloc((size_t)n + 1)) &&
        fread(s, 1, (size_t)n, f) == (size_t)n) {
        s[n] = '\0';
        *len = (size_t)n;
    }
    else {
        free(s);
        s = NULL;
    }
    fclose(f);
    return s;
}

int main(int argc, char **argv)
{
    const char *model_path = NULL, *prompt_path = NULL;
    const char *draft = "```sql\nSELECT T1.name FROM";
    int rows = 3, fa = -1, repack = 1, pad = 0, np, nd, nv, i, k, r;
    struct llama_model_params mp;
    struct llama_context_params cp;
    struct llama_model *model;
    struct llama_context *ctx;
    const struct llama_vocab *vocab;
    struct llama_batch b;
    static llama_token ptok[MAX_PROMPT], dtok[64];
    float *one, *many;
    char *text;
    size_t len = 0;

    for (i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--model") && i + 1 < argc)
            model_path = argv[++i];
        else if (!strcmp(argv[i], "--prompt-file") && i + 1 < argc)
            prompt_path = argv[++i];
        else if (!strcmp(argv[i], "--rows") && i + 1 < argc)
            rows = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--draft") && i + 1 < argc)
            draft = argv[++i];
        else if (!strcmp(argv[i], "--flash-attn") && i + 1 < argc)
            fa = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--no-repack"))
            repack = 0;
        else if (!strcmp(argv[i], "--pad"))
            pad = 1;
        else {
            fprintf(stderr, "usage: %s --model PATH.gguf --prompt-file FILE "
                            "[--rows R] [--draft TEXT] [--flash-attn -1|0|1] "
                            "[--no-repack] [--pad]\n", argv[0]);
            return 2;
        }
    }
    if (!model_path || !prompt_path || rows < 1 || rows > MAX_ROWS) {
        fprintf(stderr, "draft_bits: --model and --prompt-file are "
                        "required; --rows 1..%d\n", MAX_ROWS);
        return 2;
    }
    if (!(text = slurp(prompt_path, &len))) {
        fprintf(stderr, "draft_bits: cannot read %s\n", prompt_path);
        return 1;
    }
    llama_log_set(quiet, NULL);
    llama_backend_init();
    mp = llama_model_default_params();
    mp.use_extra_bufts = repack;
    if (!(model = llama_model_load_from_file(model_path, mp))) {
        fprintf(stderr, "draft_bits: cannot load %s\n", model_path);
        return 1;
    }
    vocab = llama_model_get_vocab(model);
    nv = llama_vocab_n_tokens(vocab);
    np = llama_tokenize(vocab, text, (int)len, ptok, MAX_PROMPT, false, true);
    nd = llama_tokenize(vocab, draft, (int)strlen(draft), dtok, 64, false,
                        false);
    if (np < 1 || nd < rows + 1) {
        fprintf(stderr, "draft_bits: the prompt (%d tokens, %d at most) "
                        "or the draft (%d tokens, %d needed) does not fit\n",
                np, MAX_PROMPT, nd, rows + 1);
        return 1;
    }
    cp = llama_context_default_params();
    cp.n_ctx = (uint32_t)(np + 64);
    cp.n_batch = 512;                /* as src/llm/decoder.c */
    cp.n_ubatch = 512;
    cp.n_seq_max = 2;
    cp.kv_unified = true;
    cp.n_threads = 2;
    cp.n_threads_batch = 2;
    cp.flash_attn_type = (enum llama_flash_attn_type)fa;
    if (!(ctx = llama_init_from_model(model, cp))) {
        fprintf(stderr, "draft_bits: cannot create a context\n");
        return 1;
    }
    b = llama_batch_init(512, 0, 1);
    for (i = 0; i < np; i += 512) {      /* the prompt, 512 at a time */
        int n = np - i < 512 ? np - i : 512;

        for (k = 0; k < n; k++) {
            b.token[k] = ptok[i + k];
            b.pos[k] = i + k;
            b.n_seq_id[k] = 1;
            b.seq_id[k][0] = 0;
            b.logits[k] = i + k == np - 1;
        }
        b.n_tokens = n;
        if (llama_decode(ctx, b) != 0)
            return 1;
    }
    one = malloc(sizeof *one * (size_t)nv * (size_t)(rows + 1));
    many = malloc(sizeof *many * (size_t)nv * (size_t)(rows + 1));
    if (!one || !many)
        return 1;
    for (r = 0; r <= rows; r++) {        /* one token a step */
        if (decode(ctx, &b, &dtok[r], 1, np + r, 0) != 0)
            return 1;
        memcpy(one + (size_t)r * nv, llama_get_logits_ith(ctx, 0),
               sizeof *one * (size_t)nv);
    }
    llama_memory_seq_rm(llama_get_memory(ctx), 0, np, -1);
    if (decode(ctx, &b, dtok, rows, np, pad) != 0)   /* the draft */
        return 1;
    for (r = 0; r < rows; r++)
        memcpy(many + (size_t)r * nv, llama_get_logits_ith(ctx, r),
               sizeof *many * (size_t)nv);
    llama_memory_seq_rm(llama_get_memory(ctx), 1, -1, -1);
    if (decode(ctx, &b, &dtok[rows], 1, np + rows, 0) != 0)
        return 1;
    memcpy(many + (size_t)rows * nv, llama_get_logits_ith(ctx, 0),
           sizeof *many * (size_t)nv);

    printf("prompt %d tokens; %d draft rows in one batch%s, flash "
           "attention %d, %s weights\n", np, rows, pad ? " and a pad row" : "",
           fa, repack ? "repacked" : "unrepacked");
    for (r = 0; r <= rows; r++) {
        const float *x = one + (size_t)r * nv, *y = many + (size_t)r * nv;
        double diff = 0;
        int ax = 0, ay = 0;

        for (k = 0; k < nv; k++) {
            if (fabs((double)x[k] - (double)y[k]) > diff)
                diff = fabs((double)x[k] - (double)y[k]);
            ax = x[k] > x[ax] ? k : ax;
            ay = y[k] > y[ay] ? k : ay;
        }
        printf("row %d (%s): %s, largest difference %g, argmax %d / %d\n",
               r, r < rows ? "in the batch" : "the step after",
               memcmp(x, y, sizeof *x * (size_t)nv) ? "other bits"
                                                    : "the same bits",
               diff, ax, ay);
    }
    llama_batch_free(b);
    llama_free(ctx);
    llama_model_free(model);
    llama_backend_free();
    free(one);
    free(many);
    free(text);
    return 0;
}
