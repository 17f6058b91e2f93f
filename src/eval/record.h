/* record.h - one evaluated item as a JSON object: built, written, read back. */
#ifndef ASKDB_EVAL_RECORD_H
#define ASKDB_EVAL_RECORD_H

#include <stdio.h>

#include "askdb.h"
#include "core/json.h"
#include "eval/suite.h"

/*
** A record is the whole story of one item and the only thing the summary
** and the report read, so a report made after --resume is the same as one
** made in one go. Keys (docs/eval.md has the full list):
**   index, db, question, hint?, difficulty, gold, pred, correct,
**   class (why a prediction is wrong, or null), bad (why the item itself
**   cannot be scored, or null), message, attempts, repairs,
**   attempt_classes, llm_calls, prompt_tokens, completion_tokens,
**   ms {schema, prompt, model, validate, exec, total, gold, compare},
**   order_matters, gold_result?, pred_result? (failures only: columns,
**   first REC_MAX_ROWS rows, row_count).
** Text from databases and models is untrusted: strings that are not UTF-8
** are repaired (U+FFFD, jsonx_text() and jsonx_set_str()) so the file
** always stays valid JSON.
*/

#define REC_MAX_ROWS 10

/* Why a prediction is wrong (record "class"). */
#define REC_NO_SQL "no_sql"
#define REC_REFUSED "refused"
#define REC_SYNTAX "syntax"
#define REC_UNKNOWN_NAME "unknown_name"
#define REC_RUNTIME "runtime"
#define REC_TIMEOUT "timeout"
#define REC_WRONG "wrong_result"
#define REC_EMPTY "empty_result"
#define REC_MODEL "model_error"

/* Why an item cannot be scored (record "bad"). */
#define REC_BAD_MALFORMED "malformed_item"
#define REC_BAD_MISSING_DB "missing_database"
#define REC_BAD_DB "bad_database"
#define REC_BAD_GOLD "gold_error"
#define REC_BAD_GOLD_TIMEOUT "gold_timeout"
#define REC_BAD_GOLD_LARGE "gold_too_large"

/* {columns, rows (first max_rows), row_count, truncated}; values keep
** their types, blobs as {"blob_hex": ...}, non-finite reals as strings.
** New reference or NULL. */
json_t *rec_result(const askdb_result *r, long max_rows);

/* A new record for item: index, db, question, hint, difficulty, gold, and
** empty outcome fields (correct false, class/bad/pred/message null). */
json_t *rec_new(const struct suite_item *it);

/* Set rec.ms[key] (milliseconds, kept to the microsecond). */
void rec_set_ms(json_t *rec, const char *key, double ms);

/* Copy the answer's attempts, calls, tokens and timings into rec. */
void rec_set_answer(json_t *rec, const askdb_answer *a);

/* The record class for an attempt's error class. */
const char *rec_class_of(askdb_error_class ec);

/* Write rec as one line and flush. 0, or -1 with errno set. */
int rec_write(FILE *f, const json_t *rec);

/* Accessors that tolerate any shape (records are read back from files). */
double rec_ms(const json_t *rec, const char *key);
int rec_bool(const json_t *rec, const char *key);

#endif
