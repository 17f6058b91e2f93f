/* prompt.c - prompt texts. Kept in one place so they are easy to tune. */
#include <string.h>

#include "agent/prompt.h"

/*
** The schema comes first in the first user message and never changes for a
** database (unless linking cut it down), so a provider that caches prompt
** prefixes (the local model, or a server) reuses it across questions.
*/
static const char system_fmt[] =
    "You are an expert %s analyst. You answer questions about a "
    "database by writing one %s query.\n"
    "Rules:\n"
    "- Answer with the query only, in a ```sql code block.\n"
    "- Write exactly one read-only statement (SELECT or WITH).\n"
    "- Use only the tables and columns of the schema; double-quote names "
    "that contain spaces or are keywords.\n"
    "- Return only the columns the question asks for.\n"
    "- Compare text values as they are spelled in the data (see the sample "
    "values in the schema comments).\n";

char *prompt_system(const char *dialect)
{
    struct buf b;

    buf_init(&b, 0);
    buf_printf(&b, system_fmt, dialect, dialect);
    return buf_steal(&b);
}

static int set(const char *s)
{
    return s && *s;
}

void prompt_question(struct buf *b, const struct prompt_parts *p)
{
    buf_puts(b, "Database schema:\n");
    buf_puts(b, p->schema);
    if (set(p->bank)) {
        buf_putc(b, '\n');
        buf_puts(b, p->bank);
    }
    if (set(p->examples)) {
        buf_putc(b, '\n');
        buf_puts(b, p->examples);
    }
    if (set(p->history)) {
        buf_putc(b, '\n');
        buf_puts(b, p->history);
    }
    if (set(p->values)) {
        buf_putc(b, '\n');
        buf_puts(b, p->values);
    }
    buf_puts(b, "\nQuestion: ");
    buf_puts(b, p->question);
    buf_putc(b, '\n');
    if (set(p->hint)) {
        buf_puts(b, "Hint (knowledge the question relies on): ");
        buf_puts(b, p->hint);
        buf_putc(b, '\n');
    }
    if (set(p->plan)) {
        buf_puts(b, p->plan);
        buf_puts(b, "Now write one query that answers the whole question "
                    "(you may reuse the steps' queries as subqueries or "
                    "WITH clauses).\n");
    }
}

size_t prompt_question_stable(const struct prompt_parts *p)
{
    return strlen("Database schema:\n") + strlen(p->schema);
}

void prompt_repair(struct buf *b, const char *sql, const char *error,
                   const char *hint)
{
    if (sql) {
        buf_puts(b, "This query failed:\n```sql\n");
        buf_puts(b, sql);
        buf_puts(b, "\n```\n");
    } else {
        buf_puts(b, "Your reply could not be used.\n");
    }
    buf_printf(b, "Error: %s\n", error);
    if (hint && *hint)
        buf_puts(b, hint);
    buf_puts(b, "Write the corrected query, in a ```sql code block.\n");
}

const char *prompt_qcheck(void)
{
    return "\nBefore any SQL: is this a question that the tables of this "
           "database can answer? Reply with one word: yes or no.\n";
}

const char *prompt_plan(void)
{
    return "\nDo not write SQL yet. Break the question into the steps a "
           "careful analyst would query one after another (2 to 4 steps; "
           "the last step answers the whole question). Reply with JSON "
           "only, in this form:\n"
           "{\"tasks\": [{\"id\": 1, \"task\": \"what this step finds\", "
           "\"depends_on\": []}, {\"id\": 2, \"task\": \"...\", "
           "\"depends_on\": [1]}]}\n"
           "If one query answers the question directly, reply "
           "{\"tasks\": []}.\n";
}

static const char answer_system_text[] =
    "You explain query results to the person who asked the question. "
    "Answer in plain English, in one to three short sentences, using only "
    "the rows given. Do not mention SQL. If there are no rows, say that "
    "nothing matched.\n";

const char *prompt_answer_system(void)
{
    return answer_system_text;
}

void prompt_answer(struct buf *b, const char *question, const char *sql,
                   const char *rows, const char *notes)
{
    buf_printf(b, "Question: %s\n", question);
    buf_printf(b, "Query used:\n%s\n", sql ? sql : "");
    buf_printf(b, "Result:\n%s\n", rows);
    if (notes && *notes)
        buf_printf(b, "Notes: %s\n", notes);
    buf_puts(b, "Answer:");
}
