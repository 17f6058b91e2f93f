/* askdb.h - the public API of libaskdb: ask questions of a database in
** English. */
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
** *_free(NULL) is a no-op. A NULL handle, NULL for a required argument
** or for a required output (`out`) is ASKDB_ERR_USAGE; a function that
** returns a pointer or a number gives NULL, "" or 0 for a NULL handle
** (the *_errmsg() functions "out of memory": the handle could not be
** made). Outputs said to be optional ("if not NULL") may be NULL. A
** constructor that fails may still set its handle, for its *_errmsg()
** (askdb_db_open, askdb_agent_new, askdb_agent_new_with_model,
** askdb_memory_open, askdb_eval_new, askdb_model_new): free it as any
** other; every function that would use it returns ASKDB_ERR_USAGE
** (askdb_agent_ask an answer saying so), its message saying that the
** handle did not open and why, and askdb_agent_db() of it is NULL. The
** library keeps no global mutable state: one
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
    ASKDB_ERR_IO,           /* reading or writing a file failed */
    ASKDB_ERR_CANCELLED     /* askdb_agent_cancel() stopped the question */
} askdb_status;

/* Name of a status code, e.g. "refused". Static string. */
ASKDB_API const char *askdb_status_str(askdb_status st);

/* Version string, e.g. "0.1.0". Static string. */
ASKDB_API const char *askdb_version(void);

/* Free memory the library handed to the caller as `char *`. */
ASKDB_API void askdb_free(void *p);

/* Bytes of the valid UTF-8 character that starts s (n bytes readable):
** 1 to 4; 0 when s starts no valid character (a stray continuation byte,
** an overlong form, a surrogate, past U+10FFFF, cut short) or n is 0. A
** NUL is a valid character of one byte. For showing untrusted text. */
ASKDB_API size_t askdb_utf8_len(const char *s, size_t n);

/* The shortest decimal text that reads back as d (at most 17 significant
** digits, printf's %g form, '.' whatever the locale: 0.1 is "0.1", 0.1 +
** 0.2 is "0.30000000000000004", 60.0 is "60", the smallest subnormal
** "5e-324"; "inf", "-inf", "nan" or "-nan") into buf, which is n bytes
** long (32 hold any); returns buf. The JSON of askdb_result_json() and
** askdb_answer_json() writes reals so, with ".0" after a whole number. */
ASKDB_API char *askdb_real_text(double d, char *buf, size_t n);

/* Every real number of the JSON text json rewritten in place in that
** shortest form (".0" after a whole number; integers and the text inside
** strings as they are), for JSON a program of its own writes with
** jansson's json_dumps(), which gives every real 17 digits (0.1 as
** 0.10000000000000001) unless told fewer, and fewer lose digits of
** others. A number no double holds (1e400, which reads as an infinity)
** stays as written, so the text stays JSON; one too small for a double
** (1e-400) is the 0.0 it reads as. Never makes the text longer. Returns
** json (NULL for NULL). */
ASKDB_API char *askdb_json_shorten_reals(char *json);

/* ---------------------------------------------------------------------- */
/* Configuration                                                          */
/* ---------------------------------------------------------------------- */

/*
** A custom model: the library calls it with the chat messages and expects
** the reply text. Used by embedders and by the benchmark (a zero-latency
** scripted model). `roles[i]` is "system", "user" or "assistant". On
** success store a malloc()ed NUL-terminated string in *reply (the library
** frees it) and return 0; return non-zero for "model failed", and 401 or
** 403 (as an HTTP provider's status) when the model refused the
** credentials or the permission to use it, a failure no later question
** gets past: askdb_eval_run() then stops at that question rather than
** after its run of model errors.
*/
typedef int (*askdb_llm_fn)(void *ud, int n, const char *const *roles,
                            const char *const *contents, char **reply);

/* Called for each step the agent takes when verbose logging is on. */
typedef void (*askdb_log_fn)(void *ud, const char *step, const char *msg);

/* Called with each piece of model text as it streams in (if streaming).
** A streamed reply that fails after a piece was passed here is not tried
** again (its pieces cannot be taken back); with no token_fn it is. */
typedef void (*askdb_token_fn)(void *ud, const char *piece, size_t len);

/*
** Step events. While a question is answered, the agent reports each step
** as one event: its type, the question's request id and a JSON object
** (the same object that the --trace file gets as one line). Every object
** has "step" (the type's name), "request_id" and "t_ms" (milliseconds
** since the question started), plus the step's own fields:
**
**   question     question, hint
**   schema       tables, bytes, ms, grammar_bytes (first question only)
**   values       matches or error (value retrieval)
**   link         tables kept of all, bytes (schema linking)
**   examples     learned pairs put into the prompt
**   qcheck       question (true/false), why
**   plan         needed (false: no cue of several steps), and tasks
**                (how many), or error (an invalid plan, answered in one
**                step, or the model's failure)
**   prompt       for ("sql" or the step asking), attempt, candidates,
**                provider, messages [{role, content}]; with the
**                candidate gate: gate, and for the later candidates
**                first_candidate and why ("unsure", "no confidence")
**                instead of messages; a repair asked again because it
**                repeated a failed statement: why "repeat"
**   reply        for (as its prompt's), reply, ms, prompt_tokens,
**                completion_tokens, retries, attempt, candidate,
**                error, settled (stopped or not asked: the vote was
**                decided without it, config settle), cut and
**                max_tokens_hit (the reply stopped at max_tokens: left
**                out of the vote, no statement of it runs); local model:
**                ttft_ms, cached_tokens, load_ms, huge_mb (with load_ms:
**                MiB of the model's buffers on 2 MiB pages), min_p,
**                min_p_words, cut, and branch_tokens (a gated
**                candidate: its first tokens, taken from the greedy
**                reply it branched off)
**   validate     ok, candidates [error class of each], settled (how
**                many of the no_sql ones were not needed)
**   execute      rows, truncated, ms; with candidates: candidate, votes,
**                ran, confidence, settled (how many were not needed)
**   check        kind, hint (a check doubted the result), instead (the
**                candidate, from 1, that stands in its place: its
**                result drew no finding; config clean_candidate)
**   error        class, message, sql (why an attempt failed)
**   repair       class, attempt (the model is asked for a fix)
**   fix          kind ("requalify", "join" or "cast"), candidate (from 1,
**                as reply's), changes, from, sql, ok: a deterministic
**                repair made without asking the model (ok: the engine
**                accepts the result)
**   select       options, voted, picks, chosen, error (a tie between
**                candidates' results put to the model: config select)
**   result       sql, row_count, truncated, confidence: the result is
**                final and the plain-English answer (config answer, or
**                askdb_ask_options.answer) is about to be asked; the
**                event's result field holds the rows (they are not in
**                the JSON, nor in a trace), so that a front end can show
**                them before the words come. Only with an answer in
**                words, and at most once, before answer_text and answer
**   answer_text  error: only when the plain-English answer (config
**                answer) could not be had; the rows still stand. A
**                cancel (askdb_agent_cancel()) after the result event
**                is one such case: error "cancelled", and the answer
**                is ASKDB_OK with its sql and rows and no text
**   answer       (always last) status, sql, attempts, candidates,
**                confidence, timings {schema_ms ... total_ms},
**                prompt_tokens, completion_tokens, llm_calls, error,
**                text (the plain-English answer, when there is one)
**
** The callback runs on the asking thread, between steps: keep it short.
** ev and its strings are borrowed for the duration of the call.
*/
typedef enum askdb_event_type {
    ASKDB_EVENT_QUESTION = 0, ASKDB_EVENT_SCHEMA, ASKDB_EVENT_VALUES,
    ASKDB_EVENT_LINK, ASKDB_EVENT_EXAMPLES, ASKDB_EVENT_QCHECK,
    ASKDB_EVENT_PLAN, ASKDB_EVENT_PROMPT, ASKDB_EVENT_REPLY,
    ASKDB_EVENT_VALIDATE, ASKDB_EVENT_EXECUTE, ASKDB_EVENT_CHECK,
    ASKDB_EVENT_ERROR, ASKDB_EVENT_REPAIR, ASKDB_EVENT_ANSWER_TEXT,
    ASKDB_EVENT_ANSWER, ASKDB_EVENT_FIX, ASKDB_EVENT_SELECT,
    ASKDB_EVENT_RESULT
} askdb_event_type;

typedef struct askdb_event {
    askdb_event_type type;
    const char *name;        /* the type's name, e.g. "prompt" */
    const char *request_id;  /* the question's request id */
    const char *json;        /* one JSON object, NUL-terminated */
    size_t json_len;
    double t_ms;             /* since the question started */
    /* The result event's rows (askdb_result_json() writes them); NULL
    ** for every other event. Borrowed: valid only during the callback. */
    const struct askdb_result *result;
} askdb_event;

typedef void (*askdb_event_fn)(void *ud, const askdb_event *ev);

/* Name of an event type, e.g. "execute"; "unknown" when out of range. */
ASKDB_API const char *askdb_event_type_str(askdb_event_type t);

/*
** Told on the thread that opens a database handle (askdb_db_open(), with
** ag NULL) or an agent (askdb_agent_new(), askdb_agent_new_with_model(),
** with db NULL) once the new handle can be cancelled and before its
** database is opened; then once more with both NULL when the open has
** ended, well or not. In between another thread may stop the open (a
** connect to a server that takes the connection and answers nothing)
** with askdb_agent_cancel(ag) or askdb_db_cancel(db): a server keeps the
** handle under its own lock to cancel it when it stops. The handle is
** borrowed, only to cancel, and only until the second call.
*/
struct askdb_agent;
struct askdb_db;
typedef void (*askdb_open_fn)(void *ud, struct askdb_agent *ag,
                              struct askdb_db *db);

/*
** The model's numbers (temperature, candidate_temperature, candidate_gate,
** candidate_cap, threads) outside the ranges their comments give, NaN and
** infinities included, are ASKDB_ERR_USAGE at askdb_agent_new(),
** askdb_agent_new_with_model(), askdb_model_new() and askdb_eval_new(),
** the message naming the field. Other numbers take the default for 0 or
** less and are capped where their comments say.
*/
typedef struct askdb_config {
    /* Model provider: "openai", "anthropic", "local", or NULL to choose:
    ** a custom llm_fn wins, then a model that is a .gguf file path selects
    ** the local model, then an explicit URL or key selects HTTP (anthropic
    ** when the URL's host is anthropic.com or a subdomain, or, with no
    ** URL, the key starts with "sk-ant-"), else the default local model. */
    const char *provider;
    const char *llm_url;     /* base URL, e.g. http://localhost:11434/v1 */
    const char *model;       /* model name, or a .gguf path for "local" */
    const char *api_key;     /* never logged */
    double temperature;      /* 0 (greedy, the default) to 2 */
    int max_tokens;          /* reply cap, default 512 */
    int llm_timeout_ms;      /* each try of a request, and the waits
                                between its tries together, default
                                120000 */
    int llm_retries;         /* retries on 429/5xx/reset, default 4 */
    int stream;              /* use streaming (SSE) replies */
    int seed;                /* -1 = provider default */
    int threads;             /* local model: CPU threads, 0 = all cores,
                                at most 1024 */
    int parallel;            /* local model loaded once (askdb_model):
                                questions decoded at once, as sequences of
                                one batch over one context; more wait for
                                a turn. 0 = 1 (askdb serve: --workers) */
    int no_grammar;          /* local model: no SQL-constrained decoding */
    int no_prompt_cache;     /* local model: do not keep the evaluated
                                system prompt and schema in the cache
                                directory (prompts/, capped at
                                ASKDB_PROMPT_CACHE_MB, default 1024) */
    int huge_pages;          /* local model, Linux: its buffers on 2 MiB
                                pages, a decode step about 12% sooner for
                                1-2 s more at load (docs/agent.md). Default
                                1; askdb ask sets 0 (one question does not
                                pay the load back). ASKDB_HUGEPAGES=0 or 1
                                sets it over the caller's value
                                (askdb_config_from_env); other values are
                                ignored */
    askdb_llm_fn llm_fn;     /* custom model (overrides the above) */
    void *llm_ud;

    /* Agent */
    int max_attempts;        /* SQL generations per question, default 3
                                (also for 0 or less), at most 32; two
                                changes in a row (an UPDATE...) that the
                                guard refused end sooner */
    int dry_run;             /* generate and validate, never execute (one
                                candidate: no vote without results) */

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
    double candidate_temperature; /* sampling of candidates 2..N, 0 to 2
                                (0.7) */
    double candidate_gate;   /* with candidates > 1 and the local model:
                                the greedy reply starts alone, and when
                                the model gives every token it chooses
                                at least this probability it is the only
                                candidate; at the first below it,
                                candidates 2..N start in the same batch.
                                0 to 1; 0 = always all N at once
                                (default 0.5) */
    double candidate_cap;    /* with candidates > 1 and the local model:
                                once the greedy reply has ended with L
                                tokens, a candidate still being written
                                stops at candidate_cap * L tokens (and
                                at least L + 24) and is dropped from the
                                vote; 0 = no cap (default 2; 0 or more) */
    int settle;              /* with candidates > 1: a candidate is run as
                                soon as its reply ends, and when the
                                greedy candidate's result has more votes
                                than any other result could reach with
                                the candidates still being written, those
                                stop and are left out (the answer is the
                                same; confidence counts them as not
                                agreeing). 0 = every candidate is made
                                (default 1) */
    int checks;              /* checks before/after execution (default 1) */
    int cast_compare;        /* a comparison the engine refuses between
                                a number and text (PostgreSQL's
                                "operator does not exist: bigint =
                                text") is made again with both sides
                                cast to text before any repair (default
                                1) */
    int requalify;           /* a column under the wrong table (p.amount
                                where only o has it) is re-qualified by
                                the query's one table that has it, before
                                a repair asks the model (default 1) */
    int join_missing;        /* a column no table of the query has, that
                                one table has, linked by one foreign key,
                                brings that table in (JOIN ... ON the key)
                                before a repair (default 1) */
    int idle_join;           /* among the checks: a table joined on its
                                foreign key to another of the query and
                                used nowhere else, which only multiplies
                                or drops the other's rows, is a finding
                                unless the question names it (default 1;
                                docs/agent.md) */
    int select;              /* when the candidates' vote ties between
                                different results, the model is shown
                                one query of each with its first rows
                                and picks the one that answers the
                                question, asked in both orders; a pick
                                counts when both agree (default 0:
                                docs/agent.md, "Selection") */
    int resample;            /* a repair whose reply repeats a statement
                                that already failed for this question is
                                asked once more, sampled (temperature
                                candidate_temperature): greedy decoding
                                that is stuck gives the same reply to the
                                same prompt (default 0: not measured yet;
                                docs/agent.md) */
    int answer;              /* write a plain-English answer (default 0) */
    int memory;              /* learned question/SQL pairs put into the
                                prompt (most similar first; default 3,
                                0 = none, at most 100: more is 100) */
    int bank;                /* examples from the built-in bank of other
                                databases' question/SQL pairs (Spider's
                                training split, CC BY-SA 4.0), chosen by
                                how alike the questions are with names
                                and values masked; put after the schema
                                (default 0, 0 = none: docs/agent.md,
                                "The example bank") */
    const char *memory_path; /* learned pairs store, NULL = the default in
                                the cache directory (askdb learn) */
    int conversation;        /* follow-up questions are read in the
                                context of the earlier ones (shell) */

    /* Execution limits. 0 or less means the default: there is no way to
    ** turn a limit off (a zeroed config still has every guard). */
    int query_timeout_ms;    /* default 10000, at most 2000000000 (about
                                23 days: more is that) */
    long max_rows;           /* default 1000, at most LONG_MAX - 1 */
    size_t max_bytes;        /* result size cap, default 4 MiB */
    int in_process;          /* 1 = run the statements of SQLite and DuckDB
                                files in this process, as before askdb-exec
                                existed: one long function call can then
                                outlast query_timeout_ms. Default 0: in
                                askdb-exec, a helper process killed at the
                                deadline (docs/security.md, promise 3),
                                or ASKDB_ERR_DB_OPEN when the environment's
                                ASKDB_EXEC_HELPER names no executable */

    /* Schema extraction */
    int sample_values;       /* distinct samples per text column, def 3
                                (0 = none) */
    long count_cap;          /* row counts stop at this many, def 100000
                                (0 or less = the default; at most
                                LONG_MAX - 1) */

    /* Observability */
    const char *trace_path;  /* JSON lines of every step, or NULL; an
                                SQLite file is refused (never written) */
    askdb_log_fn log_fn;     /* verbose step log, or NULL */
    void *log_ud;
    askdb_token_fn token_fn; /* streamed model text, or NULL */
    void *token_ud;
    askdb_event_fn event_fn; /* step events, or NULL */
    void *event_ud;
    askdb_open_fn open_fn;   /* each open of a database, or NULL: so that
                                another thread can cancel it (above) */
    void *open_ud;

    /* The agent, added after 0.1's first layout */
    int clean_candidate;     /* when a check doubts the vote's winner,
                                another candidate whose result has rows
                                and draws no finding stands instead,
                                before a repair is asked (default 1;
                                docs/agent.md) */
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
** Values set by the caller (flags) are never overwritten, nor overruled:
** when the caller set llm_url, ASKDB_PROVIDER=local is not taken, nor a
** .gguf ASKDB_MODEL (either would select the local model) unless the
** caller's provider is "local". One exception, an operator's switch:
** ASKDB_HUGEPAGES=0 or 1 sets huge_pages whatever the caller chose (any
** other value leaves it). The strings stay owned by the environment.
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

/* Flags of the JSON writers. */
#define ASKDB_JSON_PRETTY 1      /* indented by 2, one field a line */
#define ASKDB_JSON_TERMINAL 2    /* also escape DEL, the C1 controls
                                    (U+0080..U+009F) and the bidi
                                    overrides and isolates (U+202A..U+202E,
                                    U+2066..U+2069) as \u escapes, for a
                                    terminal: JSON escapes C0 always */

typedef struct askdb_db askdb_db;

/*
** Open an existing SQLite database read-only. A missing path, a directory
** or a file that is not a database gives ASKDB_ERR_DB_OPEN; no file is ever
** created. On failure *out is still set when memory allowed, so that
** askdb_db_errmsg(*out) can say why; free it with askdb_db_close().
** *out is set before the database is opened: askdb_db_cancel(*out) from
** a signal handler stops a connect to a PostgreSQL server (its walk of a
** host list included) or a MariaDB server with ASKDB_ERR_CANCELLED; from
** another thread, through the handle cfg->open_fn is given.
*/
ASKDB_API ASKDB_NODISCARD askdb_status
askdb_db_open(const char *path, const askdb_config *cfg, askdb_db **out);
ASKDB_API void askdb_db_close(askdb_db *db);

/* Last error on this handle ("" after a success); borrowed until the
** next call on it. */
ASKDB_API const char *askdb_db_errmsg(const askdb_db *db);

/*
** The engine behind a handle ("sqlite", "postgresql", "mariadb", "duckdb"),
** its version as the engine reports it ("" before it is known), and the
** database argument fit to print: a URL without its password. All three
** live as long as the handle.
*/
ASKDB_API const char *askdb_db_engine(const askdb_db *db);
ASKDB_API const char *askdb_db_version(const askdb_db *db);
ASKDB_API const char *askdb_db_label(const askdb_db *db);

/*
** The schema exactly as the model sees it (CREATE TABLE text with foreign
** keys and sample values as comments). *out is the caller's (askdb_free).
** Read once and kept; the read waits for a writer's lock (SQLite) as long
** as the time limit (query_timeout_ms) allows, then fails with
** ASKDB_ERR_DB ("locked"); a cancel (askdb_db_cancel, or
** askdb_agent_cancel for an agent's handle) stops it with
** ASKDB_ERR_CANCELLED, and nothing of it is kept. The same for
** askdb_db_schema_json().
*/
ASKDB_API ASKDB_NODISCARD askdb_status askdb_db_schema_text(askdb_db *db,
                                                            char **out);

/*
** Run one statement through the read-only guard with the configured limits.
** Refuses (ASKDB_ERR_REFUSED) anything but exactly one read-only statement,
** text that is empty or only comments too (its errclass ASKDB_EC_NO_SQL);
** a NULL sql is ASKDB_ERR_USAGE. A result whose first row alone is over
** the byte cap is no empty result: ASKDB_ERR_DB (errclass
** ASKDB_EC_RUNTIME, "the first row alone is larger than the N-byte result
** cap ..."), as the agent repairs it. On success *out is the caller's
** (askdb_result_free).
*/
ASKDB_API ASKDB_NODISCARD askdb_status
askdb_db_query(askdb_db *db, const char *sql, askdb_result **out);

/*
** The schema for a program, as one JSON object: engine, path, tables
** [{name, kind ("table" or "view"), rows (null when unknown), rows_capped,
** columns [{name, type, notnull, default, pk (1-based position in the
** primary key, 0 = not), samples}], foreign_keys [{from, table, to}],
** unique ["col, col"]}], and text (what askdb_db_schema_text gives). A
** table its name alone does not reach (PostgreSQL: not on the search
** path; DuckDB: not in main) is named "schema.name" and has "schema"
** too; foreign keys name tables the same way.
** flags: ASKDB_JSON_PRETTY or 0. *out is the caller's (askdb_free).
*/
ASKDB_API ASKDB_NODISCARD askdb_status
askdb_db_schema_json(askdb_db *db, int flags, char **out);

/*
** The query plan of one statement without running it: the statement must
** pass the guard as askdb_db_query would run it (else ASKDB_ERR_REFUSED
** or ASKDB_ERR_DB, with the reason in askdb_db_errmsg); the rows are the
** engine's plan (SQLite: EXPLAIN QUERY PLAN's id, parent, notused,
** detail). *out is the caller's (askdb_result_free).
*/
ASKDB_API ASKDB_NODISCARD askdb_status
askdb_db_explain(askdb_db *db, const char *sql, askdb_result **out);

/*
** Stop the statement running on db, from any thread (or a signal handler:
** it only sets a flag): it ends at its next step with ASKDB_ERR_CANCELLED,
** and so does every statement started on db until askdb_db_uncancel(db),
** so that a cancel that comes just before a statement starts is not lost.
** For a handle of askdb_db_open(): an agent's (askdb_agent_db) is stopped
** with askdb_agent_cancel().
*/
ASKDB_API void askdb_db_cancel(askdb_db *db);

/* Let statements run on db again after askdb_db_cancel(). */
ASKDB_API void askdb_db_uncancel(askdb_db *db);

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
    ASKDB_EC_CHECK,          /* ran, but a check doubted the result (e.g.
                                one number asked, many rows returned) */
    ASKDB_EC_DATABASE        /* the database failed, not the statement
                                (locked, unreadable, damaged, a hot
                                journal): no repair is asked for */
} askdb_error_class;

ASKDB_API const char *askdb_error_class_str(askdb_error_class ec);

/* The kind of the last failure of askdb_db_query() or askdb_db_explain()
** on db, e.g. ASKDB_EC_UNKNOWN_TABLE or ASKDB_EC_UNKNOWN_COLUMN for a
** name the database does not have; ASKDB_EC_NONE after a success. */
ASKDB_API askdb_error_class askdb_db_errclass(const askdb_db *db);

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
    char *question;          /* the question as asked (valid UTF-8) */
    char *request_id;        /* the id its events carried */
    int nsettled;            /* of ncandidates, how many were not needed:
                                the vote was decided before they were
                                made (askdb_config.settle); confidence
                                counts them as not agreeing */
} askdb_answer;

ASKDB_API void askdb_answer_free(askdb_answer *a);

typedef struct askdb_agent askdb_agent;

/*
** A model, loaded once per process and shared by many agents. For the
** local model the weights are memory-mapped once and one context serves
** every agent: up to cfg->parallel questions (agents on different
** threads) are decoded together as sequences of one batch, the others
** wait for a turn; a prefix one question evaluated (system prompt and
** schema) is reused by the next, whichever agent asks it. For HTTP
** providers the model holds the endpoint; each agent has its own
** connection, asked with its own settings (askdb_agent_new_with_model).
** A custom llm_fn is called from whichever thread asks: it
** must be thread-safe when agents share it.
** cfg is copied; its strings must outlive the model. On failure *out may
** still be set so that askdb_model_errmsg() can say why; free it with
** askdb_model_free(). Returns ASKDB_ERR_USAGE (bad settings, a number out
** of its range included, missing or bad model file),
** ASKDB_ERR_UNSUPPORTED (provider not built in).
*/
typedef struct askdb_model askdb_model;

ASKDB_API ASKDB_NODISCARD askdb_status
askdb_model_new(const askdb_config *cfg, askdb_model **out);
ASKDB_API const char *askdb_model_errmsg(const askdb_model *m);
/* "openai", "anthropic", "local" or "custom" (static string); "" for
** NULL or a model whose askdb_model_new() failed. */
ASKDB_API const char *askdb_model_provider(const askdb_model *m);
/* Free the model; every agent made with it must be freed before. */
ASKDB_API void askdb_model_free(askdb_model *m);

/*
** Create an agent over the database at db_path (opened read-only, schema
** read once) and the configured model. cfg is copied; its strings must
** outlive the agent. On failure *out may still be set so that
** askdb_agent_errmsg() can say why; free it with askdb_agent_free().
** Returns ASKDB_ERR_DB_OPEN, ASKDB_ERR_USAGE (bad provider settings, a
** model number out of its range, no db_path or a URL askdb does not
** read; an unknown provider, a number out of range or a model URL that
** is not an http(s) URL with a host is found before the database is
** opened), ASKDB_ERR_UNSUPPORTED (provider
** not built in), ASKDB_ERR_IO (cfg->trace_path cannot be opened for
** appending, or is refused: askdb_output_refusal_for()),
** ASKDB_ERR_CANCELLED (askdb_agent_cancel(*out), which *out is set for
** before the database is opened, from a signal handler, or from another
** thread through the handle cfg->open_fn is given: it stops a connect to
** a PostgreSQL or MariaDB server) or ASKDB_ERR_NOMEM.
*/
ASKDB_API ASKDB_NODISCARD askdb_status
askdb_agent_new(const askdb_config *cfg, const char *db_path,
                askdb_agent **out);
ASKDB_API void askdb_agent_free(askdb_agent *ag);
ASKDB_API const char *askdb_agent_errmsg(const askdb_agent *ag);

/*
** The same over a model loaded once with askdb_model_new() (above):
** the agent borrows model, which must outlive it. The model's settings
** hold, cfg's are ignored: provider, llm_url, model, api_key, llm_fn and
** llm_ud, and for the local model threads, parallel, huge_pages and
** no_prompt_cache. Everything else is the agent's own, also what its
** requests carry: temperature, max_tokens, seed, token_fn (streamed to
** whenever it is set with the local model) and, for an HTTP model,
** stream, llm_timeout_ms, llm_retries and the log_fn that gets the
** provider's lines (retries, waits).
** A NULL model, or one whose askdb_model_new() failed, is ASKDB_ERR_USAGE
** with *out set as on any failure (askdb_agent_errmsg says which).
*/
ASKDB_API ASKDB_NODISCARD askdb_status
askdb_agent_new_with_model(const askdb_config *cfg, askdb_model *model,
                           const char *db_path, askdb_agent **out);

/* The agent's database handle (borrowed, lives as long as the agent;
** NULL when askdb_agent_new() failed). askdb_agent_cancel() also stops a
** statement run on it (askdb_db_query, askdb_db_explain) or a schema
** read, each of which starts uncancelled as a question does. */
ASKDB_API askdb_db *askdb_agent_db(askdb_agent *ag);

/*
** The longest question askdb_agent_ask() takes, in characters (Unicode
** code points, whatever their UTF-8 length). Every front end has this
** limit: askdb serve's API and the MCP ask tool refuse a longer question
** too. A question is something a person asks; a longer text is sent to
** the model whole, once for each candidate.
*/
#define ASKDB_MAX_QUESTION 8192

/*
** Answer one question. *out is always set (unless out of memory) and is the
** caller's (askdb_answer_free): on failure it lists every attempt; a NULL
** ag gives one that says so (ASKDB_ERR_USAGE). Returns
** the same status as (*out)->status: ASKDB_OK, ASKDB_ERR_NO_SQL (no valid
** SQL after all attempts), ASKDB_ERR_LLM / ASKDB_ERR_LLM_UNREACHABLE,
** ASKDB_ERR_USAGE for a question of nothing but white space, one that is
** not valid UTF-8 (the error names the first bad byte, counted from 1; a
** question is not changed to fit) or one longer than ASKDB_MAX_QUESTION
** characters (each asked of nobody: no event, no model call, no
** conversation turn; the answer's question holds it with U+FFFD for a
** bad byte),
** ASKDB_ERR_DB_OPEN / ASKDB_ERR_DB / ASKDB_ERR_TIMEOUT when the database
** failed (its schema could not be read; locked, damaged: no repair is
** asked), ASKDB_ERR_CANCELLED (askdb_agent_cancel), ASKDB_ERR_IO when the
** answer is complete but its trace lines could not be written,
** ASKDB_ERR_NOMEM.
*/
ASKDB_API ASKDB_NODISCARD askdb_status
askdb_agent_ask(askdb_agent *ag, const char *question, askdb_answer **out);

/*
** Get ready for the first question, e.g. while a person types it: read
** the schema and have the local model evaluate the part of the prompt
** every question shares (system prompt and schema; from its prompt-cache
** file when one exists, else evaluated and the file written), so the
** first question costs what a later one does. Optional; with a remote
** model it only reads the schema. The step events of what it runs (schema,
** link...) go out as a question's do, under a request id of their own,
** with no question or answer event. Not at the same time as a question on
** the same agent; askdb_agent_cancel() stops it (ASKDB_ERR_CANCELLED).
*/
ASKDB_API askdb_status askdb_agent_warm(askdb_agent *ag);

/*
** Forget the conversation so far (config.conversation): the next question
** is read on its own.
*/
ASKDB_API void askdb_agent_forget(askdb_agent *ag);

/* Options of one question (askdb_agent_ask_opts). Zero it, then set. */
typedef struct askdb_ask_options {
    const char *hint;        /* what the asker knows and the schema does not
                                say (BIRD's evidence), or NULL; UTF-8, as
                                the question is (askdb_agent_ask_hint) */
    const char *request_id;  /* tags this question's events, trace lines
                                and answer; NULL = a random one */
    int answer;              /* 1: also a plain-English answer for this
                                question (as config.answer does for all) */
} askdb_ask_options;

/* askdb_agent_ask() with options (opts may be NULL). Same ownership and
** statuses, plus ASKDB_ERR_CANCELLED. */
ASKDB_API ASKDB_NODISCARD askdb_status
askdb_agent_ask_opts(askdb_agent *ag, const char *question,
                     const askdb_ask_options *opts, askdb_answer **out);

/*
** Stop the question ag is answering, from any thread (or a signal
** handler: it only sets a flag). Model generation stops at the next
** token (the local model also inside a prompt evaluation; HTTP requests
** within 50 ms) and a running query at its next step; the question ends
** with ASKDB_ERR_CANCELLED. A question starts uncancelled: a cancel that
** arrives when no question runs has no effect (a caller that may cancel
** just before asking says it again at the question's first event). The
** same holds for a statement on askdb_agent_db(ag).
*/
ASKDB_API void askdb_agent_cancel(askdb_agent *ag);

/* ---------------------------------------------------------------------- */
/* Threads                                                                */
/* ---------------------------------------------------------------------- */

/*
** What may run at the same time:
**   - different askdb_agent handles on different threads, also when they
**     share one askdb_model (the local model decodes their questions
**     together, see askdb_model), and different askdb_db handles;
**   - askdb_agent_cancel() on any thread, at any time while ag lives, and
**     askdb_db_cancel() and askdb_db_uncancel() while db lives;
**   - askdb_model_new() on several threads (loading is serialised inside);
**   - askdb_memory handles, one per thread (several handles, also in
**     several processes, may share one store file).
** One askdb_agent, askdb_db or askdb_memory handle is used by one thread
** at a time (calls on it do not overlap), and the callbacks of an agent
** run on the thread that asks. askdb_model_free() only after every agent
** made with the model is freed.
*/

/* ---------------------------------------------------------------------- */
/* JSON                                                                   */
/* ---------------------------------------------------------------------- */


/*
** The answer as one JSON object: question, request_id, status, sql,
** columns, rows (values keep their types: integers, reals, text, null,
** blobs as {"blob_hex": ...}; NaN and infinities as strings), row_count,
** truncated (false, "rows" or "bytes"), error, attempts [{sql, error,
** message, llm_ms}], timings, llm_calls, candidates, confidence,
** settled (candidates not needed), answer, not_a_question, tokens
** {prompt, completion}. Text that is not UTF-8 becomes U+FFFD, so the
** document is always valid. *out is the caller's (askdb_free), without a
** final newline.
*/
ASKDB_API ASKDB_NODISCARD askdb_status
askdb_answer_json(const askdb_answer *a, int flags, char **out);

/* One statement's result as a JSON object: sql, columns, rows, row_count,
** truncated, exec_ms; only sql and error when error is not NULL (r is
** then not written and may be NULL; both NULL is ASKDB_ERR_USAGE). *out
** is the caller's (askdb_free). */
ASKDB_API ASKDB_NODISCARD askdb_status
askdb_result_json(const askdb_result *r, const char *sql, const char *error,
                  int flags, char **out);

/* ---------------------------------------------------------------------- */
/* Files askdb writes                                                     */
/* ---------------------------------------------------------------------- */

/*
** NULL when askdb may write to path (a trace, an eval output or report):
** else a static reason. Refused: NULL or "" (no file named), "-" (meant
** as standard output, it would be a file called "-"; "./-" names one),
** an SQLite database, write-ahead log or journal, a DuckDB database, a
** Parquet file (by its first bytes), and a name that is a database's
** companion
** (X-journal, X-wal, X-shm beside a database X, links resolved), whether
** or not it exists yet. Front ends check every path they write.
*/
ASKDB_API const char *askdb_output_refusal(const char *path);

/*
** askdb_output_refusal(path), and also refused when path is the file that
** db (a path given to askdb_db_open(); NULL or a URL checks nothing more)
** names, under any name: a CSV or TSV file asked in place has no first
** bytes to tell it by. The agent checks its trace against its database;
** a front end that writes a file while serving databases checks each.
*/
ASKDB_API const char *askdb_output_refusal_for(const char *path,
                                               const char *db);

/* ---------------------------------------------------------------------- */
/* Questions with a hint                                                  */
/* ---------------------------------------------------------------------- */

/*
** Like askdb_agent_ask(), with a hint the asker knows and the schema does
** not say (BIRD's "evidence", e.g. "rich means balance > 1e6"). The hint
** goes into the first message to the model, after the question; NULL or ""
** is the same as askdb_agent_ask(). Same ownership and statuses; a hint
** that is not valid UTF-8 is refused as such a question is
** (ASKDB_ERR_USAGE naming the first bad byte, counted from 1; nothing
** asked), not changed to fit: a Latin-1 'M\xe9xico' would reach the model
** as 'M\uFFFDxico', a value no table holds. So is one longer than
** ASKDB_MAX_QUESTION characters.
*/
ASKDB_API ASKDB_NODISCARD askdb_status
askdb_agent_ask_hint(askdb_agent *ag, const char *question, const char *hint,
                     askdb_answer **out);

/* ---------------------------------------------------------------------- */
/* Learned pairs (askdb learn)                                            */
/* ---------------------------------------------------------------------- */

/*
** Verified question/SQL pairs per database, put into the prompt as
** examples when a similar question is asked (askdb_config.memory). The
** store is one SQLite file askdb owns (default: memory.sqlite in the
** cache directory, ${ASKDB_CACHE_DIR:-${XDG_CACHE_HOME:-~/.cache}/askdb}),
** never the user's database. Pairs belong to a database's absolute path
** (links resolved), not its content. The same question again (equal after
** folding case and white space) replaces its SQL.
*/
typedef struct askdb_memory askdb_memory;

typedef struct askdb_pair {
    char *question;
    char *sql;
    char *added_at;          /* UTC, "YYYY-MM-DDTHH:MM:SSZ" */
} askdb_pair;

/*
** Open the store at path (NULL = the default). With create, a missing
** store is made by the first pair stored (a refused pair, or an import
** that stores nothing, leaves no file, nor the default store's cache
** directory, made with it); without, a missing store opens as an empty
** one that lists nothing and forgets nothing (and learns nothing:
** ASKDB_ERR_USAGE). Any other SQLite file is refused and left untouched.
** On failure *out may be set for askdb_memory_errmsg(); free it with
** askdb_memory_close(). Returns ASKDB_ERR_USAGE (path "",
** not a store, newer format, a database's companion file), ASKDB_ERR_IO
** (the file or its folder cannot be opened, read or created: a missing
** folder, permissions, a store locked past the busy timeout).
*/
ASKDB_API ASKDB_NODISCARD askdb_status
askdb_memory_open(const char *path, int create, askdb_memory **out);
ASKDB_API void askdb_memory_close(askdb_memory *m);
ASKDB_API const char *askdb_memory_errmsg(const askdb_memory *m);
/* The store's file (borrowed, lives with m). */
ASKDB_API const char *askdb_memory_path(const askdb_memory *m);

/* What askdb_memory_learn() found out about a stored pair. */
typedef struct askdb_learned {
    long nrows;              /* rows of the verifying run, at most db's caps */
    int truncated;           /* as askdb_result's: 1 = the run stopped at
                                max_rows, 2 = at max_bytes (the query has
                                more rows than nrows); 0 = all of them */
    int replaced;            /* 1 when the question was stored already */
} askdb_learned;

/*
** Verify a pair on db, then store it under db's path, the question and
** the SQL without the white space around them (' ', \t, \n, \r, \f,
** \v; the question's inner spaces are kept). Verified: the SQL
** passes the read-only guard (askdb_db_query) and runs without error
** within db's limits; no rows is fine. *out (if not NULL) says how many
** rows it returned and whether the pair replaced one (zeroed on failure).
** Returns ASKDB_OK, ASKDB_ERR_REFUSED (the pair is rejected: the errmsg
** says why), or ASKDB_ERR_IO / ASKDB_ERR_NOMEM (the store failed).
*/
ASKDB_API ASKDB_NODISCARD askdb_status
askdb_memory_learn(askdb_memory *m, askdb_db *db, const char *question,
                   const char *sql, askdb_learned *out);

/* Called for each item of an import that is rejected (line: where it
** starts in the file, from 1; why: borrowed for the call). */
typedef void (*askdb_reject_fn)(void *ud, long line, const char *why);

typedef struct askdb_import_counts {
    long stored, replaced, rejected;
    long skipped;            /* items of another database (Spider db_id) */
} askdb_import_counts;

/*
** Verify and store every pair of a file in one transaction: JSON lines
** {"question": ..., "sql": ...} or a JSON array of such objects (Spider's
** "query" and BIRD's "SQL" are read as "sql"; items whose "db_id" is not
** db's file name without its extension are skipped). A rejected item is
** reported to on_reject (if not NULL) and skipped. ASKDB_OK when the
** file was read (*counts, if not NULL, says what happened);
** ASKDB_ERR_USAGE when it is not valid JSON (an array: found before any
** item is verified) or too large, ASKDB_ERR_IO when it cannot be read or
** the store fails: then nothing of the file is stored.
*/
ASKDB_API ASKDB_NODISCARD askdb_status
askdb_memory_import(askdb_memory *m, askdb_db *db, const char *file,
                    askdb_reject_fn on_reject, void *ud,
                    askdb_import_counts *counts);

/* Every pair of the database at db_path, oldest first. *out (n items) is
** the caller's: askdb_pairs_free(). ASKDB_ERR_DB_OPEN when db_path does
** not resolve, ASKDB_ERR_IO when the store cannot be read. */
ASKDB_API ASKDB_NODISCARD askdb_status
askdb_memory_list(askdb_memory *m, const char *db_path, askdb_pair **out,
                  int *n);
ASKDB_API void askdb_pairs_free(askdb_pair *p, int n);

/* Remove the pair of db_path with this question, or every pair of
** db_path when question is NULL; *removed (if not NULL) gets how many
** (0: none). */
ASKDB_API ASKDB_NODISCARD askdb_status
askdb_memory_forget(askdb_memory *m, const char *db_path,
                    const char *question, long *removed);

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

/* num of den as a rate of the eval (EX, the repair rate) is written in
** the summary, the report and the progress line: "61.5%" (one decimal),
** or "n/a" when den is 0 - nothing scored is no 0%. Into buf, n bytes
** long (8 hold any rate with 0 <= num <= den); returns buf. */
ASKDB_API char *askdb_eval_pct_text(long num, long den, char *buf, size_t n);

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
    int resume;              /* continue out_path, skipping its items
                                but model_error, missing_database and
                                bad_database ones (done again) */
    int keep_distinct;       /* official --keep_distinct (default off) */
    askdb_eval_progress_fn progress;
    void *progress_ud;
    const char *db_url;      /* ask this database instead of the SQLite
                                file, "{db_id}" replaced by the item's
                                db_id (the same data loaded into another
                                engine); the gold SQL still runs on the
                                SQLite file, so every engine is scored
                                against one reference. NULL = the file */
    int warm;                /* before the first question of a database,
                                askdb_agent_warm() (not counted in any
                                question's time): the latency a user of
                                askdb serve or shell sees, whose schema
                                prompt is made ready before they ask */
    const char *report_path; /* the report askdb_eval_write_report() is
                                to write, checked up front (not a database,
                                the suite, out_path or a device, and its
                                folder writable); NULL = none */
} askdb_eval_options;

typedef struct askdb_eval askdb_eval;

/* Defaults: jobs 1, everything else 0/NULL. */
ASKDB_API askdb_eval_options askdb_eval_options_default(void);

/*
** Load the suite, select the items (filter --db, sample, limit), read the
** output file when resuming, and check the model settings. cfg and opt are
** copied, every string of them too: the caller's may be freed once this
** returns (what the callbacks' ud pointers point to must live as long as
** ev). On failure *out may be set so that
** askdb_eval_errmsg() can say why; free it with askdb_eval_free().
** Returns ASKDB_ERR_USAGE (bad options, a model number out of its range
** (askdb_config), unreadable or malformed suite,
** output file exists without resume or is an SQLite file), ASKDB_ERR_IO,
** ASKDB_ERR_NOMEM.
*/
ASKDB_API ASKDB_NODISCARD askdb_status
askdb_eval_new(const askdb_config *cfg, const askdb_eval_options *opt,
               askdb_eval **out);

/*
** Run every selected item not yet done: items resumed from the output
** file and items an earlier call finished are not asked again, so a call
** after one that stopped (interrupted, or the model failed) asks only the
** rest, and one after a call that ran everything asks nothing; each item
** is asked, recorded and counted once. Returns ASKDB_OK when all ran;
** ASKDB_ERR_LLM_UNREACHABLE / ASKDB_ERR_LLM / ASKDB_ERR_UNSUPPORTED /
** ASKDB_ERR_USAGE when the model cannot be used (the run stops; finished
** items are kept), ASKDB_ERR_IO when the output file cannot be written,
** ASKDB_ERR_CANCELLED (askdb_eval_interrupt), ASKDB_ERR_USAGE for an
** eval whose askdb_eval_new() failed (it runs nothing). The summary and
** report cover whatever finished.
*/
ASKDB_API ASKDB_NODISCARD askdb_status askdb_eval_run(askdb_eval *ev);

/* The summary (EX overall, by difficulty and database, latency, tokens,
** repairs, error classes, bad items) as text; *out is the caller's
** (askdb_free). */
ASKDB_API ASKDB_NODISCARD askdb_status askdb_eval_summary(askdb_eval *ev,
                                                          char **out);

/*
** Stop the run after the questions being asked now (safe to call from a
** signal handler or another thread): askdb_eval_run() then returns
** ASKDB_ERR_CANCELLED, and the summary and the report cover the items
** done (the rest count as not run; askdb_eval_run() again, or --resume,
** continues with them). The run that returns takes the interrupt; one
** made while no run goes on stops the next run before its first
** question.
*/
ASKDB_API void askdb_eval_interrupt(askdb_eval *ev);

/* Write the self-contained HTML report (inline CSS and SVG, no network)
** to path, through path.tmp. ASKDB_ERR_USAGE when path is NULL or either
** is refused as report_path is (a database, never written; the suite,
** out_path, a device, a missing folder), ASKDB_ERR_IO when writing
** fails. */
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
