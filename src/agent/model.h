/* model.h - the public askdb_model: a model loaded once, shared by agents. */
#ifndef ASKDB_AGENT_MODEL_H
#define ASKDB_AGENT_MODEL_H

#include "askdb.h"
#include "llm/llm.h"

/* The shared model behind m (borrowed, lives with m). */
struct llm_shared *agent_model_shared(askdb_model *m);

#endif
