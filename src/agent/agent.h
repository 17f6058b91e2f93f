/* agent.h - the router: which step of the pipeline runs next. */
#ifndef ASKDB_AGENT_H
#define ASKDB_AGENT_H

#include "agent/state.h"

/* The next step after `step` ended with `out` (the only place that
** decides it; steps.h draws the pipeline). */
enum agent_step agent_route(const struct agent_state *st,
                            enum agent_step step, enum agent_outcome out);

/* The step's name, e.g. "generate" (static string). */
const char *agent_step_name(enum agent_step step);

#endif
