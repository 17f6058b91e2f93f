/* suite.c - read evaluation suites and select the items to run. */
#include "eval/suite.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/buf.h"
#include "core/json.h"
#include "eval/hardness.h"

/* A suite file is read whole; beyond this it is surely not a suite. */
#define SUITE_MAX_BYTES ((size_t)1 << 30)

static char *dup_or_null(const char *s)
{
    return s ? strdup(s) : NULL;
}

/* The folder part of path ("." when none); malloc()ed. */
static char *dir_of(const char *path)
{
    const char *slash = strrchr(path, '/');

    if (!slash)
        return strdup(".");
    if (slash == path)
        return strdup("/");
    return strndup(path, (size_t)(slash - path));
}

/* File name without folders and extension; malloc()ed. */
static char *stem_of(const char *path)
{
    const char *base = strrchr(path, '/');
    const char *dot;

    base = base ? base + 1 : path;
    dot = strrchr(base, '.');
    return strndup(base, dot && dot != base ? (size_t)(dot - base)
                                            : strlen(base));
}

static char *join_path(const char *dir, const char *rel)
{
    struct buf b;

    buf_init(&b, 0);
    if (rel[0] != '/' && dir) {
        buf_puts(&b, dir);
        buf_putc(&b, '/');
    }
    buf_puts(&b, rel);
    return buf_steal(&b);
}

/* Fill item from one entry; returns -1 when out of memory. Missing fields
** make the item malformed, not an error. */
static int fill_item(struct suite_item *it, const json_t *o,
                     const char *db_root, const char *suite_dir,
                     int *need_root, char **given)
{
    const char *db = jsonx_str(o, "db"), *db_id = jsonx_str(o, "db_id");
    const char *gold = jsonx_str(o, "query");
    const char *hint = jsonx_str(o, "evidence");
    const char *diff = jsonx_str(o, "difficulty");
    struct buf b;

    if (!gold)
        gold = jsonx_str(o, "SQL");
    if (!gold)
        gold = jsonx_str(o, "gold");
    if (!hint)
        hint = jsonx_str(o, "hint");
    if (!json_is_object(o)) {
        /* Named like a line that is not JSON: "?" in the summary. */
        it->malformed = "entry is not a JSON object";
        it->db_id = strdup("?");
        it->difficulty = strdup("?");
        return it->db_id && it->difficulty ? 0 : -1;
    }
    it->question = dup_or_null(jsonx_str(o, "question"));
    it->gold = dup_or_null(gold);
    it->hint = hint && *hint ? strdup(hint) : NULL;
    if (db) {
        it->db_path = join_path(db_root ? db_root : suite_dir, db);
        it->db_id = db_id ? strdup(db_id) : stem_of(db);
        if (!db_id) {
            *given = strdup(db);
            if (!*given)
                return -1;
        }
    } else if (db_id) {
        if (!db_root) {
            *need_root = 1;
        } else {
            buf_init(&b, 0);
            buf_printf(&b, "%s/%s/%s.sqlite", db_root, db_id, db_id);
            it->db_path = buf_steal(&b);
        }
        it->db_id = strdup(db_id);
    } else {
        it->db_id = strdup("?");
    }
    if (!it->db_id)
        return -1;
    if (diff && *diff)
        it->difficulty = strdup(diff);
    else if (it->gold)
        it->difficulty = strdup(hardness_classify(it->gold, NULL));
    else
        it->difficulty = strdup("?");
    if (!it->difficulty)
        return -1;
    if (!db && !db_id)
        it->malformed = "entry has no \"db_id\" or \"db\"";
    else if (!it->question)
        it->malformed = "entry has no \"question\"";
    else if (!it->question[strspn(it->question, " \t\n\v\f\r")])
        it->malformed = "entry's \"question\" is blank";
    else if (!it->gold)
        it->malformed = "entry has no gold SQL (\"query\", \"SQL\" or "
                        "\"gold\")";
    return 0;
}

static int grow(struct suite *s, long *cap)
{
    struct suite_item *p;

    if (s->n < *cap)
        return 0;
    *cap = *cap ? *cap * 2 : 256;
    p = realloc(s->items, (size_t)*cap * sizeof *p);
    if (!p)
        return -1;
    s->items = p;
    return 0;
}

/* Read the whole file into a capped buffer; NULL with err on failure. */
static char *slurp(const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    struct buf b;
    char chunk[65536];
    size_t n;
    char *s;

    if (!f) {
        snprintf(err, errlen, "cannot read suite '%s': %s", path,
                 strerror(errno));
        return NULL;
    }
    buf_init(&b, SUITE_MAX_BYTES);
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
        buf_append(&b, chunk, n);
    /* A folder opens and then fails to read (EISDIR): said as such, not
    ** as a suite with no entries; a read that failed midway is no suite
    ** cut short. */
    if (ferror(f)) {
        snprintf(err, errlen, "cannot read suite '%s': %s", path,
                 strerror(errno));
        fclose(f);
        buf_free(&b);
        return NULL;
    }
    fclose(f);
    if (buf_err(&b))
        snprintf(err, errlen, "suite '%s' is too large or memory ran out",
                 path);
    s = buf_steal(&b);
    return s;
}

/* given[] as long as the items' array (cap), new slots NULL. */
static int grow_given(char ***given, long *gcap, long cap)
{
    char **g;

    if (*gcap >= cap)
        return 0;
    g = realloc(*given, (size_t)cap * sizeof *g);
    if (!g)
        return -1;
    memset(g + *gcap, 0, (size_t)(cap - *gcap) * sizeof *g);
    *given = g;
    *gcap = cap;
    return 0;
}

/*
** Items named by their file's stem (given[i] holds the path as the entry
** gave it) whose name another file has too take that path as their name:
** v1/shop.db and v2/shop.db are two databases, not one "shop". -1 when
** out of memory.
*/
static int name_apart(struct suite *s, char **given)
{
    long *first = malloc((size_t)s->n * sizeof *first);
    long *owner = malloc((size_t)s->n * sizeof *owner);
    unsigned char *clash = calloc((size_t)s->n, 1);
    long nd = 0, i, j, k;
    int rc = -1;

    if (!first || !owner || !clash)
        goto out;
    /* The distinct (name, file) pairs, by their first item. */
    for (i = 0; i < s->n; i++) {
        const struct suite_item *it = &s->items[i];
        owner[i] = -1;
        if (!it->db_path || !it->db_id)
            continue;
        for (j = 0; j < nd; j++)
            if (strcmp(s->items[first[j]].db_id, it->db_id) == 0 &&
                strcmp(s->items[first[j]].db_path, it->db_path) == 0)
                break;
        if (j == nd)
            first[nd++] = i;
        owner[i] = j;
    }
    for (j = 0; j < nd; j++)
        for (k = j + 1; k < nd; k++)
            if (strcmp(s->items[first[j]].db_id,
                       s->items[first[k]].db_id) == 0)
                clash[j] = clash[k] = 1;
    for (i = 0; i < s->n; i++) {
        if (!given[i] || owner[i] < 0 || !clash[owner[i]])
            continue;
        free(s->items[i].db_id);
        s->items[i].db_id = given[i];
        given[i] = NULL;
    }
    rc = 0;
out:
    free(first);
    free(owner);
    free(clash);
    return rc;
}

askdb_status suite_load(const char *path, const char *db_root,
                        struct suite *s, char *err, size_t errlen)
{
    char *text = NULL, *dir = NULL, *line, *nl, **given = NULL;
    json_t *root = NULL, *o;
    json_error_t je;
    askdb_status rc = ASKDB_ERR_NOMEM;
    long cap = 0, gcap = 0, lineno = 0, k;
    const char *p;
    char *body;
    int need_root = 0;
    size_t i;

    memset(s, 0, sizeof *s);
    text = slurp(path, err, errlen);
    if (!text)
        return ASKDB_ERR_USAGE;
    /* A UTF-8 byte order mark, which Windows editors and "CSV UTF-8"
    ** exports write first, is no JSON: its first item was a line that is
    ** not JSON, and a whole array every line of it. */
    body = strncmp(text, "\xef\xbb\xbf", 3) == 0 ? text + 3 : text;
    dir = dir_of(path);
    if (!dir)
        goto out;
    for (p = body; *p == ' ' || *p == '\t' || *p == '\r' || *p == '\n';)
        p++;
    if (*p == '[') {
        root = json_loads(body, 0, &je);
        if (!json_is_array(root)) {
            snprintf(err, errlen, "suite '%s' is not valid JSON: %s (line "
                     "%d)", path, je.text, je.line);
            rc = ASKDB_ERR_USAGE;
            goto out;
        }
        json_array_foreach(root, i, o) {
            if (grow(s, &cap) || grow_given(&given, &gcap, cap))
                goto out;
            memset(&s->items[s->n], 0, sizeof *s->items);
            s->items[s->n].index = s->n;
            k = s->n++;
            if (fill_item(&s->items[k], o, db_root, dir, &need_root,
                          &given[k]))
                goto out;
        }
    } else {
        for (line = body; line && *line; line = nl) {
            nl = strchr(line, '\n');
            if (nl)
                *nl++ = '\0';
            lineno++;
            for (p = line; *p == ' ' || *p == '\t' || *p == '\r';)
                p++;
            if (!*p)
                continue;
            if (grow(s, &cap) || grow_given(&given, &gcap, cap))
                goto out;
            memset(&s->items[s->n], 0, sizeof *s->items);
            s->items[s->n].index = s->n;
            s->items[s->n].line = lineno;
            /* Any JSON value: a 42 is an entry that is no object. */
            o = json_loads(line, JSON_DECODE_ANY, &je);
            if (!o) {
                s->items[s->n].db_id = strdup("?");
                s->items[s->n].difficulty = strdup("?");
                s->items[s->n++].malformed = "line is not valid JSON";
                continue;
            }
            k = s->n++;
            if (fill_item(&s->items[k], o, db_root, dir, &need_root,
                          &given[k])) {
                json_decref(o);
                goto out;
            }
            json_decref(o);
        }
    }
    rc = ASKDB_ERR_USAGE;
    if (s->n == 0) {
        snprintf(err, errlen, "suite '%s' has no entries", path);
        goto out;
    }
    if (need_root) {
        snprintf(err, errlen, "suite '%s' names databases by db_id: give "
                 "--db-root DIR (databases are DIR/<db_id>/<db_id>.sqlite)",
                 path);
        goto out;
    }
    rc = ASKDB_ERR_NOMEM;
    if (name_apart(s, given))
        goto out;
    rc = ASKDB_OK;
out:
    if (rc == ASKDB_ERR_NOMEM)
        snprintf(err, errlen, "out of memory reading suite '%s'", path);
    if (rc)
        suite_free(s);
    for (k = 0; k < gcap; k++)
        free(given[k]);
    free(given);
    json_decref(root);
    free(text);
    free(dir);
    return rc;
}


askdb_status suite_load_spider(const char *dir, struct suite *s, char *err,
                               size_t errlen)
{
    char *path, *root;
    askdb_status rc = ASKDB_ERR_NOMEM;

    memset(s, 0, sizeof *s);
    path = join_path(dir, "train.json");
    root = join_path(dir, "database");
    if (path && root)
        rc = suite_load(path, root, s, err, errlen);
    else
        snprintf(err, errlen, "out of memory");
    free(path);
    free(root);
    return rc;
}

void suite_free(struct suite *s)
{
    long i;

    for (i = 0; i < s->n; i++) {
        free(s->items[i].db_id);
        free(s->items[i].db_path);
        free(s->items[i].question);
        free(s->items[i].hint);
        free(s->items[i].gold);
        free(s->items[i].difficulty);
    }
    free(s->items);
    s->items = NULL;
    s->n = 0;
}

int suite_check_tables(const struct suite *s, const char *tables_path,
                       long *unknown, char *err, size_t errlen)
{
    json_error_t je;
    json_t *root = json_load_file(tables_path, 0, &je), *o, *names;
    size_t i;
    long k;

    *unknown = 0;
    if (!json_is_array(root)) {
        struct stat st;
        /* JSON of another shape has no error text; a folder's is a parse
        ** error at its "end", which says nothing of a folder. */
        snprintf(err, errlen, "cannot read tables file '%s': %s",
                 tables_path,
                 stat(tables_path, &st) == 0 && S_ISDIR(st.st_mode)
                     ? "it is a folder"
                 : root ? "it is not a JSON array (Spider's tables.json is "
                          "one)"
                        : je.text);
        json_decref(root);
        return -1;
    }
    names = json_object();
    json_array_foreach(root, i, o) {
        const char *id = jsonx_str(o, "db_id");
        if (id)
            json_object_set_new(names, id, json_true());
    }
    for (k = 0; k < s->n; k++)
        if (!s->items[k].malformed && s->items[k].db_id &&
            !json_object_get(names, s->items[k].db_id))
            (*unknown)++;
    json_decref(names);
    json_decref(root);
    return 0;
}

uint64_t suite_splitmix64(uint64_t *state)
{
    uint64_t z;

    *state += 0x9E3779B97F4A7C15ULL;
    z = *state;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

/* Uniform in [0, m) without modulo bias. */
static uint64_t bounded(uint64_t *state, uint64_t m)
{
    uint64_t threshold = (0 - m) % m, r;

    do {
        r = suite_splitmix64(state);
    } while (r < threshold);
    return r % m;
}

static int cmp_long(const void *a, const void *b)
{
    long x = *(const long *)a, y = *(const long *)b;

    return x < y ? -1 : x > y;
}

int suite_sample(long n, long k, uint64_t seed, long *idx)
{
    long *perm = malloc((size_t)(n ? n : 1) * sizeof *perm), i, j, t;
    uint64_t st = seed;

    if (!perm)
        return -1;
    for (i = 0; i < n; i++)
        perm[i] = i;
    for (i = 0; i < k && i < n; i++) {
        j = i + (long)bounded(&st, (uint64_t)(n - i));
        t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
    memcpy(idx, perm, (size_t)k * sizeof *idx);
    qsort(idx, (size_t)k, sizeof *idx, cmp_long);
    free(perm);
    return 0;
}

/* Whether name is one of the comma-separated names in list. */
int suite_list_next(const char **p, const char **name, size_t *len)
{
    const char *s = *p, *e;

    if (!*s)
        return 0;
    e = s + strcspn(s, ",");
    *p = *e ? e + 1 : e;
    while (s < e && (*s == ' ' || *s == '\t'))
        s++;
    while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
        e--;
    *name = s;
    *len = (size_t)(e - s);
    return 1;
}

static int in_list(const char *list, const char *name)
{
    size_t n = strlen(name), len;
    const char *p = list, *item;

    while (suite_list_next(&p, &item, &len))
        if (len == n && strncmp(item, name, n) == 0)
            return 1;
    return 0;
}

/* Two items of the same database? By name: suite_load() names the
** items of two files of one name by their paths, so a name is one file
** unless an entry gave that db_id to several. */
static int same_db(const struct suite_item *a, const struct suite_item *b)
{
    if (!a->db_id || !b->db_id)
        return a->db_id == b->db_id;
    return strcmp(a->db_id, b->db_id) == 0;
}

/*
** Keep the items of sample_dbs databases drawn at random (0 = all), then
** at most per_db items of each (0 = all), drawn at random too. cand (n
** suite indexes in suite order) is filtered in place; returns the new
** count or -1 when out of memory.
*/
static long pick_groups(const struct suite *s, long *cand, long n,
                        long sample_dbs, long per_db, uint64_t seed)
{
    long *first = malloc((size_t)(n ? n : 1) * sizeof *first);
    long *keep = malloc((size_t)(n ? n : 1) * sizeof *keep);
    long *idx = malloc((size_t)(n ? n : 1) * sizeof *idx);
    long ndb = 0, i, j, k, m, cnt;
    unsigned char *chosen = NULL;

    if (!first || !keep || !idx)
        goto nomem;
    /* The databases in order of first appearance (by their first item). */
    for (i = 0; i < n; i++) {
        for (j = 0; j < ndb; j++)
            if (same_db(&s->items[cand[first[j]]], &s->items[cand[i]]))
                break;
        if (j == ndb)
            first[ndb++] = i;
    }
    chosen = calloc((size_t)(ndb ? ndb : 1), 1);
    if (!chosen)
        goto nomem;
    if (sample_dbs > 0 && sample_dbs < ndb) {
        if (suite_sample(ndb, sample_dbs, seed ^ 0xD1B54A32D192ED03ULL, idx))
            goto nomem;
        for (i = 0; i < sample_dbs; i++)
            chosen[idx[i]] = 1;
    } else {
        memset(chosen, 1, (size_t)ndb);
    }
    m = 0;
    for (j = 0; j < ndb; j++) {
        const struct suite_item *d = &s->items[cand[first[j]]];
        if (!chosen[j])
            continue;
        cnt = 0;
        for (i = 0; i < n; i++)
            if (same_db(&s->items[cand[i]], d))
                idx[cnt++] = cand[i];
        if (per_db > 0 && per_db < cnt) {
            long *pos = malloc((size_t)per_db * sizeof *pos);
            if (!pos || suite_sample(cnt, per_db,
                                     seed + 0x9E3779B97F4A7C15ULL *
                                                (uint64_t)(j + 1),
                                     pos)) {
                free(pos);
                goto nomem;
            }
            for (k = 0; k < per_db; k++)
                keep[m++] = idx[pos[k]];
            free(pos);
        } else {
            for (k = 0; k < cnt; k++)
                keep[m++] = idx[k];
        }
    }
    qsort(keep, (size_t)m, sizeof *keep, cmp_long);
    memcpy(cand, keep, (size_t)m * sizeof *cand);
    free(first);
    free(keep);
    free(idx);
    free(chosen);
    return m;
nomem:
    free(first);
    free(keep);
    free(idx);
    free(chosen);
    return -1;
}

int suite_select(const struct suite *s, const char *dbs, long sample,
                 uint64_t seed, long limit, long **out, long *nout)
{
    struct suite_pick p;

    memset(&p, 0, sizeof p);
    p.dbs = dbs;
    p.sample = sample;
    p.seed = seed;
    p.limit = limit;
    return suite_pick(s, &p, out, nout);
}

int suite_pick(const struct suite *s, const struct suite_pick *p, long **out,
               long *nout)
{
    long *cand = malloc((size_t)(s->n ? s->n : 1) * sizeof *cand);
    long *pos = NULL, n = 0, i, sample = p->sample, limit = p->limit;
    const char *dbs = p->dbs;
    uint64_t seed = p->seed;

    *out = NULL;
    *nout = 0;
    if (!cand)
        return -1;
    for (i = 0; i < s->n; i++)
        if (!dbs || (s->items[i].db_id && in_list(dbs, s->items[i].db_id)))
            cand[n++] = i;
    if (p->sample_dbs > 0 || p->per_db > 0) {
        n = pick_groups(s, cand, n, p->sample_dbs, p->per_db, seed);
        if (n < 0) {
            free(cand);
            return -1;
        }
    }
    if (sample > 0 && sample < n) {
        pos = malloc((size_t)sample * sizeof *pos);
        if (!pos || suite_sample(n, sample, seed, pos)) {
            free(pos);
            free(cand);
            return -1;
        }
        for (i = 0; i < sample; i++)
            pos[i] = cand[pos[i]];
        free(cand);
        cand = pos;
        n = sample;
    }
    if (limit > 0 && limit < n)
        n = limit;
    *out = cand;
    *nout = n;
    return 0;
}
