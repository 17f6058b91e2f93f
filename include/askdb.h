/* askdb.h - the public API of libaskdb: ask questions of a database in English. */
#ifndef ASKDB_H
#define ASKDB_H

/*
** libaskdb turns a question in plain English into one checked, read-only SQL
** statement, runs it with time/row/byte limits and returns the rows.
**
** Typical use:
**
**     askdb_config cfg = askdb_config_default();
**     askdb_config_from_env(&cfg);            (optional: ASKDB_* variables)
**     askdb_agent *ag = NULL;
**     if (askdb_agent_new(&cfg, "shop.db", &ag)) { ...askdb_agent_errmsg(ag) }
**     askdb_answer *ans = NULL;
**     if (askdb_agent_ask(ag, "Top 5 customers?", &ans) == ASKDB_OK) ...
**     askdb_answer_free(ans);
**     askdb_agent_free(ag);
**
** Conventions: every fallible function returns askdb_status (ASKDB_OK == 0).
** A returned `const char *` is borrowed from the object it came from; a
** returned `char *` is the caller's to free with askdb_free(). Every
** *_free(NULL) is a no-op. The library keeps no global mutable state: one
** agent may be used by one thread at a time, different agents in parallel.
**
** Safety: askdb never writes to a database and never creates a database
** file. Every statement, whether it comes from the model or from the
** caller, passes the same guard (askdb_db_query).
*/

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__) && defined(ASKDB_BUILD)
#define ASKDB_API __attribute__((visibility("default")))
#else
#define ASKDB_API
#endif
#if defined(__GNUC__)
#define ASKDB_NODISCARD __attribute__((warn_unused_result))
#else
#define ASKDB_NODISCARD
#endif

typedef enum askdb_status {
    ASKDB_OK = 0,
    ASKDB_ERR_USAGE,        /* bad argument or configuration */
    ASKDB_ERR_NOMEM,        /* out of memory or over a size cap */
    ASKDB_ERR_DB_OPEN,      /* database cannot be opened / is not one */
    ASKDB_ERR_DB,           /* statement failed (syntax, runtime) */
    ASKDB_ERR_REFUSED,      /* statement is not exactly one read-only one */
    ASKDB_ERR_TIMEOUT,      /* statement interrupted at the time limit */
    ASKDB_ERR_LLM,          /* model provider answered with an error */
    ASKDB_ERR_LLM_UNREACHABLE, /* model provider could not be reached */
    ASKDB_ERR_NO_SQL,       /* no valid SQL after all attempts */
    ASKDB_ERR_UNSUPPORTED,  /* feature not built in (e.g. local model) */
    ASKDB_ERR_IO            /* reading or writing a file failed */
} askdb_status;

/* Name of a status code, e.g. "refused". Static string. */
ASKDB_API const char *askdb_status_str(askdb_status st);

/* Version string, e.g. "0.1.0". Static string. */
ASKDB_API const char *askdb_version(void);

/* Free memory the library handed to the caller as `char *`. */
ASKDB_API void askdb_free(void *p);

/* ---------------------------------------------------------------------- */
/* Configuration                                                          */
/* ---------------------------------------------------------------------- */

/*
** A custom model: the library calls it with the chat messages and expects
** the reply text. Used by embedders and by the benchmark (a zero-latency
** scripted model). `roles[i]` is "system", "user" or "assistant". On
** success store a malloc()ed NUL-terminated string in *reply (the library
** frees it) and return 0; return non-zero for "model failed".
*/
typedef int (*askdb_llm_fn)(void *ud, int n, const char *const *roles,
                            const char *const *contents, char **reply);

/* Called for each step the agent takes when verbose logging is on. */
typedef void (*askdb_log_fn)(void *ud, const char *step, const char *msg);

/* Called with each piece of model text as it streams in (if streaming). */
typedef void (*askdb_token_fn)(void *ud, const char *piece, size_t len);

typedef struct askdb_config {
    /* Model provider: "openai", "anthropic", "local", or NULL to choose:
    ** a custom llm_fn wins, then a model that is a .gguf file path selects
    ** the local model, then an explicit URL or key selects HTTP (anthropic
    ** when the URL contains "anthropic.com" or the key starts with
    ** "sk-ant-"), else the default local model. */
    const char *provider;
    const char *llm_url;     /* base URL, e.g. http://localhost:11434/v1 */
    const char *model;       /* model name, or a .gguf path for "local" */
    const char *api_key;     /* never logged */
    double temperature;      /* default 0 */
    int max_tokens;          /* reply cap, default 512 */
    int llm_timeout_ms;      /* per request, default 120000 */
    int llm_retries;         /* retries on 429/5xx/reset, default 4 */
    int stream;              /* use streaming (SSE) replies */
    int seed;                /* -1 = provider default */
    int threads;             /* local model: CPU threads, 0 = all cores */
    int no_grammar;          /* local model: no SQL-constrained decoding */
    int no_prompt_cache;     /* local model: do not keep the evaluated
                                system prompt and schema in the cache
                                directory (prompts/, capped at
                                ASKDB_PROMPT_CACHE_MB, default 1024) */
    askdb_llm_fn llm_fn;     /* custom model (overrides the above) */
    void *llm_ud;

    /* Agent */
    int max_attempts;        /* SQL generations per question, default 3,
                                at most 32 */
    int dry_run;             /* generate and validate, never execute */

    /* Agent techniques (docs/agent.md has what each does and measured
    ** gains; the defaults follow those measurements). */
    int linking;             /* schema linking: schemas over 6 tables and
                                8 KiB are cut down to what the question
                                needs (default 1) */
    int values;              /* value retrieval: the question's words are
                                matched against the data (default 0: the
                                pilot ablation found it misleads the
                                1.5B model more often than it helps) */
    int question_check;      /* answer greetings and questions no table
                                holds without SQL (default 1) */
    int plan;                /* plan multi-step questions (default 0) */
    int candidates;          /* SQL candidates voted on by their results;
                                1 = one greedy candidate; default 0 =
                                auto: 3 with the local model (it decodes
                                them in one batch), 1 with the others */
    double candidate_temperature; /* sampling of candidates 2..N (0.7) */
    int checks;              /* checks before/after execution (default 1) */
    int answer;              /* write a plain-English answer (default 0) */
    int memory;              /* learned question/SQL pairs put into the
                                prompt (most similar first; default 3,
                                0 = none) */
    const char *memory_path; /* learned pairs store, NULL = the default in
                                the cache directory (askdb learn) */
    int conversation;        /* follow-up questions are read in the
                                context of the earlier ones (shell) */

    /* Execution limits. 0 or less means the default: there is no way to
    ** turn a limit off (a zeroed config still has every guard). */
    int query_timeout_ms;    /* default 10000 */
    long max_rows;           /* default 1000 */
    size_t max_bytes;        /* result size cap, default 4 MiB */

    /* Schema extraction */
    int sample_values;       /* distinct samples per text column, def 3
                                (0 = none) */
    long count_cap;          /* row counts stop at this many, def 100000
                                (0 or less = the default) */

    /* Observability */
    const char *trace_path;  /* JSON lines of every step, or NULL; an
                                SQLite file is refused (never written) */
    askdb_log_fn log_fn;     /* verbose step log, or NULL */
    void *log_ud;
    askdb_token_fn token_fn; /* streamed model text, or NULL */
    void *token_ud;
} askdb_config;

/* The defaults described above. */
ASKDB_API askdb_config askdb_config_default(void);

/*
** Fill unset fields (NULL strings) from the environment: ASKDB_PROVIDER,
** ASKDB_LLM_URL, ASKDB_MODEL, ASKDB_API_KEY. Without a key, a vendor's own
** variable is used only for that vendor's host: ANTHROPIC_API_KEY when the
** URL's host is anthropic.com (or a subdomain), OPENAI_API_KEY when it is
** openai.com; with no URL, when the provider names that vendor (any
** case). A key is never sent to another server (a gateway, a local one).
** Values set by the caller (flags) are never overwritten, nor overruled: a
** .gguf ASKDB_MODEL (which would select the local model) is not taken
** when the caller set llm_url, unless the provider is "local". The
** strings stay owned by the environment.
*/
ASKDB_API void askdb_config_from_env(askdb_config *cfg);

/* ---------------------------------------------------------------------- */
/* Results                                                                */
/* ---------------------------------------------------------------------- */

typedef enum askdb_type {
    ASKDB_NULL = 0, ASKDB_INTEGER, ASKDB_REAL, ASKDB_TEXT, ASKDB_BLOB
} askdb_type;

typedef struct askdb_value {
    askdb_type type;
    int64_t i;               /* ASKDB_INTEGER */
    double d;                /* ASKDB_REAL */
    const char *s;           /* ASKDB_TEXT (NUL-terminated) or ASKDB_BLOB */
    size_t len;              /* bytes in s (TEXT and BLOB) */
} askdb_value;

/* Rows of one statement. Read-only for the caller; free with
** askdb_result_free(). */
typedef struct askdb_result {
    int ncols;
    char **cols;             /* column names */
    char **decltypes;        /* declared types, entries may be NULL */
    long nrows;
    askdb_value *cells;      /* nrows * ncols, row-major */
    int truncated;           /* 1 = stopped at max_rows, 2 = at max_bytes */
    double exec_ms;
} askdb_result;

ASKDB_API void askdb_result_free(askdb_result *r);

/* Cell (row, col); NULL when out of range. */
ASKDB_API const askdb_value *askdb_result_cell(const askdb_result *r,
                                               long row, int col);

/* ---------------------------------------------------------------------- */
/* Databases                                                              */
/* ---------------------------------------------------------------------- */

typedef struct askdb_db askdb_db;

/*
** Open an existing SQLite database read-only. A missing path, a directory
** or a file that is not a database gives ASKDB_ERR_DB_OPEN; no file is ever
** created. On failure *out is still set when memory allowed, so that
** askdb_db_errmsg(*out) can say why; free it with askdb_db_close().
*/
ASKDB_API ASKDB_NODISCARD askdb_status
askdb_db_open(const char *path, const askdb_config *cfg, askdb_db **out);
ASKDB_API void askdb_db_close(askdb_db *db);

/* Last error on this handle; borrowed until the next call on it. */
ASKDB_API const char *askdb_db_errmsg(const askdb_db *db);

/*
** The schema exactly as the model sees it (CREATE TABLE text with foreign
** keys and sample values as comments). *out is the caller's (askdb_free).
*/
ASKDB_API ASKDB_NODISCARD askdb_status askdb_db_schema_text(askdb_db *db,
                                                            char **out);

/*
** Run one statement through the read-only guard with the configured limits.
** Refuses (ASKDB_ERR_REFUSED) anything but exactly one read-only statement.
** On success *out is the caller's (askdb_result_free).
*/
ASKDB_API ASKDB_NODISCARD askdb_status
askdb_db_query(askdb_db *db, const char *sql, askdb_result **out);

/* ---------------------------------------------------------------------- */
/* The agent                                                              */
/* ---------------------------------------------------------------------- */

/* Why one attempt did not produce the answer. */
typedef enum askdb_error_class {
    ASKDB_EC_NONE = 0,
    ASKDB_EC_NO_SQL,         /* reply held no SQL statement */
    ASKDB_EC_REFUSED,        /* not exactly one read-only statement */
    ASKDB_EC_SYNTAX,
    ASKDB_EC_UNKNOWN_TABLE,
    ASKDB_EC_UNKNOWN_COLUMN,
    ASKDB_EC_RUNTIME,        /* other prepare or execution error */
    ASKDB_EC_TIMEOUT,
    ASKDB_EC_EMPTY,          /* ran, returned no rows */
    ASKDB_EC_LLM,            /* the model call itself failed */
    ASKDB_EC_CHECK           /* ran, but a check doubted the result (e.g.
                                one number asked, many rows returned) */
} askdb_error_class;

ASKDB_API const char *askdb_error_class_str(askdb_error_class ec);

typedef struct askdb_attempt {
    char *sql;               /* extracted SQL, or NULL if none */
    askdb_error_class error; /* ASKDB_EC_NONE for the accepted attempt */
    char *message;           /* error text, or NULL */
    double llm_ms;
} askdb_attempt;

typedef struct askdb_timings {
    double schema_ms, prompt_ms, llm_ms, validate_ms, exec_ms, total_ms;
} askdb_timings;

typedef struct askdb_answer {
    askdb_status status;     /* ASKDB_OK when sql/result are the answer */
    char *sql;               /* the accepted statement, or NULL */
    askdb_result *result;    /* rows, NULL on failure or dry run */
    int nattempts;
    askdb_attempt *attempts;
    askdb_timings t;
    long llm_calls;
    long prompt_tokens, completion_tokens;
    char *error;             /* summary when status != ASKDB_OK */
    char *text;              /* plain-English answer (answer option, or
                                the reply to a non-question), or NULL */
    int not_a_question;      /* 1 = the question check answered it without
                                SQL (status ASKDB_OK, sql NULL, text says
                                why) */
    int ncandidates;         /* SQL candidates that were voted on */
    double confidence;       /* share of the candidates whose result agrees
                                with the answer's (1 with one candidate;
                                1/ncandidates when a repair gave it) */
} askdb_answer;

ASKDB_API void askdb_answer_free(askdb_answer *a);

typedef struct askdb_agent askdb_agent;

/*
** Create an agent over the database at db_path (opened read-only, schema
** read once) and the configured model. cfg is copied; its strings must
** outlive the agent. On failure *out may still be set so that
** askdb_agent_errmsg() can say why; free it with askdb_agent_free().
** Returns ASKDB_ERR_DB_OPEN, ASKDB_ERR_USAGE (bad provider settings) or
** ASKDB_ERR_UNSUPPORTED (provider not built in).
*/
ASKDB_API ASKDB_NODISCARD askdb_status
askdb_agent_new(const askdb_config *cfg, const char *db_path,
                askdb_agent **out);
ASKDB_API void askdb_agent_free(askdb_agent *ag);
ASKDB_API const char *askdb_agent_errmsg(const askdb_agent *ag);

/* The agent's database handle (borrowed, lives as long as the agent). */
ASKDB_API askdb_db *askdb_agent_db(askdb_agent *ag);

/*
** Answer one question. *out is always set (unless out of memory) and is the
** caller's (askdb_answer_free): on failure it lists every attempt. Returns
** the same status as (*out)->status: ASKDB_OK, ASKDB_ERR_NO_SQL (no valid
** SQL after all attempts), ASKDB_ERR_LLM / ASKDB_ERR_LLM_UNREACHABLE.
*/
ASKDB_API ASKDB_NODISCARD askdb_status
askdb_agent_ask(askdb_agent *ag, const char *question, askdb_answer **out);

/*
** Forget the conversation so far (config.conversation): the next question
** is read on its own.
*/
ASKDB_API void askdb_agent_forget(askdb_agent *ag);

/* ---------------------------------------------------------------------- */
/* Questions with a hint                                                  */
/* ---------------------------------------------------------------------- */

/*
** Like askdb_agent_ask(), with a hint the asker knows and the schema does
** not say (BIRD's "evidence", e.g. "rich means balance > 1e6"). The hint
** goes into the first message to the model, after the question; NULL or ""
** is the same as askdb_agent_ask(). Same ownership and statuses.
*/
ASKDB_API ASKDB_NODISCARD askdb_status
askdb_agent_ask_hint(askdb_agent *ag, const char *question, const char *hint,
                     askdb_answer **out);

/* ---------------------------------------------------------------------- */
/* Evaluation (askdb eval)                                                */
/* ---------------------------------------------------------------------- */

/*
** Runs a suite of questions with known gold SQL and measures execution
** accuracy (EX) as the official Spider evaluation decides it (see
** docs/eval.md). Suites: Spider (db_id, question, query), BIRD (db_id,
** question, evidence, SQL, difficulty) or JSON lines ({"db": PATH,
** "question": ..., "gold": ...}). Items are grouped by database, one agent
** per database; every finished item is appended to the output file at
** once, so a stopped run can be resumed without repeating work.
**
**     askdb_eval_options eo = askdb_eval_options_default();
**     eo.suite_path = "train.json"; eo.db_root = "database";
**     askdb_eval *ev = NULL;
**     if (askdb_eval_new(&cfg, &eo, &ev) == ASKDB_OK &&
**         askdb_eval_run(ev) == ASKDB_OK) { askdb_eval_summary(ev, &text); }
**     askdb_eval_free(ev);
*/

/* Progress after each finished item (called with an internal lock held:
** keep it short, do not call back into the eval). */
typedef struct askdb_eval_progress {
    long done;               /* items finished, this run and resumed */
    long total;              /* items selected */
    long resumed;            /* of done: taken from the output file */
    long evaluated;          /* done minus bad items */
    long correct;
    long bad;                /* bad items (missing database, bad gold) */
    double elapsed_ms;       /* since askdb_eval_run() started */
    const char *db;          /* database of the item just finished */
} askdb_eval_progress;

typedef void (*askdb_eval_progress_fn)(void *ud, const askdb_eval_progress *p);

typedef struct askdb_eval_options {
    const char *suite_path;  /* required */
    const char *db_root;     /* DIR/<db_id>/<db_id>.sqlite; JSON-lines
                                paths are relative to it (else to the
                                suite file's folder) */
    const char *tables_path; /* Spider tables.json: warn about db_ids it
                                does not describe; NULL = none */
    long limit;              /* first N after filtering/sampling; 0 = all */
    long sample;             /* random sample of N; 0 = no sampling */
    long sample_dbs;         /* first keep N random databases; 0 = all */
    long per_db;             /* ... and at most N random items of each;
                                0 = all (both before sample and limit) */
    uint64_t seed;           /* sample seed (splitmix64, docs/eval.md) */
    const char *dbs;         /* comma list of db_ids to keep, or NULL */
    int jobs;                /* databases in parallel (HTTP models) */
    const char *out_path;    /* JSON lines, one per item, or NULL */
    int resume;              /* continue out_path, skipping its items */
    int keep_distinct;       /* official --keep_distinct (default off) */
    askdb_eval_progress_fn progress;
    void *progress_ud;
} askdb_eval_options;

typedef struct askdb_eval askdb_eval;

/* Defaults: jobs 1, everything else 0/NULL. */
ASKDB_API askdb_eval_options askdb_eval_options_default(void);

/*
** Load the suite, select the items (filter --db, sample, limit), read the
** output file when resuming, and check the model settings. cfg and opt are
** copied (their strings too). On failure *out may be set so that
** askdb_eval_errmsg() can say why; free it with askdb_eval_free().
** Returns ASKDB_ERR_USAGE (bad options, unreadable or malformed suite,
** output file exists without resume or is an SQLite file), ASKDB_ERR_IO,
** ASKDB_ERR_NOMEM.
*/
ASKDB_API ASKDB_NODISCARD askdb_status
askdb_eval_new(const askdb_config *cfg, const askdb_eval_options *opt,
               askdb_eval **out);

/*
** Run every selected item not yet done. Returns ASKDB_OK when all ran;
** ASKDB_ERR_LLM_UNREACHABLE / ASKDB_ERR_LLM / ASKDB_ERR_UNSUPPORTED /
** ASKDB_ERR_USAGE when the model cannot be used (the run stops; finished
** items are kept), ASKDB_ERR_IO when the output file cannot be written.
** The summary and report cover whatever finished.
*/
ASKDB_API ASKDB_NODISCARD askdb_status askdb_eval_run(askdb_eval *ev);

/* The summary (EX overall, by difficulty and database, latency, tokens,
** repairs, error classes, bad items) as text; *out is the caller's
** (askdb_free). */
ASKDB_API ASKDB_NODISCARD askdb_status askdb_eval_summary(askdb_eval *ev,
                                                          char **out);

/* Write the self-contained HTML report (inline CSS and SVG, no network)
** to path, through path.tmp. ASKDB_ERR_USAGE when either is an SQLite
** file (never written), ASKDB_ERR_IO when writing fails. */
ASKDB_API ASKDB_NODISCARD askdb_status
askdb_eval_write_report(askdb_eval *ev, const char *path);

/* Notes from loading (e.g. jobs clamped, unknown db_ids), one per line, or
** "" - borrowed until the next call on ev. */
ASKDB_API const char *askdb_eval_notes(const askdb_eval *ev);

/* Last error; borrowed until the next call on ev. */
ASKDB_API const char *askdb_eval_errmsg(const askdb_eval *ev);
ASKDB_API void askdb_eval_free(askdb_eval *ev);

#ifdef __cplusplus
}
#endif
#endif /* ASKDB_H */
