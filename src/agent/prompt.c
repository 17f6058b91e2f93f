/* prompt.c - prompt texts. Kept in one place so they are easy to tune. */
#include "agent/prompt.h"

/*
** The schema comes first in the first user message and never changes for a
** database, so a provider that caches prompt prefixes (the local model, or
** a server) reuses it across questions.
*/
static const char system_text[] =
    "You are an expert SQLite analyst. You answer questions about a "
    "database by writing one SQLite query.\n"
    "Rules:\n"
    "- Answer with the query only, in a ```sql code block.\n"
    "- Write exactly one read-only statement (SELECT or WITH).\n"
    "- Use only the tables and columns of the schema; double-quote names "
    "that contain spaces or are keywords.\n"
    "- Return only the columns the question asks for.\n"
    "- Compare text values as they are spelled in the data (see the sample "
    "values in the schema comments).\n";

const char *prompt_system(void)
{
    return system_text;
}

void prompt_question(struct buf *b, const char *schema_text,
                     const char *question, const char *hint)
{
    buf_puts(b, "Database schema:\n");
    buf_puts(b, schema_text);
    buf_puts(b, "\nQuestion: ");
    buf_puts(b, question);
    buf_putc(b, '\n');
    if (hint && *hint) {
        buf_puts(b, "Hint (knowledge the question relies on): ");
        buf_puts(b, hint);
        buf_putc(b, '\n');
    }
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
