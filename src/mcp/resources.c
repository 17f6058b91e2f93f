/* resources.c - the MCP resources: each database's schema and its tables. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "resources.h"
#include "tools.h"

#define URI_PREFIX "askdb://"

json_t *mcp_resources_list(struct mcp_server *srv)
{
    json_t *arr = json_array();
    char buf[300];
    int i;

    for (i = 0; i < srv->ndb; i++) {
        const char *name = srv->dbs[i].name;

        snprintf(buf, sizeof buf, URI_PREFIX "%s/schema", name);
        json_array_append_new(arr, json_pack(
            "{s:s,s:s+,s:s,s:s}", "uri", buf, "name", name, " schema",
            "description", "The whole schema as askdb's model reads it: "
            "CREATE TABLE text with keys, row counts and sample values "
            "(of a large schema, the model is given only the tables a "
            "question needs; over 1 MiB, the first tables only, or the "
            "first table's first lines, and a last line that says so).",
            "mimeType", "text/plain"));
    }
    return json_pack("{s:o}", "resources", arr);
}

json_t *mcp_resource_templates(struct mcp_server *srv)
{
    json_t *arr = json_array();
    char buf[300];
    int i;

    for (i = 0; i < srv->ndb; i++) {
        const char *name = srv->dbs[i].name;

        snprintf(buf, sizeof buf, URI_PREFIX "%s/table/{table}", name);
        json_array_append_new(arr, json_pack(
            "{s:s,s:s+,s:s,s:s}", "uriTemplate", buf, "name", name,
            " table", "description", "One table: columns, keys, foreign "
            "keys and row count (JSON; over 1 MiB, the first columns only "
            "and a member \"cut\" that says so).", "mimeType",
            "application/json"));
    }
    return json_pack("{s:o}", "resourceTemplates", arr);
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Percent-decode s into a malloc()ed string; NULL when malformed (or a
** %00) or out of memory. */
static char *pct_decode(const char *s)
{
    char *out = malloc(strlen(s) + 1), *o = out;
    int hi, lo;

    if (!out)
        return NULL;
    for (; *s; s++) {
        if (*s != '%') {
            *o++ = *s;
            continue;
        }
        hi = hexval(s[1]);
        lo = hi < 0 ? -1 : hexval(s[2]);
        if (lo < 0 || (hi == 0 && lo == 0)) {
            free(out);
            return NULL;
        }
        *o++ = (char)(hi * 16 + lo);
        s += 2;
    }
    *o = '\0';
    return out;
}

/* How many of s's first bytes, at most max, end at a character's end:
** for "%.*s", which would cut a UTF-8 sequence in two (and the text
** that holds it would be no UTF-8 at all). */
static int utf8_prefix(const char *s, size_t max)
{
    size_t n = strlen(s), i = n < max ? n : max;

    while (i > 0 && i < n && ((unsigned char)s[i] & 0xC0) == 0x80)
        i--;
    return (int)i;
}

/*
** The schema text as the resource gives it: whole when its text fits in
** MCP_RESULT_CAP (less room for the message around it), else its first
** tables (each ends with a blank line, but the last), as many as fit,
** then a line that says so and where the others are: a database of
** thousands of tables would otherwise make a message of many MiB, which
** clients refuse or cut anywhere. When not even the first table fits (a
** table of thousands of long columns), as much of its text as fits, cut
** at a line's end (or at a character's, when whole lines would keep
** less than half: a line over the cap alone), and a line that says so:
** the first 0 tables would say nothing of it.
** ntables: the schema's count; first: the first table's name. malloc()ed;
** NULL when out of memory.
*/
static char *capped_schema(const char *text, const char *db,
                           size_t ntables, const char *first)
{
    size_t len = strlen(text), budget = MCP_RESULT_CAP - 4096;
    size_t keep = 0, kept = 0, size = 2, line = 0, lines = 0, all = 0;
    size_t line_size = 0;
    size_t i, n;
    char note[600], what[100], others[60] = "", *out;

    if (mcp_json_string_size(text, len) <= budget)
        return strdup(text);
    /* keep: the length of the first tables that fit, up to the '\n' that
    ** ends the last of them; line and lines: the same for the first
    ** table's whole lines; i ends one past the first byte that does not
    ** fit. */
    for (i = 0; i < len && size <= budget; i++) {
        if (i > 0 && text[i - 1] == '\n' && text[i] == '\n') {
            keep = i;
            kept++;
        }
        if (i > 0 && text[i - 1] == '\n' && !kept) {
            line = i;
            line_size = size;
            lines++;
        }
        size += mcp_json_string_size(text + i, 1) - 2;
    }
    if (kept) {
        n = (size_t)snprintf(note, sizeof note, "\n-- cut here: the first "
                             "%zu of %zu tables only, to keep the schema "
                             "under %zu KiB; find the others with the tool "
                             "search_objects, or read one with "
                             "askdb://%s/table/{table}\n", kept, ntables,
                             MCP_RESULT_CAP >> 10, db);
    } else {
        if (line_size >= budget / 2) {
            keep = line;
        } else {
            /* A line over the cap: cut before the character that does
            ** not fit (byte i - 1 is the first that does not). */
            for (keep = i > 1 ? i - 1 : 0; keep > 0; keep--)
                if (((unsigned char)text[keep] & 0xC0) != 0x80)
                    break;
        }
        /* The first table's lines in all. */
        for (i = 0; i < len && !(i > 0 && text[i - 1] == '\n' &&
                                 text[i] == '\n'); i++)
            all += text[i] == '\n';
        if (keep == line)
            snprintf(what, sizeof what, "its first %zu of %zu lines only",
                     lines, all);
        else
            snprintf(what, sizeof what, "its text only up to line %zu of "
                     "%zu, which is cut short", lines + 1, all);
        if (ntables > 1)
            snprintf(others, sizeof others, " (the other %zu tables left "
                     "out)", ntables - 1);
        n = (size_t)snprintf(note, sizeof note, "%s-- cut here: the first "
                             "table, %.*s, is over %zu KiB alone: %s%s; "
                             "read a table as JSON with "
                             "askdb://%s/table/{table}, or find tables and "
                             "columns by name with the tool "
                             "search_objects\n", keep == line ? "" : "\n",
                             utf8_prefix(first ? first : "?", 200),
                             first ? first : "?", MCP_RESULT_CAP >> 10,
                             what, others, db);
    }
    if (n >= sizeof note)
        n = sizeof note - 1;
    out = malloc(keep + n + 1);
    if (!out)
        return NULL;
    memcpy(out, text, keep);
    memcpy(out + keep, note, n);
    out[keep + n] = '\0';
    return out;
}

/*
** Keep as many of arr's first members as fit in *left bytes, each counted
** as it takes in the message (its JSON text as a JSON string, and a
** comma), and drop the others; returns how many stay.
*/
static size_t keep_fitting(json_t *arr, size_t *left)
{
    size_t i, n;
    json_t *v;
    char *t;

    json_array_foreach(arr, i, v) {
        t = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
        n = t ? mcp_json_string_size(t, strlen(t)) - 1 : (size_t)-1;
        free(t);
        if (n > *left)
            break;
        *left -= n;
    }
    while (json_array_size(arr) > i)
        json_array_remove(arr, i);
    return i;
}

/* "the first N of M columns" and the like into buf at *used, when arr
** was cut from total to kept members. */
static void say_cut(char *buf, size_t len, size_t *used, size_t kept,
                    size_t total, const char *what)
{
    if (kept == total || *used >= len)
        return;
    *used += (size_t)snprintf(buf + *used, len - *used, "%s%zu of %zu %s",
                              *used ? ", " : "the first ", kept, total,
                              what);
}

/*
** The table resource's text: t (a table of the schema JSON, taken) with
** the database's name, as compact JSON. Whole when it fits in
** MCP_RESULT_CAP (less room for the message around it), as the schema
** resource is; else its first columns, foreign keys and unique keys, as
** many whole ones as fit in that order, and a member "cut" that says so
** and where the others are: a table of thousands of long column names
** would otherwise make one message of many MiB. malloc()ed; NULL when out
** of memory.
*/
static char *capped_table(json_t *t, const char *db)
{
    static const char *const keys[] = {"columns", "foreign_keys", "unique"};
    static const char *const what[] = {"columns", "foreign keys",
                                       "unique keys"};
    size_t budget = MCP_RESULT_CAP - 4096, left, kept[3], total[3], used = 0;
    json_t *arr[3], *held[3];
    char *text, note[400];
    int i;

    json_object_set_new(t, "database", mcp_str(db));
    text = askdb_json_shorten_reals(json_dumps(t, JSON_COMPACT));
    if (!text || mcp_json_string_size(text, strlen(text)) <= budget) {
        json_decref(t);
        return text;
    }
    free(text);
    /* left: what the members may take beside the table with them empty
    ** and the note (at most its buffer's size). */
    for (i = 0; i < 3; i++) {
        held[i] = json_incref(json_object_get(t, keys[i]));
        total[i] = json_array_size(held[i]);
        json_object_set_new(t, keys[i], json_array());
    }
    text = json_dumps(t, JSON_COMPACT);
    left = text ? mcp_json_string_size(text, strlen(text)) + sizeof note : 0;
    free(text);
    left = left && left < budget ? budget - left : 0;
    for (i = 0; i < 3; i++) {
        arr[i] = held[i] ? held[i] : json_array();
        kept[i] = keep_fitting(arr[i], &left);
        json_object_set_new(t, keys[i], arr[i]);
    }
    note[0] = '\0';
    for (i = 0; i < 3; i++)
        say_cut(note, sizeof note, &used, kept[i], total[i], what[i]);
    if (used < sizeof note)
        snprintf(note + used, sizeof note - used, " only, to keep the table "
                 "under %zu KiB; find the others by name with the tool "
                 "search_objects", MCP_RESULT_CAP >> 10);
    json_object_set_new(t, "cut", json_string(note));
    text = askdb_json_shorten_reals(json_dumps(t, JSON_COMPACT));
    json_decref(t);
    return text;
}

/* The contents array of one resource. */
static json_t *contents(const char *uri, const char *mime, const char *text)
{
    return json_pack("{s:[{s:s,s:s,s:o}]}", "contents", "uri", uri,
                     "mimeType", mime, "text", mcp_str(text));
}

/* mcp_db_schema_lock() for a read: 0 with d->schema_lock held, or -1
** when the read was cancelled while it waited (*code and msg say so). */
static int lock_schema(struct mcp_db *d, mcp_cancelled_fn cancelled,
                       void *ud, int *code, char *msg, size_t msglen)
{
    if (mcp_db_schema_lock(d, cancelled, ud) == ASKDB_OK)
        return 0;
    *code = -32603;
    snprintf(msg, msglen, "cancelled while it waited for the schema of "
             "'%s'", d->name);
    return -1;
}

json_t *mcp_resource_read(struct mcp_server *srv, const char *uri,
                          mcp_schema_fn schema_fn,
                          mcp_cancelled_fn cancelled, void *schema_ud,
                          int *code, char *msg, size_t msglen)
{
    const char *rest, *slash;
    struct mcp_db *d = NULL;
    json_t *schema, *tables, *t, *r = NULL;
    const char *stext;
    char name[80], *text = NULL, *table, why[1024];
    size_t n, i;

    *code = -32002;
    snprintf(msg, msglen, "no resource '%.200s' (resources/list and "
             "resources/templates/list name them)", uri ? uri : "");
    if (!uri || strncmp(uri, URI_PREFIX, strlen(URI_PREFIX)) != 0)
        return NULL;
    rest = uri + strlen(URI_PREFIX);
    slash = strchr(rest, '/');
    n = slash ? (size_t)(slash - rest) : 0;
    if (!slash || n >= sizeof name)
        return NULL;
    memcpy(name, rest, n);
    name[n] = '\0';
    d = mcp_server_find(srv, name);
    if (!d)
        return NULL;
    rest = slash + 1;
    if (strcmp(rest, "schema") == 0) {
        if (lock_schema(d, cancelled, schema_ud, code, msg, msglen))
            return NULL;
        if (mcp_db_schema_text(d, schema_fn, schema_ud, &stext, why,
                               sizeof why) ||
            mcp_db_schema(d, schema_fn, schema_ud, &schema, why, sizeof why)) {
            *code = -32603;
            snprintf(msg, msglen, "cannot read the schema of '%s': %s",
                     d->name, why);
        } else {
            tables = json_object_get(schema, "tables");
            text = capped_schema(stext, d->name, json_array_size(tables),
                                 json_string_value(json_object_get(
                                     json_array_get(tables, 0), "name")));
            if (text)
                r = contents(uri, "text/plain", text);
            free(text);
        }
        pthread_mutex_unlock(&d->schema_lock);
        return r;
    }
    if (strncmp(rest, "table/", 6) != 0)
        return NULL;
    table = pct_decode(rest + 6);
    if (!table)
        return NULL;
    if (lock_schema(d, cancelled, schema_ud, code, msg, msglen)) {
        free(table);
        return NULL;
    }
    if (mcp_db_schema(d, schema_fn, schema_ud, &schema, why, sizeof why)) {
        *code = -32603;
        snprintf(msg, msglen, "cannot read the schema of '%s': %s", d->name,
                 why);
    } else {
        json_array_foreach(json_object_get(schema, "tables"), i, t) {
            const char *tn = json_string_value(json_object_get(t, "name"));

            if (tn && strcmp(tn, table) == 0) {
                text = capped_table(json_deep_copy(t), d->name);
                if (text)
                    r = contents(uri, "application/json", text);
                free(text);
                break;
            }
        }
    }
    pthread_mutex_unlock(&d->schema_lock);
    if (!r && *code == -32002)
        snprintf(msg, msglen, "no table '%.100s' in '%s' (search_objects "
                 "lists the tables)", table, d->name);
    free(table);
    return r;
}
