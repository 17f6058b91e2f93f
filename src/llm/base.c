/* base.c - the helpers every provider may use (see base.h). */
#include "llm/base.h"

#include <limits.h>

double llm_candidate_temperature(const struct llm_request *req, int i)
{
    i += req->first_reply;
    if (i == 0)
        return req->temperature;
    return req->alt_temperature > 0 ? req->alt_temperature
                                    : LLM_ALT_TEMPERATURE;
}

int llm_candidate_seed(const struct llm_request *req, int i)
{
    i += req->first_reply;
    if (i == 0)
        return req->seed;
    if (req->seed < 0)
        return i;
    return (int)(((unsigned)req->seed + (unsigned)i) & (unsigned)INT_MAX);
}

long llm_follow_limit(const struct llm_request *req, long n0)
{
    double cap;

    if (!(req->follow_cap > 0) || n0 < 0 || req->first_reply > 0)
        return LONG_MAX;   /* off, or no greedy reply to measure by */
    cap = req->follow_cap * (double)n0;
    if (cap < (double)(n0 + LLM_FOLLOW_SLACK))
        cap = (double)(n0 + LLM_FOLLOW_SLACK);
    return cap < (double)LONG_MAX / 2 ? (long)cap : LONG_MAX;
}
