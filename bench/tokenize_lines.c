/* tokenize_lines.c - the token ids a model's vocabulary gives each line.
**
**   make build/tokenize_lines
**   build/tokenize_lines MODEL.gguf < LINES > IDS
**
** Each input line is one text, with "\n" standing for a line break and
** "\\" for a backslash; each output line is its token ids, separated by
** spaces (no BOS; special tokens parsed, as the local provider does).
** Only the vocabulary is loaded. bench/specsim.py uses it.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <llama.h>

static void quiet(enum ggml_log_level level, const char *text, void *ud)
{
    (void)level;
    (void)text;
    (void)ud;
}

int main(int argc, char **argv)
{
    static char line[1 << 20], text[1 << 20];
    static llama_token toks[1 << 18];
    struct llama_model_params mp;
    const struct llama_vocab *v;
    struct llama_model *m;
    size_t n, i, j;
    int k, t;

    if (argc != 2) {
        fprintf(stderr, "usage: tokenize_lines MODEL.gguf < LINES\n");
        return 2;
    }
    llama_log_set(quiet, NULL);
    mp = llama_model_default_params();
    mp.vocab_only = true;
    m = llama_model_load_from_file(argv[1], mp);
    if (!m) {
        fprintf(stderr, "tokenize_lines: cannot load %s\n", argv[1]);
        return 1;
    }
    v = llama_model_get_vocab(m);
    while (fgets(line, sizeof line, stdin)) {
        n = strlen(line);
        if (n && line[n - 1] == '\n')
            line[--n] = '\0';
        for (i = j = 0; i < n; i++) {
            if (line[i] == '\\' && (line[i + 1] == 'n' || line[i + 1] == '\\'))
                text[j++] = line[++i] == 'n' ? '\n' : '\\';
            else
                text[j++] = line[i];
        }
        k = llama_tokenize(v, text, (int)j, toks,
                           (int)(sizeof toks / sizeof *toks), false, true);
        if (k < 0) {
            fprintf(stderr, "tokenize_lines: a line has too many tokens\n");
            llama_model_free(m);
            return 1;
        }
        for (t = 0; t < k; t++)
            printf(t ? " %d" : "%d", toks[t]);
        putchar('\n');
    }
    llama_model_free(m);
    return 0;
}
