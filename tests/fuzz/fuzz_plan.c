/* fuzz_plan.c - libFuzzer harness for the plan parser (model output). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "agent/plan.h"

/*
** The input is a model reply. plan_parse() must either fail with a reason
** and an empty plan, or give at most PLAN_MAX_TASKS tasks with text and
** dependencies that point back to earlier tasks. plan_needed() runs on
** the same text as a question.
*/

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1), why[256];
    struct plan p;
    int i, k;

    if (!s)
        return 0;
    memcpy(s, data, size);
    s[size] = '\0';
    if (plan_parse(s, &p, why, sizeof why) == 0) {
        if (p.ntasks < 0 || p.ntasks > PLAN_MAX_TASKS)
            abort();
        for (i = 0; i < p.ntasks; i++) {
            if (!p.tasks[i].text || !*p.tasks[i].text)
                abort();
            for (k = 0; k < p.tasks[i].ndeps; k++)
                if (p.tasks[i].deps[k] < 0 || p.tasks[i].deps[k] >= i)
                    abort();
        }
        plan_free(&p);
    } else if (p.ntasks != 0 || !why[0]) {
        abort();
    }
    (void)plan_needed(s);
    free(s);
    return 0;
}
