/* gen_tables.c - generate a large, deterministic SQLite database for the
** schema-extraction benchmark.
**
**   gen_tables PATH [--tables N] [--rows N] [--seed N]
**
** Defaults: 2,000 tables of 20 rows, seed 20240601. Each table has an
** INTEGER PRIMARY KEY "id" and 5 to 11 more columns of mixed types (TEXT,
** REAL, INTEGER, DATE), among them up to two foreign keys to earlier tables;
** about one table in four has a unique index on a "code" column. Text
** values are short names, cities, statuses, e-mail addresses and codes, so
** that the schema carries sample values as it would on a real database.
** The same arguments always give the same database. An existing PATH is
** never overwritten.
*/
#define _POSIX_C_SOURCE 200809L

#include <sqlite3.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static uint64_t rng_state;

/* splitmix64: small, fast and the same everywhere. */
static uint64_t rng(void)
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);

    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static int rnd(int n)
{
    return (int)(rng() % (uint64_t)n);
}

#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

static const char *const areas[] = {
    "sales", "hr", "finance", "ops", "crm", "inventory", "logistics",
    "marketing", "support", "billing", "legal", "research", "fleet",
    "clinic", "school", "library", "travel", "energy", "media", "retail"
};
static const char *const nouns[] = {
    "customer", "order", "invoice", "product", "supplier", "shipment",
    "warehouse", "employee", "department", "project", "task", "ticket",
    "account", "payment", "region", "store", "campaign", "contract",
    "asset", "vehicle", "route", "patient", "visit", "course", "student",
    "book", "loan", "flight", "booking", "meter", "reading", "article",
    "review", "category", "team", "event", "venue", "device", "license",
    "budget"
};

enum kind { K_TEXT_NAME, K_TEXT_CITY, K_TEXT_STATUS, K_TEXT_EMAIL,
            K_TEXT_TITLE, K_TEXT_NOTE, K_TEXT_CODE, K_REAL, K_INT, K_DATE };

struct colspec {
    const char *name;
    const char *type;
    enum kind kind;
};

/* "code" must stay first: tables with a unique index force it in. */
static const struct colspec pool[] = {
    {"code", "TEXT", K_TEXT_CODE},
    {"name", "TEXT", K_TEXT_NAME},
    {"title", "VARCHAR(80)", K_TEXT_TITLE},
    {"status", "TEXT", K_TEXT_STATUS},
    {"email", "TEXT", K_TEXT_EMAIL},
    {"city", "TEXT", K_TEXT_CITY},
    {"country", "TEXT", K_TEXT_CITY},
    {"category", "TEXT", K_TEXT_STATUS},
    {"description", "TEXT", K_TEXT_NOTE},
    {"notes", "TEXT", K_TEXT_NOTE},
    {"contact_name", "TEXT", K_TEXT_NAME},
    {"amount", "REAL", K_REAL},
    {"price", "NUMERIC(10,2)", K_REAL},
    {"weight", "REAL", K_REAL},
    {"score", "REAL", K_REAL},
    {"balance", "DECIMAL(12,2)", K_REAL},
    {"quantity", "INTEGER", K_INT},
    {"year", "INTEGER", K_INT},
    {"rank", "INT", K_INT},
    {"level", "SMALLINT", K_INT},
    {"created_on", "DATE", K_DATE},
    {"updated_on", "DATETIME", K_DATE},
    {"due_date", "DATE", K_DATE},
    {"start_date", "DATE", K_DATE},
};

static const char *const first_names[] = {
    "Alice", "Bruno", "Chen", "Dana", "Emeka", "Fatima", "Georg", "Hana",
    "Ivan", "Julia", "Kofi", "Lena", "Mateo", "Nora", "Omar", "Priya",
    "Quinn", "Rosa", "Sven", "Tara"
};
static const char *const last_names[] = {
    "Smith", "Garcia", "Wang", "Muller", "Okafor", "Rossi", "Kim",
    "Novak", "Silva", "Dubois", "Jensen", "Kowalski", "Haddad", "Sato"
};
static const char *const cities[] = {
    "Lisbon", "Nairobi", "Osaka", "Toronto", "Lyon", "Austin", "Krakow",
    "Porto Alegre", "Melbourne", "Seoul", "Cairo", "Oslo", "Denver"
};
static const char *const statuses[] = {
    "active", "closed", "pending", "archived", "on hold", "new", "shipped",
    "cancelled"
};
static const char *const title_words[] = {
    "Annual", "Quarterly", "Northern", "Premium", "Basic", "Global",
    "Local", "Summer", "Winter", "Express", "Standard", "Special"
};

struct table {
    char name[64];
    int ncols;
    const struct colspec *cols[16];
    int fk_to[2];            /* index of the referenced table, -1 = none */
    int unique_code;
};

static int fail(sqlite3 *db, const char *what)
{
    fprintf(stderr, "gen_tables: %s: %s\n", what,
            db ? sqlite3_errmsg(db) : "cannot open");
    return 1;
}

static int exec(sqlite3 *db, const char *sql)
{
    char *err = NULL;

    if (sqlite3_exec(db, sql, NULL, NULL, &err) != SQLITE_OK) {
        fprintf(stderr, "gen_tables: %s\n  in: %.200s\n", err, sql);
        sqlite3_free(err);
        return 1;
    }
    return 0;
}

/* Bind one generated value of the given kind for row r of table t. */
static void bind_value(sqlite3_stmt *st, int i, enum kind k, int t, int r)
{
    char v[96];

    switch (k) {
    case K_TEXT_NAME:
        snprintf(v, sizeof v, "%s %s", first_names[rnd(COUNT(first_names))],
                 last_names[rnd(COUNT(last_names))]);
        break;
    case K_TEXT_CITY:
        snprintf(v, sizeof v, "%s", cities[rnd(COUNT(cities))]);
        break;
    case K_TEXT_STATUS:
        snprintf(v, sizeof v, "%s", statuses[rnd(COUNT(statuses))]);
        break;
    case K_TEXT_EMAIL:
        snprintf(v, sizeof v, "%c.%s%d@example.org",
                 first_names[rnd(COUNT(first_names))][0] + 32,
                 last_names[rnd(COUNT(last_names))], rnd(100));
        break;
    case K_TEXT_TITLE:
        snprintf(v, sizeof v, "%s %s %s",
                 title_words[rnd(COUNT(title_words))],
                 nouns[rnd(COUNT(nouns))], areas[rnd(COUNT(areas))]);
        break;
    case K_TEXT_NOTE:
        /* Sometimes long (over the 40-byte sample limit), sometimes NULL. */
        if (rnd(5) == 0) {
            sqlite3_bind_null(st, i);
            return;
        }
        snprintf(v, sizeof v, "%s %s for %s %s in %s, see file %d",
                 title_words[rnd(COUNT(title_words))],
                 nouns[rnd(COUNT(nouns))],
                 first_names[rnd(COUNT(first_names))],
                 last_names[rnd(COUNT(last_names))],
                 cities[rnd(COUNT(cities))], rnd(10000));
        break;
    case K_TEXT_CODE:
        snprintf(v, sizeof v, "%c%c-%04d-%02d", 'A' + rnd(26), 'A' + rnd(26),
                 t + 1, r + 1);
        break;
    case K_REAL:
        sqlite3_bind_double(st, i, (double)rnd(1000000) / 100.0);
        return;
    case K_INT:
        sqlite3_bind_int(st, i, rnd(2000));
        return;
    case K_DATE:
        snprintf(v, sizeof v, "%04d-%02d-%02d", 2015 + rnd(10), 1 + rnd(12),
                 1 + rnd(28));
        break;
    }
    sqlite3_bind_text(st, i, v, -1, SQLITE_TRANSIENT);
}

int main(int argc, char **argv)
{
    const char *path = NULL;
    long ntables = 2000, nrows = 20;
    uint64_t seed = 20240601;
    struct table *tabs;
    sqlite3 *db = NULL;
    char sql[4096];
    int fd, a, t, c, r;

    for (a = 1; a < argc; a++) {
        if (strcmp(argv[a], "--tables") == 0 && a + 1 < argc)
            ntables = strtol(argv[++a], NULL, 10);
        else if (strcmp(argv[a], "--rows") == 0 && a + 1 < argc)
            nrows = strtol(argv[++a], NULL, 10);
        else if (strcmp(argv[a], "--seed") == 0 && a + 1 < argc)
            seed = strtoull(argv[++a], NULL, 10);
        else if (argv[a][0] != '-' && !path)
            path = argv[a];
        else
            path = NULL, a = argc;
    }
    if (!path || ntables < 1 || ntables > 100000 || nrows < 0) {
        fprintf(stderr, "usage: gen_tables PATH [--tables N (2000)] "
                        "[--rows N (20)] [--seed N]\n");
        return 2;
    }
    /* Create the file ourselves so that an existing one is never touched. */
    fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);
    if (fd < 0) {
        fprintf(stderr, "gen_tables: %s: %s%s\n", path, strerror(errno),
                errno == EEXIST ? " (refusing to overwrite it)" : "");
        return 1;
    }
    close(fd);
    rng_state = seed;

    tabs = calloc((size_t)ntables, sizeof *tabs);
    if (!tabs)
        return fail(NULL, "out of memory");
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK)
        return fail(db, path);
    if (exec(db, "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; "
                 "BEGIN"))
        return 1;

    for (t = 0; t < ntables; t++) {
        struct table *tb = &tabs[t];
        int used[COUNT(pool)] = {0}, nextra = 5 + rnd(7), nfk = 0, k, n;

        snprintf(tb->name, sizeof tb->name, "%s_%s_%04d",
                 areas[rnd(COUNT(areas))], nouns[rnd(COUNT(nouns))], t + 1);
        tb->fk_to[0] = tb->fk_to[1] = -1;
        if (t > 0) {
            nfk = rnd(3);          /* 0, 1 or 2 foreign keys */
            for (k = 0; k < nfk; k++)
                tb->fk_to[k] = rnd(t);
            if (nfk == 2 && tb->fk_to[0] == tb->fk_to[1])
                nfk = 1, tb->fk_to[1] = -1;
        }
        tb->unique_code = rnd(4) == 0;
        if (tb->unique_code) {
            used[0] = 1;
            tb->cols[tb->ncols++] = &pool[0];
        }
        /* The other plain columns: distinct picks from the pool. */
        for (n = tb->ncols + nfk; n < nextra; n++) {
            do
                k = rnd(COUNT(pool));
            while (used[k]);
            used[k] = 1;
            tb->cols[tb->ncols++] = &pool[k];
        }

        n = snprintf(sql, sizeof sql, "CREATE TABLE %s (\n  id INTEGER "
                                      "PRIMARY KEY", tb->name);
        for (k = 0; k < nfk; k++)
            n += snprintf(sql + n, sizeof sql - (size_t)n,
                          ",\n  %s_id INTEGER NOT NULL REFERENCES %s(id)",
                          tabs[tb->fk_to[k]].name, tabs[tb->fk_to[k]].name);
        for (c = 0; c < tb->ncols; c++)
            n += snprintf(sql + n, sizeof sql - (size_t)n, ",\n  %s %s%s",
                          tb->cols[c]->name, tb->cols[c]->type,
                          tb->cols[c]->kind == K_TEXT_NAME ? " NOT NULL" : "");
        snprintf(sql + n, sizeof sql - (size_t)n, "\n)");
        if (exec(db, sql))
            return 1;
        if (tb->unique_code) {
            snprintf(sql, sizeof sql, "CREATE UNIQUE INDEX ux_%s_code ON "
                                      "%s(code)", tb->name, tb->name);
            if (exec(db, sql))
                return 1;
        }

        /* Rows. Foreign key values point at rows of the earlier table. */
        {
            sqlite3_stmt *st = NULL;
            int ncols = 1 + nfk + tb->ncols;
            n = snprintf(sql, sizeof sql, "INSERT INTO %s VALUES (?",
                         tb->name);
            for (c = 1; c < ncols; c++)
                n += snprintf(sql + n, sizeof sql - (size_t)n, ", ?");
            snprintf(sql + n, sizeof sql - (size_t)n, ")");
            if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
                return fail(db, sql);
            for (r = 0; r < nrows; r++) {
                int i = 1;
                sqlite3_bind_int(st, i++, r + 1);
                for (k = 0; k < nfk; k++)
                    sqlite3_bind_int(st, i++,
                                     1 + rnd(nrows > 0 ? (int)nrows : 1));
                for (c = 0; c < tb->ncols; c++)
                    bind_value(st, i++, tb->cols[c]->kind, t, r);
                if (sqlite3_step(st) != SQLITE_DONE)
                    return fail(db, "insert");
                sqlite3_reset(st);
            }
            sqlite3_finalize(st);
        }
    }
    if (exec(db, "COMMIT"))
        return 1;
    if (sqlite3_close(db) != SQLITE_OK)
        return fail(db, "close");
    free(tabs);
    printf("gen_tables: %s: %ld tables of %ld rows (seed %" PRIu64 ")\n",
           path, ntables, nrows, seed);
    return 0;
}
