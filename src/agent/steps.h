/* steps.h - the steps that answer a question, each a function over the
** state. */
#ifndef ASKDB_AGENT_STEPS_H
#define ASKDB_AGENT_STEPS_H

#include "agent/state.h"

/*
** One question is answered by steps that each read and write one state
** struct; agent_route() alone decides which step runs next:
**
**   schema -> context -> [qcheck] -> [plan] -> generate -> validate
**                           |                    ^            |
**                           v                    |            v
**                          done  [answer] <- execute/vote -> repair
**
**   schema    read the schema (once per agent) and build the grammar
**   context   value retrieval, schema linking, learned examples and the
**             conversation so far: the first message to the model
**   qcheck    is this a question about this database at all? (cheap:
**             the model is asked only when nothing in the question
**             matches a name or a value of the database)
**   plan      multi-step questions: a validated plan, its tasks run in
**             order, their results handed to the final statement
**   generate  one greedy candidate, plus sampled ones on the first attempt
**             when cfg.candidates > 1
**   validate  the read-only guard's prepare, then our own checks (joins,
**             aggregates, literals) for every candidate
**   execute   run every valid candidate, vote by identical results, then
**             check the winner's result (NULLs, shape)
**   repair    feedback by error class or check finding, back to generate
**   answer    a plain-English answer from the question and the rows
**
** Invariants: every generation adds one askdb_attempt; at most
** cfg.max_attempts generations per question; an empty result is retried
** once and then stands; check findings cause at most one repair, after
** which a valid result stands (also when the model fails on the repair);
** nothing but db_run()/db_check() touches the user's database.
*/

/* Each step returns how it went; agent_route() (agent.h) decides what
** runs next. The files: schema_step.c, context.c, qcheck.c, plan_step.c,
** generate.c, validate.c, execute.c, repair.c, answer.c. */
enum agent_outcome agent_step_schema(struct agent_state *st);
enum agent_outcome agent_step_qcheck(struct agent_state *st);
enum agent_outcome agent_step_context(struct agent_state *st);
enum agent_outcome agent_step_plan(struct agent_state *st);
enum agent_outcome agent_step_generate(struct agent_state *st);
enum agent_outcome agent_step_validate(struct agent_state *st);
enum agent_outcome agent_step_execute(struct agent_state *st);
enum agent_outcome agent_step_repair(struct agent_state *st);
enum agent_outcome agent_step_answer(struct agent_state *st);

/*
** The settle callback of the first attempt's model call (execute.c;
** llm_request.on_end, ud the state): runs candidate i's statement as the
** validate and execute steps would, as soon as its reply has ended, when
** it needs no fix (the guard, then the engine's check, unchanged); the
** execute step takes that result instead of running it again. Returns 1
** when the vote is decided whatever the pending replies hold: the greedy
** candidate's non-empty result has more votes than any other result
** could reach with every pending or not-yet-valid candidate added
** (cfg.settle).
*/
int agent_settle(void *ud, int i, const char *text, int pending);

/* Rebuild the first user message with st->plan_notes (context.c; the
** plan step calls it). */
int agent_rebuild_first_message(struct agent_state *st);

#endif
