/* prompt.h - the words askdb says to the model. */
#ifndef ASKDB_PROMPT_H
#define ASKDB_PROMPT_H

#include "core/buf.h"

/* The system prompt (static text). */
/* The system message for a database whose SQL is dialect ("SQLite",
** "PostgreSQL", ...); malloc()ed, NULL when out of memory. */
char *prompt_system(const char *dialect);

/*
** What goes into the first user message. NULL or "" parts are left out.
** The schema comes first and the parts that change with every question
** last, so that a provider that caches prompt prefixes (the local model,
** or a server) reuses the schema across questions.
*/
struct prompt_parts {
    const char *schema;      /* rendered schema (whole or linked subset) */
    const char *bank;        /* other databases' question/SQL pairs */
    const char *examples;    /* learned question/SQL pairs */
    const char *history;     /* earlier questions of the conversation */
    const char *values;      /* values the question mentions, as stored */
    const char *question;
    const char *hint;        /* the asker's hint */
    const char *plan;        /* results of the plan's earlier tasks */
};

/* First user message. */
void prompt_question(struct buf *b, const struct prompt_parts *p);

/* How many bytes at the start of prompt_question()'s text depend on the
** schema alone (llm_request.stable_bytes). */
size_t prompt_question_stable(const struct prompt_parts *p);

/* Feedback after a failed attempt: the SQL, the exact error, the hint. */
void prompt_repair(struct buf *b, const char *sql, const char *error,
                   const char *hint);

/* The question check's instruction, appended to the first user message:
** the reply is "yes" or "no". */
const char *prompt_qcheck(void);

/* The plan request, appended to the first user message; the reply is
** JSON {"tasks": [{"id": 1, "task": "...", "depends_on": []}, ...]}. */
const char *prompt_plan(void);

/* The final answer request: question, SQL, rows as text, notes. */
void prompt_answer(struct buf *b, const char *question, const char *sql,
                   const char *rows, const char *notes);

/* System prompt of the answer step (static text). */
const char *prompt_answer_system(void);

#endif
