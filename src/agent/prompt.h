/* prompt.h - the words askdb says to the model. */
#ifndef ASKDB_PROMPT_H
#define ASKDB_PROMPT_H

#include "core/buf.h"

/* The system prompt (static text). */
const char *prompt_system(void);

/* First user message: the schema, the question and the asker's hint (NULL
** or "" for none). */
void prompt_question(struct buf *b, const char *schema_text,
                     const char *question, const char *hint);

/* Feedback after a failed attempt: the SQL, the exact error, the hint. */
void prompt_repair(struct buf *b, const char *sql, const char *error,
                   const char *hint);

#endif
