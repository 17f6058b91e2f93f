/* tools.c - the MCP tools: list_databases, search_objects, execute_sql, ask,
** explain_sql. */
#include <ctype.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools.h"

/*
** Every tool only reads: statements pass askdb's guard (askdb_db_query),
** questions go through the agent, which runs its SQL through the same
** guard. A result carries structuredContent (2025-06-18 on) and the same
** JSON as a text block for older clients; failures, a bad argument
** included, are results with isError and a message that says what to do
** next, so that a model can correct itself (as 2025-11-25 asks of every
** input validation error; only a call that is not one - no name, an
** unknown tool, arguments that are not an object - is a JSON-RPC error).
** The schemas name no $schema: they are JSON Schema 2020-12, 2025-11-25's
** default, and read the same under draft-07.
**
** The definitions are one JSON text, kept short: tools/list is read into
** every conversation of an assistant, and each token there is paid again
** and again. At listing the database property gets the names as an enum
** (and is required when there are several, but for search_objects), and
** execute_sql's {dialect} the SQL dialect of the databases served.
*/
#define STR_(x) #x
#define STR(x) STR_(x)

static const char tool_defs[] =
"["
"{\"name\":\"list_databases\",\"title\":\"List databases\","
"\"description\":\"The databases askdb can query: name, engine, file, "
"number of tables.\","
"\"inputSchema\":{\"type\":\"object\",\"properties\":{}},"
"\"outputSchema\":{\"type\":\"object\",\"properties\":{\"databases\":"
"{\"type\":\"array\",\"items\":{\"type\":\"object\",\"properties\":{"
"\"name\":{\"type\":\"string\"},\"engine\":{\"type\":[\"string\",\"null\"]},"
"\"path\":{\"type\":\"string\"},\"tables\":{\"type\":[\"integer\","
"\"null\"]}},\"required\":[\"name\",\"path\"]}}},"
"\"required\":[\"databases\"]}},"

"{\"name\":\"search_objects\",\"title\":\"Search tables and columns\","
"\"description\":\"Find tables and columns by name. pattern: "
"case-insensitive substring, or a glob with % or * (any run) and _ or ? "
"(one character); empty lists all. detail: names (cheapest), summary "
"(columns with types, row count) or full (keys, foreign keys, sample "
"values).\","
"\"inputSchema\":{\"type\":\"object\",\"properties\":{"
"\"database\":{\"type\":\"string\",\"description\":\"default: all\"},"
"\"pattern\":{\"type\":\"string\"},"
"\"detail\":{\"enum\":[\"names\",\"summary\",\"full\"],"
"\"default\":\"names\"},"
"\"limit\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":500,"
"\"default\":50}}},"
"\"outputSchema\":{\"type\":\"object\",\"properties\":{\"objects\":"
"{\"type\":\"array\",\"items\":{\"type\":\"object\",\"properties\":{"
"\"database\":{\"type\":\"string\"},\"table\":{\"type\":\"string\"}},"
"\"required\":[\"database\",\"table\"]}},\"truncated\":{\"type\":"
"\"boolean\"},\"note\":{\"type\":\"string\"}},"
"\"required\":[\"objects\",\"truncated\"]}},"

"{\"name\":\"execute_sql\",\"title\":\"Run read-only SQL\","
"\"description\":\"Run one read-only SQL statement in {dialect}. Writes and "
"several statements are refused. Rows are capped and the query stops at "
"the time limit.\","
"\"inputSchema\":{\"type\":\"object\",\"properties\":{"
"\"database\":{\"type\":\"string\"},\"sql\":{\"type\":\"string\","
"\"maxLength\":" STR(MCP_MAX_SQL) "},"
"\"max_rows\":{\"type\":\"integer\",\"minimum\":1}},"
"\"required\":[\"sql\"]},"
"\"outputSchema\":{\"$ref\":\"#/$defs/rows\"}},"

"{\"name\":\"ask\",\"title\":\"Ask in plain English\","
"\"description\":\"Answer a question about a database in plain English: "
"askdb's model writes checked read-only SQL, runs it and repairs it. "
"Returns the SQL, rows, confidence and attempts. Slower than "
"execute_sql.\","
"\"inputSchema\":{\"type\":\"object\",\"properties\":{"
"\"database\":{\"type\":\"string\"},\"question\":{\"type\":\"string\","
"\"maxLength\":" STR(ASKDB_MAX_QUESTION) "},"
"\"hint\":{\"type\":\"string\",\"maxLength\":" STR(ASKDB_MAX_QUESTION) ","
"\"description\":\"what you know that the schema does not say\"}},"
"\"required\":[\"question\"]},"
"\"outputSchema\":{\"$ref\":\"#/$defs/rows\"}},"

"{\"name\":\"explain_sql\",\"title\":\"Explain a query plan\","
"\"description\":\"The query plan of one read-only statement, without "
"running it.\","
"\"inputSchema\":{\"type\":\"object\",\"properties\":{"
"\"database\":{\"type\":\"string\"},\"sql\":{\"type\":\"string\","
"\"maxLength\":" STR(MCP_MAX_SQL) "}},"
"\"required\":[\"sql\"]},"
"\"outputSchema\":{\"type\":\"object\",\"properties\":{"
"\"database\":{\"type\":\"string\"},\"sql\":{\"type\":\"string\"},"
"\"plan\":{\"type\":\"array\",\"items\":{\"type\":\"object\"}}},"
"\"required\":[\"database\",\"plan\"]}}"
"]";

/* The output schema execute_sql and ask share (ask adds its own fields);
** put in place of {"$ref":"#/$defs/rows"} at listing. */
static const char rows_schema[] =
"{\"type\":\"object\",\"properties\":{"
"\"database\":{\"type\":\"string\"},\"sql\":{\"type\":[\"string\","
"\"null\"]},\"columns\":{\"type\":\"array\",\"items\":{\"type\":"
"\"string\"}},\"rows\":{\"type\":\"array\",\"items\":{\"type\":"
"\"array\"}},\"row_count\":{\"type\":\"integer\"},\"truncated\":"
"{\"enum\":[false,\"rows\",\"bytes\"]},\"note\":{\"type\":\"string\"}},"
"\"required\":[\"database\",\"sql\",\"columns\",\"rows\",\"row_count\","
"\"truncated\"]}";

const char *const mcp_log_levels[MCP_LOG_NLEVELS] = {
    "debug", "info", "notice", "warning", "error", "critical", "alert",
    "emergency"};

json_t *mcp_str(const char *s)
{
    json_t *j = json_string(s ? s : "");
    char *c, *p;

    if (j || !s)
        return j;
    c = strdup(s);
    if (!c)
        return NULL;
    for (p = c; *p; p++)
        if ((unsigned char)*p >= 0x80)
            *p = '?';
    j = json_string(c);
    free(c);
    return j;
}

const char *mcp_cstr(json_t *v)
{
    const char *s = json_string_value(v);

    return s && strlen(s) == json_string_length(v) ? s : NULL;
}

/* How an engine (askdb_db_engine) is called in a description. */
static const char *engine_title(const char *e)
{
    static const char *const t[][2] = {
        {"sqlite", "SQLite"}, {"duckdb", "DuckDB"},
        {"postgresql", "PostgreSQL"}, {"mariadb", "MySQL/MariaDB"}};
    size_t i;

    for (i = 0; e && i < sizeof t / sizeof t[0]; i++)
        if (strcmp(e, t[i][0]) == 0)
            return t[i][1];
    return e ? e : "SQL";
}

/*
** The dialect execute_sql's statement is written in, for its description:
** "SQLite's dialect" when every database is of one engine, else each
** engine with its databases ("each database's own dialect (SQLite: shop,
** crm; DuckDB: sales)"), so that a model does not write SQLite's SQL for
** a PostgreSQL database. malloc()ed, or NULL.
*/
static char *dialect_text(struct mcp_server *srv)
{
    const char *title, *other;
    char *buf;
    size_t cap = 64, used = 0;
    int i, j, k, mixed = 0;

    for (i = 0; i < srv->ndb; i++)
        cap += strlen(srv->dbs[i].name) + 20;
    buf = malloc(cap);
    if (!buf)
        return NULL;
    title = engine_title(askdb_db_engine(srv->dbs[0].db));
    for (i = 1; i < srv->ndb; i++)
        if (strcmp(engine_title(askdb_db_engine(srv->dbs[i].db)), title))
            mixed = 1;
    if (!mixed) {
        snprintf(buf, cap, "%s's dialect", title);
        return buf;
    }
    used = (size_t)snprintf(buf, cap, "each database's own dialect (");
    for (i = 0; i < srv->ndb; i++) {
        title = engine_title(askdb_db_engine(srv->dbs[i].db));
        for (j = 0; j < i; j++)     /* an engine met before: said then */
            if (!strcmp(engine_title(askdb_db_engine(srv->dbs[j].db)),
                        title))
                break;
        if (j < i)
            continue;
        used += (size_t)snprintf(buf + used, cap - used, "%s%s:",
                                 i ? "; " : "", title);
        for (k = i, j = 0; k < srv->ndb; k++) {
            other = engine_title(askdb_db_engine(srv->dbs[k].db));
            if (strcmp(other, title) == 0)
                used += (size_t)snprintf(buf + used, cap - used, "%s %s",
                                         j++ ? "," : "", srv->dbs[k].name);
        }
    }
    snprintf(buf + used, cap - used, ")");
    return buf;
}

/* text with its first mark replaced by with: malloc()ed, or NULL (no
** mark, with NULL, or out of memory). */
static char *splice(const char *text, const char *mark, const char *with)
{
    const char *at = text && with ? strstr(text, mark) : NULL;
    size_t n;
    char *out;

    if (!at)
        return NULL;
    n = strlen(text) - strlen(mark) + strlen(with) + 1;
    out = malloc(n);
    if (out)
        snprintf(out, n, "%.*s%s%s", (int)(at - text), text, with,
                 at + strlen(mark));
    return out;
}

json_t *mcp_tools_list(struct mcp_server *srv, int version)
{
    json_t *tools = json_loads(tool_defs, 0, NULL), *names, *t, *props;
    char *dialect = dialect_text(srv), *desc;
    const char *name;
    size_t i;
    int k;

    names = json_array();
    for (k = 0; k < srv->ndb; k++)
        json_array_append_new(names, mcp_str(srv->dbs[k].name));
    json_array_foreach(tools, i, t) {
        json_t *os = json_object_get(t, "outputSchema"), *db;

        if (json_object_get(os, "$ref")) {
            os = json_loads(rows_schema, 0, NULL);
            /* ask's own fields beside the rows. */
            if (os && strcmp(json_string_value(json_object_get(t, "name")),
                             "ask") == 0) {
                json_t *more = json_pack("{s:{s:s}, s:{s:s}}", "confidence",
                                         "type", "number", "attempts",
                                         "type", "array");
                json_object_update(json_object_get(os, "properties"), more);
                json_decref(more);
            }
            json_object_set_new(t, "outputSchema", os);
        }
        name = json_string_value(json_object_get(t, "name"));
        if (strcmp(name, "execute_sql") == 0) {
            desc = splice(json_string_value(json_object_get(
                              t, "description")), "{dialect}", dialect);
            if (desc)
                json_object_set_new(t, "description", mcp_str(desc));
            free(desc);
        }
        props = json_object_get(json_object_get(t, "inputSchema"),
                                "properties");
        db = json_object_get(props, "database");
        if (db)
            json_object_set(db, "enum", names);
        /* With several databases a call must name one (search_objects
        ** alone searches them all): the schema says so, rather than
        ** let the call fail. */
        if (db && srv->ndb > 1 && strcmp(name, "search_objects") != 0)
            json_array_append_new(json_object_get(json_object_get(
                t, "inputSchema"), "required"), json_string("database"));
        /* Older revisions have neither output schemas nor titles. */
        if (version < MCP_V2025_06_18) {
            json_object_del(t, "outputSchema");
            json_object_del(t, "title");
        }
        if (version >= MCP_V2025_03_26)
            json_object_set_new(t, "annotations",
                                json_pack("{s:b}", "readOnlyHint", 1));
    }
    json_decref(names);
    free(dialect);
    return json_pack("{s:o}", "tools", tools);
}

/* ---------------------------------------------------------------------- */
/* Results                                                                */
/* ---------------------------------------------------------------------- */

/* A failed call: isError and the message (printf-style). */
#if defined(__GNUC__)
__attribute__((format(printf, 1, 2)))
#endif
static json_t *tool_error(const char *fmt, ...)
{
    char msg[2048];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return json_pack("{s:[{s:s,s:o}],s:b}", "content", "type", "text",
                     "text", mcp_str(msg), "isError", 1);
}

/* A successful call: structuredContent (stolen) and the same JSON as a
** text block, all that a client of an older revision reads (the spec
** asks for both). */
static json_t *tool_ok(struct mcp_call *c, json_t *sc)
{
    char *text = askdb_json_shorten_reals(sc ? json_dumps(sc, JSON_COMPACT)
                                             : NULL);
    json_t *r;

    if (!sc || !text) {
        json_decref(sc);
        free(text);
        return tool_error("out of memory");
    }
    r = json_pack("{s:[{s:s,s:o}],s:b}", "content", "type", "text", "text",
                  mcp_str(text), "isError", 0);
    free(text);
    if (c->version >= MCP_V2025_06_18)
        json_object_set_new(r, "structuredContent", sc);
    else
        json_decref(sc);
    return r;
}

/* Bytes of MCP_RESULT_CAP kept for the note, row_count and envelope. */
#define RESULT_SLACK ((size_t)4096)

size_t mcp_json_string_size(const char *s, size_t n)
{
    size_t size = 2, i;
    unsigned char ch;

    for (i = 0; i < n; i++) {
        ch = (unsigned char)s[i];
        if (ch == '"' || ch == '\\' || ch == '\n' || ch == '\r' ||
            ch == '\t' || ch == '\b' || ch == '\f')
            size += 2;
        else if (ch < 0x20)
            size += 6;   /* \u00XX */
        else
            size += 1;
    }
    return size;
}

/*
** The bytes o (stolen by tool_ok() later) takes in the call's result:
** the text block, its JSON as a string, and structuredContent, the same
** JSON again, from revision 2025-06-18 on. A result near the cap in one
** of them would be twice it in both.
*/
static size_t result_size(const struct mcp_call *c, json_t *o)
{
    char *text = json_dumps(o, JSON_COMPACT);
    size_t n, size;

    if (!text)   /* out of memory: count it as both copies unescaped */
        return json_dumpb(o, NULL, 0, JSON_COMPACT) * 2;
    n = strlen(text);
    size = mcp_json_string_size(text, n);
    free(text);
    return c->version >= MCP_V2025_06_18 ? size + n : size;
}

/*
** Keep at most max rows of o (a rows object; max 0: all) and the result
** it makes under MCP_RESULT_CAP (result_size()), saying so in truncated
** and note. Every cut result
** has a note that says which cap cut it and what to do, the database's
** own caps too (--max-rows: "rows", --max-bytes: "bytes"), so that a
** model reading the rows does not take the first ones for all of them.
*/
static void cap_rows(struct mcp_call *c, json_t *o, long max)
{
    json_t *rows = json_object_get(o, "rows");
    const char *was = json_string_value(json_object_get(o, "truncated"));
    size_t n = json_array_size(rows), size;
    long cap = c->srv->cfg.max_rows > 0 ? c->srv->cfg.max_rows : 1000L;
    size_t bytes = c->srv->cfg.max_bytes > 0 ? c->srv->cfg.max_bytes
                                             : (size_t)4 << 20;
    char note[300];

    note[0] = '\0';
    if (max > 0 && n > (size_t)max) {
        while (json_array_size(rows) > (size_t)max)
            json_array_remove(rows, json_array_size(rows) - 1);
        json_object_set_new(o, "truncated", json_string("rows"));
        was = "rows";
        cap = max;
    }
    /* Room for what comes after the cut (note, row_count) and the
    ** message around the result: the whole response stays under the cap. */
    size = result_size(c, o);
    if (size > MCP_RESULT_CAP - RESULT_SLACK) {
        while (size > MCP_RESULT_CAP - RESULT_SLACK &&
               json_array_size(rows) > 0) {
            n = json_array_size(rows);
            while (json_array_size(rows) > n / 2)
                json_array_remove(rows, json_array_size(rows) - 1);
            size = result_size(c, o);
        }
        json_object_set_new(o, "truncated", json_string("bytes"));
        snprintf(note, sizeof note, "cut to %zu rows to keep the result "
                 "under %zu KiB: select fewer rows or columns",
                 json_array_size(rows), MCP_RESULT_CAP >> 10);
    } else if (was && strcmp(was, "rows") == 0) {
        snprintf(note, sizeof note, "the first %zu rows only: there are "
                 "more, past the row cap of %ld; count them with COUNT(*), "
                 "filter or aggregate, or page with LIMIT and OFFSET",
                 json_array_size(rows), cap);
    } else if (was && strcmp(was, "bytes") == 0) {
        snprintf(note, sizeof note, "cut to %zu rows at the result size "
                 "cap of %zu bytes: select fewer rows or columns",
                 json_array_size(rows), bytes);
    }
    if (note[0])
        json_object_set_new(o, "note", json_string(note));
    json_object_set_new(o, "row_count",
                        json_integer((json_int_t)json_array_size(rows)));
    /* The rows last (jansson keeps the order keys were set in): a reader
    ** of only the start of a long text block (clients cap a tool's
    ** output: Claude Code's MAX_MCP_OUTPUT_TOKENS) still sees row_count,
    ** truncated and the note, which came after the rows. */
    json_incref(rows);
    json_object_del(o, "rows");
    json_object_set_new(o, "rows", rows);
}

/* ---------------------------------------------------------------------- */
/* Arguments                                                              */
/* ---------------------------------------------------------------------- */

/* String argument key of args: 0 and *out (borrowed, NULL when absent), -1
** when it is not a string, -2 when it holds a NUL (nul_error() says so). */
static int arg_str(json_t *args, const char *key, const char **out)
{
    json_t *v = json_object_get(args, key);

    *out = NULL;
    if (!v || json_is_null(v))
        return 0;
    if (!json_is_string(v))
        return -1;
    if (!mcp_cstr(v))
        return -2;
    *out = json_string_value(v);
    return 0;
}

/*
** Whole-number argument v (present) from lo to hi: 0 and *out, or -1. A
** real with no fraction counts: JSON Schema's "integer", which the
** schemas of tools/list say, is any number with a zero fractional part,
** so 3.0 or 2e0 is valid there (a client's float, a model's JSON) and
** must not be refused here.
*/
static int arg_count(json_t *v, long lo, long hi, long *out)
{
    double d;

    if (json_is_integer(v)) {
        if (json_integer_value(v) < lo || json_integer_value(v) > hi)
            return -1;
        *out = (long)json_integer_value(v);
        return 0;
    }
    if (!json_is_real(v))
        return -1;
    /* Under 9e18 before the cast: (double)LONG_MAX rounds up past it. */
    d = json_real_value(v);
    if (!(d >= (double)lo && d <= (double)hi && d < 9e18) ||
        d != (double)(long)d)
        return -1;
    *out = (long)d;
    return 0;
}

/* The error of a string argument that holds a NUL: C reads it only up to
** there, so a statement, question or name with one would be taken for
** another, shorter one. It is refused whole instead. */
static json_t *nul_error(const char *key)
{
    return tool_error("'%s' holds a NUL character (\\u0000): send it "
                      "without one (askdb would read only the text before "
                      "it)", key);
}

/* The names of the databases, comma-separated, into buf. */
static void db_names(struct mcp_server *srv, char *buf, size_t len)
{
    size_t used = 0;
    int i;

    buf[0] = '\0';
    for (i = 0; i < srv->ndb && used < len; i++)
        used += (size_t)snprintf(buf + used, len - used, "%s%s",
                                 i ? ", " : "", srv->dbs[i].name);
}

/* The database the call names: *d, or an error result. The name may be
** left out when there is one database only. */
static json_t *arg_db(struct mcp_call *c, json_t *args, struct mcp_db **d)
{
    const char *name;
    char names[1024];
    int rc;

    *d = NULL;
    rc = arg_str(args, "database", &name);
    if (rc == -2)
        return nul_error("database");
    if (rc)
        return tool_error("'database' must be a string");
    if (!name && c->srv->ndb == 1) {
        *d = &c->srv->dbs[0];
        return NULL;
    }
    db_names(c->srv, names, sizeof names);
    if (!name)
        return tool_error("'database' is needed: one of %s", names);
    *d = mcp_server_find(c->srv, name);
    if (!*d)
        return tool_error("no database '%s': the databases are %s", name,
                          names);
    return NULL;
}

/* text (askdb_result_json's or askdb_answer_json's, askdb_free()d here)
** read back: the object, or NULL and *err an error result. Text values
** may hold NUL ("\u0000"), which jansson reads only when told. */
static json_t *load_json(char *text, json_t **err)
{
    json_error_t jerr;
    json_t *o = json_loads(text, JSON_ALLOW_NUL, &jerr);

    askdb_free(text);
    *err = NULL;
    if (!o)
        *err = tool_error("cannot read the result's JSON back: %s (a bug "
                          "in askdb: please report it)", jerr.text);
    return o;
}

/*
** Make the statement about to run on db (the caller holds its db_lock)
** one that a cancel of the call stops. Returns 0 when the call is
** cancelled already: then run nothing.
*/
static int sql_start(struct mcp_call *c, askdb_db *db)
{
    int ok;

    pthread_mutex_lock(c->lock);
    ok = !*c->cancelled;
    if (ok)
        *c->running_db = db;
    pthread_mutex_unlock(c->lock);
    return ok;
}

/*
** The statement on db has ended, before the caller lets go of db_lock:
** a cancel that came for it is dropped under the session's lock, after
** which no cancel of this call reaches db, so the next statement there
** (another call's) runs.
*/
static void sql_end(struct mcp_call *c, askdb_db *db)
{
    pthread_mutex_lock(c->lock);
    *c->running_db = NULL;
    askdb_db_uncancel(db);
    pthread_mutex_unlock(c->lock);
}

/* What to do after a failed statement, by its status and the kind of
** error (askdb_db_errclass): NULL when the message says it (a refusal
** does) or there is nothing better to say than the database's message. */
static const char *sql_advice(askdb_status st, askdb_error_class ec)
{
    if (ec == ASKDB_EC_DATABASE)   /* a lock, a lost server: not the SQL */
        return NULL;
    if (st == ASKDB_ERR_TIMEOUT)
        return "narrow the query (WHERE, LIMIT, fewer joins) to finish "
               "within the time limit";
    if (ec == ASKDB_EC_UNKNOWN_TABLE || ec == ASKDB_EC_UNKNOWN_COLUMN)
        return "check table and column names with search_objects";
    return NULL;
}

/* mcp_cancelled_fn of a call (ud): whether it was cancelled. */
static int call_cancelled(void *ud)
{
    struct mcp_call *c = ud;
    int yes;

    pthread_mutex_lock(c->lock);
    yes = *c->cancelled;
    pthread_mutex_unlock(c->lock);
    return yes;
}

/* ---------------------------------------------------------------------- */
/* list_databases                                                         */
/* ---------------------------------------------------------------------- */

static json_t *tool_list_databases(struct mcp_call *c)
{
    json_t *arr = json_array(), *schema;
    char err[8];
    int i;

    for (i = 0; i < c->srv->ndb; i++) {
        struct mcp_db *d = &c->srv->dbs[i];
        json_t *o;

        /* The label is the handle's for its life: no db_lock. */
        if (mcp_db_schema_lock(d, call_cancelled, c)) {
            json_decref(arr);
            return tool_error("cancelled");
        }
        if (mcp_db_schema(d, c->schema_fn, c->schema_ud, &schema, err,
                          sizeof err))
            schema = NULL;
        o = json_pack("{s:o,s:o,s:O?,s:o}", "name", mcp_str(d->name),
                      "path",
                      mcp_str(d->db ? askdb_db_label(d->db) : d->path),
                      "engine",
                      json_object_get(schema, "engine"), "tables",
                      schema ? json_integer((json_int_t)json_array_size(
                                   json_object_get(schema, "tables")))
                             : json_null());
        pthread_mutex_unlock(&d->schema_lock);
        json_array_append_new(arr, o);
    }
    return tool_ok(c, json_pack("{s:o}", "databases", arr));
}

/* ---------------------------------------------------------------------- */
/* search_objects                                                         */
/* ---------------------------------------------------------------------- */

/* LIKE-ish glob, whole name, ASCII case folded: % and * any run, _ and ?
** one character. At most strlen(p) x strlen(s) steps, never exponential:
** on a mismatch it goes back only to the last run, which takes one more
** character; what the runs before it matched can stay, since the last
** run can take anything they would have. */
static int glob_match(const char *p, const char *s)
{
    const char *run = NULL, *from = NULL;

    while (*s) {
        if (*p == '%' || *p == '*') {
            run = ++p;       /* the pattern after the run */
            from = s;        /* the run ends here so far */
        } else if (*p && (*p == '_' || *p == '?' ||
                          tolower((unsigned char)*p) ==
                              tolower((unsigned char)*s))) {
            p++;
            s++;
        } else if (run) {
            p = run;
            s = ++from;
        } else {
            return 0;
        }
    }
    while (*p == '%' || *p == '*')
        p++;
    return !*p;
}

static int substr_match(const char *p, const char *s)
{
    size_t n = strlen(p), i;

    for (; *s; s++) {
        for (i = 0; i < n; i++)
            if (tolower((unsigned char)p[i]) != tolower((unsigned char)s[i]))
                break;
        if (i == n)
            return 1;
    }
    return n == 0;
}

static int name_match(const char *pattern, int glob, const char *name)
{
    if (!name)
        return 0;
    return glob ? glob_match(pattern, name) : substr_match(pattern, name);
}

/* "name TYPE" (and " pk") of each column: what summary shows. */
static json_t *column_summary(json_t *cols)
{
    json_t *out = json_array(), *col;
    char buf[512];
    size_t i;

    json_array_foreach(cols, i, col) {
        const char *type =
            json_string_value(json_object_get(col, "type"));

        snprintf(buf, sizeof buf, "%s%s%s%s",
                 json_string_value(json_object_get(col, "name")),
                 type && *type ? " " : "", type ? type : "",
                 json_integer_value(json_object_get(col, "pk")) ? " pk"
                                                                 : "");
        json_array_append_new(out, mcp_str(buf));
    }
    return out;
}

/* One table of a search: by detail, d 0 names, 1 summary, 2 full;
** matched: the columns whose names matched (borrowed) when the table's
** did not. */
static json_t *search_item(const char *db, json_t *t, int detail,
                           json_t *matched)
{
    json_t *o;

    if (detail == 2) {
        o = json_deep_copy(t);
        json_object_set_new(o, "database", mcp_str(db));
        json_object_set(o, "table", json_object_get(t, "name"));
        json_object_del(o, "name");
    } else {
        o = json_pack("{s:o,s:O}", "database", mcp_str(db), "table",
                      json_object_get(t, "name"));
        if (detail == 1) {
            json_object_set(o, "kind", json_object_get(t, "kind"));
            json_object_set(o, "rows", json_object_get(t, "rows"));
            json_object_set_new(o, "columns", column_summary(
                json_object_get(t, "columns")));
        }
    }
    if (matched)
        json_object_set(o, detail ? "matched_columns" : "columns", matched);
    return o;
}

/*
** The bytes item, one of a list, adds to the call's result: its JSON in
** the text block (escaped, as result_size() counts it) and, from
** 2025-06-18 on, in structuredContent, each with its comma. Counted as it
** is added, not by result_size() over the whole list each time.
*/
static size_t item_size(const struct mcp_call *c, json_t *item)
{
    char *text = json_dumps(item, JSON_COMPACT);
    size_t n, size;

    if (!text)   /* out of memory: the whole cap, so the list stops */
        return MCP_RESULT_CAP;
    n = strlen(text);
    size = mcp_json_string_size(text, n) - 2 + 1;
    free(text);
    return c->version >= MCP_V2025_06_18 ? size + n + 1 : size;
}

static json_t *tool_search_objects(struct mcp_call *c, json_t *args)
{
    static const char *const details[] = {"names", "summary", "full"};
    const char *pattern, *detail_s;
    json_t *err, *objects, *schema, *t, *col, *v, *item, *r;
    char why[1024];
    struct mcp_db *only = NULL;
    int detail = 0, glob, truncated = 0, cut = 0, i, rc;
    long limit = 50;
    size_t k, m, used = 0, size;

    if (!json_is_null(json_object_get(args, "database")) &&
        json_object_get(args, "database")) {
        err = arg_db(c, args, &only);
        if (err)
            return err;
    }
    rc = arg_str(args, "pattern", &pattern);
    if (rc == -2)
        return nul_error("pattern");
    if (!rc)
        rc = arg_str(args, "detail", &detail_s);
    if (rc == -2)
        return nul_error("detail");
    if (rc)
        return tool_error("'pattern' and 'detail' must be strings");
    if (!pattern)
        pattern = "";
    if (detail_s) {
        for (detail = 0; detail < 3; detail++)
            if (strcmp(detail_s, details[detail]) == 0)
                break;
        if (detail == 3)
            return tool_error("'detail' is names, summary or full, not '%s'",
                              detail_s);
    }
    v = json_object_get(args, "limit");
    if (v && arg_count(v, 1, 500, &limit))
        return tool_error("'limit' is a whole number from 1 to 500");
    glob = strpbrk(pattern, "%*?") != NULL;
    objects = json_array();
    for (i = 0; i < c->srv->ndb && !truncated; i++) {
        struct mcp_db *d = &c->srv->dbs[i];

        if (only && d != only)
            continue;
        if (mcp_db_schema_lock(d, call_cancelled, c)) {
            json_decref(objects);
            return tool_error("cancelled");
        }
        if (mcp_db_schema(d, c->schema_fn, c->schema_ud, &schema, why,
                          sizeof why)) {
            json_t *e = tool_error("cannot read the schema of '%s': %s",
                                   d->name, why);
            pthread_mutex_unlock(&d->schema_lock);
            json_decref(objects);
            return e;
        }
        json_array_foreach(json_object_get(schema, "tables"), k, t) {
            json_t *matched = NULL;

            if (!name_match(pattern, glob,
                            json_string_value(json_object_get(t, "name")))) {
                matched = json_array();
                json_array_foreach(json_object_get(t, "columns"), m, col)
                    if (name_match(pattern, glob, json_string_value(
                                       json_object_get(col, "name"))))
                        json_array_append(matched,
                                          json_object_get(col, "name"));
                if (json_array_size(matched) == 0) {
                    json_decref(matched);
                    continue;
                }
            }
            if (json_array_size(objects) >= (size_t)limit) {
                json_decref(matched);
                truncated = 1;
                break;
            }
            item = search_item(d->name, t, detail, matched);
            json_decref(matched);
            /* Under the cap of every result, as cap_rows() keeps the
            ** rows: whole objects, as many as fit. */
            size = item_size(c, item);
            if (used + size > MCP_RESULT_CAP - RESULT_SLACK) {
                json_decref(item);
                truncated = cut = 1;
                break;
            }
            used += size;
            json_array_append_new(objects, item);
        }
        pthread_mutex_unlock(&d->schema_lock);
    }
    r = json_pack("{s:o,s:b}", "objects", objects, "truncated", truncated);
    if (r && cut) {
        snprintf(why, sizeof why, "cut to %zu objects to keep the result "
                 "under %zu KiB: narrow the pattern, name the database, or "
                 "ask for less detail (summary, names)",
                 json_array_size(objects), MCP_RESULT_CAP >> 10);
        json_object_set_new(r, "note", json_string(why));
    }
    return tool_ok(c, r);
}

/* ---------------------------------------------------------------------- */
/* execute_sql and explain_sql                                            */
/* ---------------------------------------------------------------------- */

/* Run (or explain) the statement of args on its database: the result's
** JSON object (askdb_result_json) in *out, or an error result. */
/* The characters (code points) of s, valid UTF-8 as jansson keeps it. */
static size_t chars(const char *s)
{
    size_t len = strlen(s), i, k, n = 0;

    for (i = 0; i < len; i += k ? k : 1, n++)
        k = askdb_utf8_len(s + i, len - i);
    return n;
}

static json_t *run_sql(struct mcp_call *c, json_t *args, int explain,
                       struct mcp_db **dp, const char **sqlp, json_t **out)
{
    askdb_result *r = NULL;
    askdb_status st;
    struct mcp_db *d;
    const char *sql, *advice;
    char *text = NULL;
    size_t n;
    json_t *err;
    int rc;

    *out = NULL;
    err = arg_db(c, args, &d);
    if (err)
        return err;
    rc = arg_str(args, "sql", &sql);
    if (rc == -2)
        return nul_error("sql");
    if (rc || !sql || !*sql)
        return tool_error("'sql' is needed: one read-only statement");
    /* The result holds the statement (twice from 2025-06-18 on): one of
    ** megabytes made a result over MCP_RESULT_CAP, cut to no rows with
    ** advice to select fewer of them. */
    if ((n = chars(sql)) > MCP_MAX_SQL)
        return tool_error("'sql' is %zu characters; a statement may have "
                          "at most %d", n, MCP_MAX_SQL);
    pthread_mutex_lock(&d->db_lock);
    if (!sql_start(c, d->db)) {
        pthread_mutex_unlock(&d->db_lock);
        return tool_error("cancelled");
    }
    st = explain ? askdb_db_explain(d->db, sql, &r)
                 : askdb_db_query(d->db, sql, &r);
    sql_end(c, d->db);
    if (st) {
        advice = sql_advice(st, askdb_db_errclass(d->db));
        err = tool_error("%s%s%s%s", askdb_db_errmsg(d->db),
                         advice ? " (" : "", advice ? advice : "",
                         advice ? ")" : "");
        pthread_mutex_unlock(&d->db_lock);
        askdb_result_free(r);
        return err;
    }
    pthread_mutex_unlock(&d->db_lock);
    st = askdb_result_json(r, sql, NULL, 0, &text);
    askdb_result_free(r);
    if (st)
        return tool_error("cannot write the result as JSON: %s",
                          askdb_status_str(st));
    *out = load_json(text, &err);
    if (!*out)
        return err;
    *dp = d;
    *sqlp = sql;
    return NULL;
}

static json_t *tool_execute_sql(struct mcp_call *c, json_t *args)
{
    const char *sql;
    struct mcp_db *d;
    json_t *o, *err, *v;
    long max = 0;

    v = json_object_get(args, "max_rows");
    if (v && arg_count(v, 1, LONG_MAX, &max))
        return tool_error("'max_rows' is a whole number from 1 (the cap is "
                          "%ld)", c->srv->cfg.max_rows > 0
                          ? c->srv->cfg.max_rows : 1000L);
    err = run_sql(c, args, 0, &d, &sql, &o);
    if (err)
        return err;
    json_object_set_new(o, "database", mcp_str(d->name));
    cap_rows(c, o, max);
    return tool_ok(c, o);
}

static json_t *tool_explain_sql(struct mcp_call *c, json_t *args)
{
    json_t *o, *err, *plan, *row, *cols;
    const char *sql;
    struct mcp_db *d;
    size_t i, k;

    err = run_sql(c, args, 1, &d, &sql, &o);
    if (err)
        return err;
    /* Rows to objects keyed by the plan's column names. */
    cols = json_object_get(o, "columns");
    plan = json_array();
    json_array_foreach(json_object_get(o, "rows"), i, row) {
        json_t *p = json_object();

        for (k = 0; k < json_array_size(cols); k++)
            json_object_set(p, json_string_value(json_array_get(cols, k)),
                            json_array_get(row, k));
        json_array_append_new(plan, p);
    }
    json_decref(o);
    o = json_pack("{s:o,s:o,s:o}", "database", mcp_str(d->name), "sql",
                  mcp_str(sql), "plan", plan);
    return tool_ok(c, o);
}

/* ---------------------------------------------------------------------- */
/* ask                                                                    */
/* ---------------------------------------------------------------------- */

/* The level of a step's log message: a failed attempt is a warning (the
** agent repairs it), the answer is info, the steps on the way debug. */
static int step_level(askdb_event_type t)
{
    switch (t) {
    case ASKDB_EVENT_ERROR:
        return MCP_LOG_WARNING;
    case ASKDB_EVENT_ANSWER:
        return MCP_LOG_INFO;
    default:
        return MCP_LOG_DEBUG;
    }
}

static void notify_step(struct mcp_call *c, const askdb_event *ev)
{
    json_t *e = json_loadb(ev->json, ev->json_len, JSON_ALLOW_NUL, NULL);
    const char *s;
    char msg[300];
    int level = step_level(ev->type);

    switch (ev->type) {
    case ASKDB_EVENT_PROMPT:
        snprintf(msg, sizeof msg, "prompt: attempt %d",
                 (int)json_integer_value(json_object_get(e, "attempt")));
        break;
    case ASKDB_EVENT_REPLY:
        if (json_is_integer(json_object_get(e, "candidate")))
            snprintf(msg, sizeof msg, "reply: candidate %d, %.0f ms",
                     (int)json_integer_value(json_object_get(e, "candidate")),
                     json_number_value(json_object_get(e, "ms")));
        else
            snprintf(msg, sizeof msg, "reply: %.0f ms",
                     json_number_value(json_object_get(e, "ms")));
        break;
    case ASKDB_EVENT_EXECUTE:
        snprintf(msg, sizeof msg, "execute: %d rows",
                 (int)json_integer_value(json_object_get(e, "rows")));
        break;
    case ASKDB_EVENT_ERROR:
        s = json_string_value(json_object_get(e, "message"));
        snprintf(msg, sizeof msg, "error: %s: %.200s",
                 json_string_value(json_object_get(e, "class")),
                 s ? s : "");
        break;
    case ASKDB_EVENT_ANSWER:
        s = json_string_value(json_object_get(e, "status"));
        snprintf(msg, sizeof msg, "answer: %s", s ? s : "");
        break;
    default:
        snprintf(msg, sizeof msg, "%s", ev->name);
        break;
    }
    json_decref(e);
    if (c->progress_token) {
        c->progress += 1;
        c->notify(c->ud, "notifications/progress",
                  json_pack("{s:O,s:f,s:o}", "progressToken",
                            c->progress_token, "progress", c->progress,
                            "message", mcp_str(msg)));
    }
    if (c->log_level >= 0 && level >= c->log_level)
        c->notify(c->ud, "notifications/message",
                  json_pack("{s:s,s:s,s:{s:s,s:o}}", "level",
                            mcp_log_levels[level], "logger", "askdb",
                            "data", "step", ev->name, "message",
                            mcp_str(msg)));
}

/*
** askdb_config.event_fn through the database (server.c). A cancel that
** came between tool_ask()'s look at the flag and the question's start
** was wiped by askdb_agent_ask_opts(), which starts afresh: say it again
** at the question's first event, as serve's on_event() does.
*/
static void on_step(void *ud, const askdb_event *ev)
{
    struct mcp_call *c = ud;

    if (ev->type == ASKDB_EVENT_QUESTION) {
        pthread_mutex_lock(c->lock);
        if (*c->running && *c->cancelled)
            askdb_agent_cancel(*c->running);
        pthread_mutex_unlock(c->lock);
    }
    notify_step(ud, ev);
}

/* The answer as the ask tool's result: the rows object plus question,
** confidence, attempts and the plain-English answer. */
static json_t *answer_result(struct mcp_call *c, struct mcp_db *d,
                             const askdb_answer *a)
{
    static const char *const keep[] = {
        "question", "sql", "columns", "rows", "row_count", "truncated",
        "confidence", "candidates", "settled", "attempts", "answer",
        "not_a_question"};
    json_t *all, *o, *v, *att, *err;
    askdb_status st;
    char *text = NULL;
    size_t i;

    st = askdb_answer_json(a, 0, &text);
    if (st)
        return tool_error("cannot write the answer as JSON: %s",
                          askdb_status_str(st));
    all = load_json(text, &err);
    if (!all)
        return err;
    o = json_object();
    json_object_set_new(o, "database", mcp_str(d->name));
    for (i = 0; i < sizeof keep / sizeof keep[0]; i++) {
        v = json_object_get(all, keep[i]);
        if (v)
            json_object_set(o, keep[i], v);
    }
    /* The attempts without their timings: what failed and why. */
    json_array_foreach(json_object_get(o, "attempts"), i, att)
        json_object_del(att, "llm_ms");
    if (!json_is_array(json_object_get(o, "columns")))
        json_object_set_new(o, "columns", json_array());
    if (!json_is_array(json_object_get(o, "rows")))
        json_object_set_new(o, "rows", json_array());
    if (!json_object_get(o, "sql"))
        json_object_set_new(o, "sql", json_null());
    if (!json_object_get(o, "truncated"))
        json_object_set_new(o, "truncated", json_false());
    json_decref(all);
    cap_rows(c, o, 0);
    return tool_ok(c, o);
}

/*
** The ask call's agent opens its database (askdb_open_fn): a cancel of
** the call reaches the open (*running) from now on, at once when it came
** before or the server stops (an open to a server that takes the
** connection and answers nothing waits for its connect timeout).
*/
static void ask_opening(void *ud, askdb_agent *ag, askdb_db *db)
{
    struct mcp_call *c = ud;

    (void)db;
    pthread_mutex_lock(c->lock);
    *c->running = ag;
    *c->opening = ag != NULL;
    if (ag && (*c->cancelled || atomic_load(&c->srv->stopping)))
        askdb_agent_cancel(ag);
    pthread_mutex_unlock(c->lock);
}

static json_t *tool_ask(struct mcp_call *c, json_t *args)
{
    askdb_ask_options opts;
    askdb_answer *a = NULL;
    askdb_agent *ag;
    askdb_status st;
    const char *question, *hint;
    struct mcp_db *d;
    json_t *r;
    char err[1024];
    int cancelled, rc;

    r = arg_db(c, args, &d);
    if (r)
        return r;
    rc = arg_str(args, "question", &question);
    if (rc == -2)
        return nul_error("question");
    if (rc || !question || !question[strspn(question, " \t\n\v\f\r")])
        return tool_error("'question' is needed: a question in plain "
                          "English");
    rc = arg_str(args, "hint", &hint);
    if (rc == -2)
        return nul_error("hint");
    if (rc)
        return tool_error("'hint' must be a string");
    pthread_mutex_lock(&d->agent_lock);
    st = mcp_db_agent(c->srv, d, ask_opening, c, &ag, err, sizeof err);
    if (st == ASKDB_ERR_CANCELLED) {
        pthread_mutex_unlock(&d->agent_lock);
        if (atomic_load(&c->srv->stopping))
            return tool_error("the server stopped while the database was "
                              "being opened; ask again once it runs");
        return tool_error("cancelled");
    }
    if (st) {
        pthread_mutex_unlock(&d->agent_lock);
        return tool_error("the model cannot be used: %s (check the model "
                          "options %s was started with: --llm-url, "
                          "--model, --api-key or ASKDB_*)", err,
                          c->srv->command);
    }
    pthread_mutex_lock(c->lock);
    cancelled = *c->cancelled;
    if (!cancelled)
        *c->running = ag;
    pthread_mutex_unlock(c->lock);
    if (cancelled) {
        pthread_mutex_unlock(&d->agent_lock);
        return tool_error("cancelled");
    }
    memset(&opts, 0, sizeof opts);
    opts.hint = hint;
    d->step_fn = on_step;
    d->step_ud = c;
    st = askdb_agent_ask_opts(ag, question, &opts, &a);
    d->step_fn = NULL;
    d->step_ud = NULL;
    pthread_mutex_lock(c->lock);
    *c->running = NULL;
    pthread_mutex_unlock(c->lock);
    if (!a)
        r = tool_error("out of memory");
    else if (st == ASKDB_ERR_CANCELLED)
        r = tool_error("cancelled");
    else if (st == ASKDB_ERR_USAGE)
        /* Nothing was asked (a question not UTF-8 or over
        ** ASKDB_MAX_QUESTION): no attempts to count. */
        r = tool_error("%s", a->error ? a->error : askdb_status_str(st));
    else if (st == ASKDB_ERR_LLM || st == ASKDB_ERR_LLM_UNREACHABLE ||
             st == ASKDB_ERR_UNSUPPORTED)
        r = tool_error("the model failed: %s (check the model options "
                       "%s was started with: --llm-url, --model, "
                       "--api-key or ASKDB_*; execute_sql still works)",
                       a->error ? a->error : "", c->srv->command);
    else if (st)
        r = tool_error("no answer after %d attempts: %s (rephrase the "
                       "question, give a hint, or write the SQL with "
                       "search_objects and execute_sql)", a->nattempts,
                       a->error ? a->error : askdb_status_str(st));
    else
        r = answer_result(c, d, a);
    askdb_answer_free(a);
    pthread_mutex_unlock(&d->agent_lock);
    return r;
}

/* ---------------------------------------------------------------------- */

int mcp_tool_known(const char *name)
{
    static const char *const names[] = {"list_databases", "search_objects",
                                        "execute_sql", "ask", "explain_sql"};
    size_t i;

    for (i = 0; name && i < sizeof names / sizeof names[0]; i++)
        if (strcmp(name, names[i]) == 0)
            return 1;
    return 0;
}

json_t *mcp_tool_call(struct mcp_call *c, const char *name, json_t *args,
                      int *code, char *msg, size_t msglen)
{
    json_t *r;

    if (!name) {
        *code = -32602;
        snprintf(msg, msglen, "tools/call needs params.name");
        return NULL;
    }
    if (strcmp(name, "list_databases") == 0)
        r = tool_list_databases(c);
    else if (strcmp(name, "search_objects") == 0)
        r = tool_search_objects(c, args);
    else if (strcmp(name, "execute_sql") == 0)
        r = tool_execute_sql(c, args);
    else if (strcmp(name, "ask") == 0)
        r = tool_ask(c, args);
    else if (strcmp(name, "explain_sql") == 0)
        r = tool_explain_sql(c, args);
    else {
        *code = -32602;
        snprintf(msg, msglen, "unknown tool '%.100s': the tools are "
                 "list_databases, search_objects, execute_sql, ask, "
                 "explain_sql", name);
        return NULL;
    }
    if (!r) {
        *code = -32603;
        snprintf(msg, msglen, "out of memory");
    }
    return r;
}
