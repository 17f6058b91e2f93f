#!/usr/bin/env python3
"""load_postgres.py - copy an SQLite database into a PostgreSQL database.

    scripts/load_postgres.py --dsn URL --sqlite FILE --db NAME
        [--schema NAME] [--replace] [--keep-case] [--no-analyze] [--quiet]
        [--grant ROLE]

--dsn is a libpq URL of the server with a role that may create databases
(postgresql://postgres@127.0.0.1:5432/postgres); its database part is
only where the script connects first. The database NAME is created when
it does not exist (--replace drops it first); the tables go into --schema
(default public, created when missing). Everything goes through psql:
the tables, then the data with COPY FROM STDIN, then the keys.

SQLite is forgiving and PostgreSQL is not, so the copy is forgiving in
turn (Spider's databases have messy types and dangling foreign keys):
  - identifiers are folded to lower case (unless --keep-case), so that
    SQL written for SQLite finds them unquoted in any case; two columns
    that would fold to the same name keep their own spelling;
  - a column's type comes from its declared type and what it holds: INT
    types holding only integers become bigint, REAL/FLOAT/DOUBLE/NUMERIC/
    DECIMAL holding only numbers become numeric (exact decimals, and
    round(x, 2) works as in SQLite), DATE/DATETIME/TIMESTAMP holding only
    ISO text become date/timestamp, BLOB or bytes become bytea; anything
    else, and any column with mixed values, is text;
  - text that is not valid UTF-8 is decoded with replacement characters,
    NUL characters (which PostgreSQL text cannot hold) are dropped;
  - NOT NULL is kept where the data has no NULL; defaults and CHECK
    constraints are not copied (their SQL is SQLite's);
  - primary keys, unique indexes and foreign keys are added after the data,
    each on its own: one the data breaks (duplicates, dangling references,
    a reference to columns without a key) is skipped with a warning on
    stderr, and so is a view whose SQL PostgreSQL does not accept;
  - a column's trailing "-- comment" in the CREATE TABLE text becomes
    COMMENT ON COLUMN.
At the end the tables are ANALYZEd (--no-analyze leaves the statistics
empty), and --grant ROLE (an existing role, e.g. askdb's read-only one)
gets USAGE on the schema and SELECT on its tables. Exit status 0 when the tables and data are in (skipped keys and
views are warnings), 1 otherwise.
"""
import argparse
import datetime
import math
import re
import sqlite3
import subprocess
import sys
import urllib.parse

INT_RE = re.compile(r"INT", re.I)
REAL_RE = re.compile(r"REAL|FLOA|DOUB|NUMERIC|DECIMAL|NUMBER", re.I)
DATE_RE = re.compile(r"^\s*DATE\s*$", re.I)
TS_RE = re.compile(r"DATETIME|TIMESTAMP", re.I)
BLOB_RE = re.compile(r"BLOB|BINARY", re.I)
ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
ISO_TS = re.compile(r"^\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}(:\d{2}(\.\d+)?)?$")
INT64 = (-(1 << 63), (1 << 63) - 1)


def qi(name):
    """An identifier, always quoted."""
    return '"' + name.replace('"', '""') + '"'


def ql(text):
    """A string literal."""
    return "'" + text.replace("'", "''") + "'"


def db_url(dsn, name):
    """dsn with its database (the URL's path) replaced by name."""
    u = urllib.parse.urlsplit(dsn)
    if u.scheme not in ("postgresql", "postgres"):
        sys.exit("load_postgres: --dsn must be a postgresql:// URL")
    return urllib.parse.urlunsplit(
        (u.scheme, u.netloc, "/" + urllib.parse.quote(name, safe=""),
         u.query, u.fragment))


def psql(url, sql=None, stdin=None, check=True):
    """Run psql on url with sql (-c) or a script streamed from stdin."""
    cmd = ["psql", "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1",
           "-d", url]
    if sql is not None:
        cmd += ["-c", sql]
    p = subprocess.run(cmd, input=stdin, capture_output=True)
    err = p.stderr.decode("utf-8", "replace")
    if check and p.returncode != 0:
        sys.exit("load_postgres: psql failed: " + err.strip())
    return p.stdout.decode("utf-8", "replace"), err, p.returncode


def text(v):
    if isinstance(v, bytes):
        v = v.decode("utf-8", "replace")
    return str(v).replace("\x00", "")


def valid(v):
    """Is ISO date or timestamp text a real one ("0000-00-00" is not)?"""
    try:
        datetime.datetime.fromisoformat(v.replace(" ", "T", 1))
        return True
    except ValueError:
        return False


def pg_type(decl, values):
    """The PostgreSQL type for a column declared decl holding values."""
    vals = [v for v in values if v is not None]
    kinds = {type(v) for v in vals}
    if not vals:  # nothing to go by but the declaration
        kinds = set()
    if kinds == {bytes} or (not kinds and BLOB_RE.search(decl)):
        return "bytea"
    if kinds <= {int} and (INT_RE.search(decl) or kinds):
        if all(INT64[0] <= v <= INT64[1] for v in vals):
            return "bigint"
        return "numeric"
    if kinds <= {int, float} and (REAL_RE.search(decl) or kinds):
        if all(math.isfinite(v) for v in vals):
            return "numeric"
        return "double precision"
    if kinds <= {str}:
        if DATE_RE.search(decl) and all(ISO_DATE.match(v) and valid(v)
                                        for v in vals):
            return "date"
        if TS_RE.search(decl) and all(ISO_TS.match(v) and valid(v)
                                      for v in vals):
            return "timestamp"
    return "text"


def copy_value(v, typ):
    """One value in COPY's text format."""
    if v is None:
        return r"\N"
    if typ == "bytea":
        if not isinstance(v, bytes):
            v = str(v).encode("utf-8")
        return "\\\\x" + v.hex()
    if isinstance(v, float):
        if math.isnan(v):
            return "NaN"
        if math.isinf(v):
            return "Infinity" if v > 0 else "-Infinity"
        return repr(v)
    if isinstance(v, int):
        return str(v)
    s = text(v)
    return (s.replace("\\", "\\\\").replace("\t", "\\t")
            .replace("\n", "\\n").replace("\r", "\\r"))


def column_comments(create_sql, names):
    """Trailing "-- text" after a column's definition in CREATE TABLE."""
    out = {}
    if not create_sql:
        return out
    for line in create_sql.splitlines():
        if "--" not in line:
            continue
        head, _, note = line.partition("--")
        m = re.match(r'\s*[`"\[]?([^\s`"\]]+)[`"\]]?\s', head + " ")
        if m and m.group(1) in names and note.strip():
            out.setdefault(m.group(1), note.strip())
    return out


def fold_names(names, keep_case):
    """Names as created: lower case unless that makes two of them one."""
    if keep_case:
        return {n: n for n in names}
    low = {}
    for n in names:
        low.setdefault(n.lower(), []).append(n)
    return {n: (n.lower() if len(low[n.lower()]) == 1 else n) for n in names}


def read_sqlite(path):
    con = sqlite3.connect("file:%s?mode=ro" % urllib.parse.quote(path),
                          uri=True)
    # TEXT as str (bad UTF-8 replaced), BLOB stays bytes.
    con.text_factory = lambda b: b.decode("utf-8", "replace")
    cur = con.cursor()
    tables, views = [], []
    for name, typ, sql in cur.execute(
            "SELECT name, type, sql FROM sqlite_master "
            "WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite_%' "
            "ORDER BY rowid"):
        sql = sql or ""
        if typ == "view":
            views.append((name, sql))
            continue
        cols = [(r[1], r[2] or "", r[5], r[3])
                for r in con.execute("SELECT * FROM pragma_table_info(?)",
                                     (name,))]
        fks = {}
        for r in con.execute("SELECT * FROM pragma_foreign_key_list(?)",
                             (name,)):
            fks.setdefault(r[0], []).append(
                (r[2], r[3], r[4] or None))
        uniques = []
        for r in con.execute("SELECT * FROM pragma_index_list(?)", (name,)):
            if r[2] and r[3] != "pk":
                uc = [x[2] for x in con.execute(
                    "SELECT * FROM pragma_index_info(?)", (r[1],))]
                if uc and None not in uc and uc not in uniques:
                    uniques.append(uc)
        tables.append({"name": name, "sql": sql, "cols": cols,
                       "fks": list(fks.values()), "uniques": uniques})
    return con, tables, views


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dsn", required=True)
    ap.add_argument("--sqlite", required=True)
    ap.add_argument("--db", required=True)
    ap.add_argument("--schema", default="public")
    ap.add_argument("--replace", action="store_true")
    ap.add_argument("--keep-case", action="store_true")
    ap.add_argument("--no-analyze", action="store_true")
    ap.add_argument("--quiet", action="store_true")
    ap.add_argument("--grant", metavar="ROLE")
    a = ap.parse_args()

    con, tables, views = read_sqlite(a.sqlite)
    target = db_url(a.dsn, a.db)

    exists, _, _ = psql(a.dsn, "SELECT 1 FROM pg_database WHERE datname = "
                        + ql(a.db))
    if exists.strip() and a.replace:
        psql(a.dsn, "DROP DATABASE " + qi(a.db) + " WITH (FORCE)")
    if not exists.strip() or a.replace:
        psql(a.dsn, "CREATE DATABASE " + qi(a.db) +
             " TEMPLATE template0 ENCODING 'UTF8'")

    tname = fold_names([t["name"] for t in tables], a.keep_case)
    schema = a.schema if a.keep_case else a.schema.lower()
    sq = qi(schema) + "."
    script = ["SET client_encoding = 'UTF8';",
              "SET client_min_messages = warning;",
              "CREATE SCHEMA IF NOT EXISTS %s;" % qi(schema),
              "SET search_path = %s;" % qi(schema), "BEGIN;"]
    post = []
    for t in tables:
        rows = con.execute("SELECT * FROM " + qi(t["name"])).fetchall()
        colnames = [c[0] for c in t["cols"]]
        cname = fold_names(colnames, a.keep_case)
        t["cname"] = cname
        types = [pg_type(c[1], [r[i] for r in rows])
                 for i, c in enumerate(t["cols"])]
        # NOT NULL where declared and true of the data.
        nn = [bool(c[3]) and all(r[i] is not None for r in rows)
              for i, c in enumerate(t["cols"])]
        defs = ", ".join("%s %s%s" % (qi(cname[c[0]]), ty,
                                      " NOT NULL" if n else "")
                         for c, ty, n in zip(t["cols"], types, nn))
        tq = sq + qi(tname[t["name"]])
        script.append("CREATE TABLE %s (%s);" % (tq, defs))
        script.append("COPY %s (%s) FROM STDIN;" % (
            tq, ", ".join(qi(cname[c]) for c in colnames)))
        for r in rows:
            script.append("\t".join(copy_value(v, ty)
                                    for v, ty in zip(r, types)))
        script.append("\\.")
        pk = sorted((c for c in t["cols"] if c[2]), key=lambda c: c[2])
        if pk:
            post.append(("primary key of %s" % t["name"],
                         "ALTER TABLE %s ADD PRIMARY KEY (%s)" % (
                             tq, ", ".join(qi(cname[c[0]]) for c in pk))))
        for u in t["uniques"]:
            if all(c in cname for c in u):
                post.append(("unique (%s) of %s" % (", ".join(u), t["name"]),
                             "ALTER TABLE %s ADD UNIQUE (%s)" % (
                                 tq, ", ".join(qi(cname[c]) for c in u))))
        for note_col, note in column_comments(t["sql"], cname).items():
            post.append(("comment on %s.%s" % (t["name"], note_col),
                         "COMMENT ON COLUMN %s.%s IS %s" % (
                             tq, qi(cname[note_col]), ql(note))))
    script.append("COMMIT;")
    by_name = {t["name"].lower(): t for t in tables}
    for t in tables:
        for fk in t["fks"]:
            ref = by_name.get(fk[0][0].lower())
            what = "foreign key of %s to %s" % (t["name"], fk[0][0])
            if not ref:
                print("load_postgres: skipped %s: no such table" % what,
                      file=sys.stderr)
                continue
            src = [x[1] for x in fk]
            dst = [x[2] for x in fk]
            if None in dst:  # REFERENCES t: its primary key
                dst = [c[0] for c in sorted((c for c in ref["cols"] if c[2]),
                                            key=lambda c: c[2])]
            rmap = {k.lower(): v for k, v in ref["cname"].items()}
            smap = {k.lower(): v for k, v in t["cname"].items()}
            if (len(dst) != len(src) or
                    any(s.lower() not in smap for s in src) or
                    any(d.lower() not in rmap for d in dst)):
                print("load_postgres: skipped %s: its columns do not match"
                      % what, file=sys.stderr)
                continue
            post.append((what, "ALTER TABLE %s ADD FOREIGN KEY (%s) "
                         "REFERENCES %s (%s)" % (
                             sq + qi(tname[t["name"]]),
                             ", ".join(qi(smap[s.lower()]) for s in src),
                             sq + qi(tname[ref["name"]]),
                             ", ".join(qi(rmap[d.lower()]) for d in dst))))
    for name, sql in views:
        post.append(("view %s" % name, sql.rstrip().rstrip(";")))
    # Each key, comment and view on its own: one that fails is reported
    # (RAISE WARNING) and skipped, the others stay.
    for what, stmt in post:
        script.append(
            "DO $askdb$ BEGIN EXECUTE %s; EXCEPTION WHEN others THEN "
            "RAISE WARNING 'load_postgres: skipped %%: %%', %s, SQLERRM; "
            "END $askdb$;" % (ql(stmt), ql(what)))
    if a.grant:
        script.append("GRANT USAGE ON SCHEMA %s TO %s;" % (qi(schema),
                                                         qi(a.grant)))
        script.append("GRANT SELECT ON ALL TABLES IN SCHEMA %s TO %s;"
                      % (qi(schema), qi(a.grant)))
    if not a.no_analyze:
        script.append("ANALYZE;")
    body = ("\n".join(script) + "\n").encode("utf-8")
    _, err, rc = psql(target, stdin=body, check=False)
    for line in err.splitlines():
        if not a.quiet or "load_postgres:" not in line:
            print(line.replace("WARNING:  ", ""), file=sys.stderr)
    if rc != 0:
        sys.exit("load_postgres: loading %s into %s failed"
                 % (a.sqlite, a.db))
    if not a.quiet:
        print("load_postgres: %d tables, %d views from %s into %s.%s"
              % (len(tables), len(views), a.sqlite, a.db, schema),
              file=sys.stderr)


if __name__ == "__main__":
    main()
