/* batch_rows.c - what one decode step costs with R rows in its batch.
**
**   make build/batch_rows
**   build/batch_rows [--model PATH.gguf] [--threads N] [--prompt N]
**                    [--max-rows R] [--reps K] [--hugepages 0|1] [--no-mmap]
**                    [--weights REGEX=BUFFER ...]
**
** Defaults: the default local model, 2 threads, a 400-token prompt, rows
** 1..8, 12 repetitions. The prompt (token ids of a repeated text) is
** evaluated once in sequence 0; then for each R, K times: R tokens are
** decoded in one llama_batch, every one with logits, and removed from the
** KV cache again. Two layouts: "seq" puts the R tokens into sequence 0 at
** R consecutive positions (a draft being verified: speculative decoding),
** "par" puts one token into each of R sequences that share the prompt
** (candidates decoded side by side), "pad" is "par" with one more row
** that asks for no logits, in a sequence of its own at position 0 (what
** the decoder adds to a batch of 3 rows on AVX-512, src/llm/decoder.c).
** --hugepages 0 leaves the buffers on the kernel's default pages (1,
** the default: as askdb does, src/llm/hugepage.h); --no-mmap reads the
** weights into memory instead of mapping the file.
** Prints the median step time and the
** time per row, after the prompt's own rate (tokens/s, one decode).
**
** --weights puts the weight tensors whose names match REGEX into the
** CPU buffer type BUFFER: CPU (plain, no repacking), CPU_REPACK, or AMX
** where llama.cpp was built with it (ASKDB_LLAMA_ISA=amx scripts/llama.sh);
** the first match wins (llama_model_params.tensor_buft_overrides). Without
** it llama.cpp chooses, as askdb does.
**
** Why: the agent's candidates decode as parallel sequences, and on CPU
** llama.cpp multiplies fewer than 4 rows one row at a time (gemv) and 4 or
** more together (gemm), so a step's cost is not linear in its rows. This
** measures where the steps are cheap. Every figure is wall time on this
** machine: note the load average it prints first.
*/
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <ggml-backend.h>
#include <llama.h>

#include "llm/hugepage.h"

#define MAX_WEIGHTS 8

static double now_ms(void)
{
    struct timespec t;

    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

/* The CPU buffer type called name: the plain one or an extra one (repacked,
** AMX), as the CPU backend lists them. */
static ggml_backend_buffer_type_t cpu_buffer(const char *name)
{
    typedef ggml_backend_buffer_type_t *(*extra_fn)(ggml_backend_dev_t);
    ggml_backend_dev_t dev;
    ggml_backend_buffer_type_t *b;
    extra_fn extra;
    void *fp;

    if (!strcmp(name, "CPU"))
        return ggml_backend_cpu_buffer_type();
    dev = ggml_backend_dev_by_type(GGML_BACKEND_DEVICE_TYPE_CPU);
    if (!dev)
        return NULL;
    fp = ggml_backend_reg_get_proc_address(ggml_backend_dev_backend_reg(dev),
                                           "ggml_backend_dev_get_extra_bufts");
    memcpy(&extra, &fp, sizeof extra); /* (ISO C has no object-to-function cast) */
    for (b = extra ? extra(dev) : NULL; b && *b; b++)
        if (!strcmp(ggml_backend_buft_name(*b), name))
            return *b;
    return NULL;
}

static void quiet(enum ggml_log_level level, const char *text, void *ud)
{
    (void)level;
    (void)text;
    (void)ud;
}

int main(int argc, char **argv)
{
    const char *model_path = NULL;
    int threads = 2, nprompt = 400, max_rows = 8, reps = 12;
    struct llama_model_params mp;
    struct llama_context_params cp;
    struct llama_model *model;
    struct llama_context *ctx;
    const struct llama_vocab *vocab;
    llama_memory_t mem;
    struct llama_batch batch;
    llama_token *prompt;
    struct llama_model_tensor_buft_override weights[MAX_WEIGHTS + 1];
    char *weight_arg[MAX_WEIGHTS];
    double *t, la[3], pt;
    int i, r, k, layout, n_vocab, nweights = 0, huge = 1, no_mmap = 0;
    struct hp_snap before;
    FILE *f;

    for (i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--model") && i + 1 < argc)
            model_path = argv[++i];
        else if (!strcmp(argv[i], "--threads") && i + 1 < argc)
            threads = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--prompt") && i + 1 < argc)
            nprompt = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--max-rows") && i + 1 < argc)
            max_rows = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
            reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--hugepages") && i + 1 < argc)
            huge = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--no-mmap"))
            no_mmap = 1;
        else if (!strcmp(argv[i], "--weights") && i + 1 < argc &&
                 nweights < MAX_WEIGHTS && strchr(argv[i + 1], '='))
            weight_arg[nweights++] = argv[++i];
        else {
            fprintf(stderr, "usage: %s --model PATH.gguf [--threads N] "
                            "[--prompt N] [--max-rows R] [--reps K] "
                            "[--hugepages 0|1] [--no-mmap] "
                            "[--weights REGEX=BUFFER ...]\n",
                    argv[0]);
            return 2;
        }
    }
    if (!model_path || nprompt < 8 || max_rows < 1 || max_rows > 14 ||
        reps < 1) {
        fprintf(stderr, "batch_rows: --model is required; --prompt >= 8, "
                        "--max-rows 1..14, --reps >= 1\n");
        return 2;
    }
    f = fopen("/proc/loadavg", "r");
    if (f && fscanf(f, "%lf %lf %lf", &la[0], &la[1], &la[2]) == 3)
        printf("load average %.2f %.2f %.2f\n", la[0], la[1], la[2]);
    if (f)
        fclose(f);

    if (!getenv("BATCH_ROWS_LOG"))
        llama_log_set(quiet, NULL);
    llama_backend_init();
    hp_snapshot(&before, huge);
    mp = llama_model_default_params();
    if (no_mmap)
        mp.load_mode = LLAMA_LOAD_MODE_NONE;
    for (i = 0; i < nweights; i++) {
        char *eq = strrchr(weight_arg[i], '=');

        *eq = '\0';
        weights[i].pattern = weight_arg[i];
        weights[i].buft = cpu_buffer(eq + 1);
        if (!weights[i].buft) {
            fprintf(stderr, "batch_rows: no CPU buffer type '%s' in this "
                            "build\n", eq + 1);
            return 2;
        }
        printf("weights %s in %s\n", weights[i].pattern, eq + 1);
    }
    weights[nweights].pattern = NULL;
    weights[nweights].buft = NULL;
    if (nweights)
        mp.tensor_buft_overrides = weights;
    model = llama_model_load_from_file(model_path, mp);
    if (!model) {
        fprintf(stderr, "batch_rows: cannot load %s\n", model_path);
        return 1;
    }
    vocab = llama_model_get_vocab(model);
    n_vocab = llama_vocab_n_tokens(vocab);
    cp = llama_context_default_params();
    cp.n_ctx = 2048;
    cp.n_batch = 512;
    cp.n_ubatch = 512;
    cp.n_seq_max = 16;
    cp.kv_unified = true;
    cp.n_threads = threads;
    cp.n_threads_batch = threads;
    ctx = llama_init_from_model(model, cp);
    if (!ctx) {
        fprintf(stderr, "batch_rows: cannot create a context\n");
        return 1;
    }
    if (huge) {
        double t0 = now_ms();
        size_t got = hp_advise_new(&before);

        printf("huge pages %.0f MiB in %.0f ms (askdb's way, "
               "src/llm/hugepage.c)\n", (double)got / (1 << 20),
               now_ms() - t0);
    }
    else
        printf("huge pages: not asked for\n");
    mem = llama_get_memory(ctx);
    prompt = malloc((size_t)nprompt * sizeof *prompt);
    t = malloc((size_t)reps * sizeof *t);
    if (!prompt || !t)
        return 1;
    for (i = 0; i < nprompt; i++)
        prompt[i] = (llama_token)(1000 + (i * 37) % (n_vocab / 4));
    batch = llama_batch_init(512, 0, 1);
    for (i = 0; i < nprompt; i++) {
        batch.token[i] = prompt[i];
        batch.pos[i] = i;
        batch.n_seq_id[i] = 1;
        batch.seq_id[i][0] = 0;
        batch.logits[i] = i == nprompt - 1;
    }
    batch.n_tokens = nprompt;
    pt = now_ms();
    if (llama_decode(ctx, batch) != 0) {
        fprintf(stderr, "batch_rows: prompt decode failed\n");
        return 1;
    }
    pt = now_ms() - pt;
    for (i = 1; i < 15; i++)
        llama_memory_seq_cp(mem, 0, i, -1, -1);

    printf("model %s, %d threads, prompt %d tokens in %.0f ms (%.1f tok/s)\n",
           model_path, threads, nprompt, pt, nprompt * 1e3 / pt);
    printf("%-6s %4s %10s %10s %10s\n", "layout", "rows", "step ms",
           "ms/row", "vs 1 row");
    for (layout = 0; layout < 3; layout++) {
        double one = 0;

        for (r = 1; r <= max_rows; r++) {
            for (k = -1; k < reps; k++) {   /* k = -1 warms up */
                double t0;

                for (i = 0; i < r; i++) {
                    batch.token[i] = prompt[(i * 13 + k + 7) % nprompt];
                    batch.pos[i] = layout == 0 ? nprompt + i : nprompt;
                    batch.n_seq_id[i] = 1;
                    batch.seq_id[i][0] = layout == 0 ? 0 : i;
                    batch.logits[i] = 1;
                }
                if (layout == 2) {   /* the pad row */
                    batch.token[r] = prompt[0];
                    batch.pos[r] = 0;
                    batch.n_seq_id[r] = 1;
                    batch.seq_id[r][0] = 15;
                    batch.logits[r] = 0;
                }
                batch.n_tokens = r + (layout == 2);
                t0 = now_ms();
                if (llama_decode(ctx, batch) != 0) {
                    fprintf(stderr, "batch_rows: decode failed\n");
                    return 1;
                }
                (void)llama_get_logits_ith(ctx, r - 1);
                if (k >= 0)
                    t[k] = now_ms() - t0;
                for (i = 0; i < (layout == 0 ? 1 : r); i++)
                    llama_memory_seq_rm(mem, i, nprompt, -1);
                if (layout == 2)
                    llama_memory_seq_rm(mem, 15, -1, -1);
            }
            qsort(t, (size_t)reps, sizeof *t, cmp_d);
            if (r == 1)
                one = t[reps / 2];
            printf("%-6s %4d %10.1f %10.1f %10.2f\n",
                   layout == 0 ? "seq" : layout == 1 ? "par" : "pad", r,
                   t[reps / 2],
                   t[reps / 2] / r, t[reps / 2] / one);
        }
    }
    llama_batch_free(batch);
    llama_free(ctx);
    llama_model_free(model);
    llama_backend_free();
    free(prompt);
    free(t);
    return 0;
}
