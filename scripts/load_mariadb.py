#!/usr/bin/env python3
"""load_mariadb.py - copy an SQLite database into a MariaDB/MySQL database.

    load_mariadb.py (--socket PATH | --url URL) --sqlite FILE --db NAME
                    [--user U] [--replace] [--collation C] [--quiet]

URL: mariadb://user:password@host:port/db?socket=PATH (percent-encoded, as
askdb reads it); --db wins over the URL's database. The password goes to
the `mariadb` client through a private option file, never on its command
line.

What is copied: tables (columns with types chosen from the declared type
AND the values, so that every value fits), primary keys and unique keys
that the data satisfies, the data (batched INSERTs), column comments
written as "-- text" after a column in the CREATE TABLE text, foreign keys
whose types match and whose values all exist (others are skipped with a
warning: Spider's databases have dangling ones), and views that MariaDB
accepts in ANSI mode. Text is utf8mb4 with a binary collation by default,
so that '=' compares as SQLite does (--collation to change it).

Python's standard library and the `mariadb` command line client only. The
loader sends plain INSERT statements; it never uses LOAD DATA LOCAL.
Exit status: 0 loaded (warnings on stderr), 1 failed, 2 usage.
"""
import argparse
import os
import re
import sqlite3
import subprocess
import sys
import tempfile
import urllib.parse

BATCH_BYTES = 512 * 1024
KEY_CHARS = 768  # utf8mb4 index key limit (3072 bytes) in characters


def warn(msg):
    print("load_mariadb: warning: " + msg, file=sys.stderr)


def die(msg, code=1):
    print("load_mariadb: " + msg, file=sys.stderr)
    sys.exit(code)


def q(name):
    """An identifier for ANSI_QUOTES mode."""
    return '"' + name.replace('"', '""') + '"'


def lit(v):
    """A value as a MariaDB literal (NO_BACKSLASH_ESCAPES mode)."""
    if v is None:
        return "NULL"
    if isinstance(v, bool):
        return "1" if v else "0"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if v != v or v in (float("inf"), float("-inf")):
            return "NULL"
        return repr(v)
    if isinstance(v, bytes):
        return "X'" + v.hex() + "'" if v else "''"
    s = str(v)
    if re.search(r"[\x00\r\x1a]", s):
        # Bytes the client's line reader might mangle go as hex.
        return "_utf8mb4 X'" + s.encode("utf-8").hex() + "'"
    return "'" + s.replace("'", "''") + "'"


# --------------------------------------------------------------------------
# Reading the SQLite side
# --------------------------------------------------------------------------

def decode(b):
    return b.decode("utf-8", "replace")


class Column:
    def __init__(self, name, decl, notnull, pk):
        self.name, self.decl, self.notnull, self.pk = name, decl or "", notnull, pk
        self.comment = None
        self.mtype = None


def column_comments(sql):
    """{column: comment} from '-- text' after a column definition."""
    out = {}
    for line in (sql or "").splitlines():
        m = re.match(r'\s*("(?:[^"]|"")+"|`[^`]+`|\[[^\]]+\]|\w+)\s+[^-]*?--\s*(.*\S)\s*$', line)
        if m:
            name = m.group(1)
            if name[0] in '"`[':
                name = name[1:-1].replace('""', '"')
            out.setdefault(name.lower(), m.group(2))
    return out


def affinity(decl):
    d = decl.upper()
    if "INT" in d:
        return "int"
    if any(k in d for k in ("CHAR", "CLOB", "TEXT")):
        return "text"
    if "BLOB" in d or not d:
        return "blob" if "BLOB" in d else "none"
    if any(k in d for k in ("REAL", "FLOA", "DOUB")):
        return "real"
    return "numeric"


DATE_RE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
DATETIME_RE = re.compile(r"^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$")


def valid_date(s):
    try:
        y, m, d = int(s[0:4]), int(s[5:7]), int(s[8:10])
    except ValueError:
        return False
    if not (1 <= y <= 9999 and 1 <= m <= 12 and d >= 1):
        return False
    days = [31, 29 if (y % 4 == 0 and (y % 100 or y % 400 == 0)) else 28,
            31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
    return d <= days[m - 1]


def choose_type(col, values, keyed, collation):
    """A MariaDB type that holds every value of the column."""
    vals = [v for v in values if v is not None]
    aff = affinity(col.decl)
    d = col.decl.upper()
    kinds = {type(v) for v in vals}
    if bytes in kinds:
        return "LONGBLOB" if not keyed else "VARBINARY(%d)" % max(
            1, min(KEY_CHARS, max(len(v) if isinstance(v, bytes) else len(str(v)) for v in vals)))
    if kinds <= {int}:
        if aff in ("int", "numeric", "none", "real") or not vals:
            if aff == "real":
                return "DOUBLE"
            if "BOOL" in d:
                return "TINYINT"
            if vals and (min(vals) < -2**63 or max(vals) >= 2**63):
                return "DOUBLE"
            if aff == "numeric" and re.search(r"DEC|NUM", d) and not vals:
                return "DOUBLE"
            return "BIGINT"
    if kinds <= {int, float}:
        if aff in ("int", "numeric", "none", "real"):
            return "DOUBLE"
    # Text (or mixed): dates stay dates only when every value is one.
    strs = [v if isinstance(v, str) else str(v) for v in vals]
    if vals and kinds == {str} and ("DATE" in d or "TIME" in d):
        if all(DATE_RE.match(s) and valid_date(s) for s in strs) and "TIME" not in d:
            return "DATE"
        if all(DATETIME_RE.match(s) and valid_date(s) for s in strs):
            return "DATETIME"
    maxlen = max((len(s) for s in strs), default=0)
    m = re.search(r"CHAR\s*\(\s*(\d+)\s*\)", d)
    declared = int(m.group(1)) if m else 0
    coll = " COLLATE " + collation
    if keyed and maxlen <= KEY_CHARS:
        return "VARCHAR(%d)%s" % (max(1, declared if declared <= KEY_CHARS else 0, maxlen), coll)
    if declared and maxlen <= declared <= 16383:
        return "VARCHAR(%d)%s" % (declared, coll)
    if maxlen < 16000:
        return "TEXT" + coll
    return "LONGTEXT" + coll


def read_sqlite(path):
    if not os.path.isfile(path):
        die("no such SQLite file: %s" % path)
    uri = "file:" + urllib.parse.quote(os.path.abspath(path)) + "?mode=ro"
    con = sqlite3.connect(uri, uri=True)
    con.text_factory = decode
    tables = []
    for name, sql in con.execute(
            "SELECT name, sql FROM sqlite_master WHERE type = 'table' "
            "AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY rowid"):
        cols = [Column(r[1], r[2], r[3], r[5])
                for r in con.execute("SELECT * FROM pragma_table_info(?)", (name,))]
        if not cols:
            continue
        comments = column_comments(sql)
        for c in cols:
            c.comment = comments.get(c.name.lower())
        fks = {}
        for r in con.execute("SELECT id, seq, \"table\", \"from\", \"to\" "
                             "FROM pragma_foreign_key_list(?)", (name,)):
            fks.setdefault(r[0], []).append((r[3], r[2], r[4]))
        uniques = []
        for iname, uniq, origin in con.execute(
                "SELECT name, \"unique\", origin FROM pragma_index_list(?)", (name,)):
            if not uniq or origin == "pk":
                continue
            icols = [r[0] for r in con.execute(
                "SELECT name FROM pragma_index_info(?) ORDER BY seqno", (iname,))]
            if icols and all(icols) and icols not in uniques:
                uniques.append(icols)
        rows = con.execute("SELECT %s FROM %s" % (
            ", ".join(q(c.name) for c in cols), q(name))).fetchall()
        tables.append({"name": name, "cols": cols, "fks": list(fks.values()),
                       "uniques": uniques, "rows": rows})
    views = [(n, s) for n, s in con.execute(
        "SELECT name, sql FROM sqlite_master WHERE type = 'view' ORDER BY rowid")]
    con.close()
    return tables, views


# --------------------------------------------------------------------------
# Writing the MariaDB side
# --------------------------------------------------------------------------

def unique_ok(rows, idx):
    seen = set()
    for r in rows:
        key = tuple(r[i] for i in idx)
        if any(k is None for k in key):
            continue
        kl = tuple(k.lower() if isinstance(k, str) else k for k in key)
        if kl in seen:
            return False
        seen.add(kl)
    return True


def plan(tables, collation):
    """Types, keys and the CREATE TABLE text of every table."""
    by_name = {t["name"].lower(): t for t in tables}
    for t in tables:
        names = [c.name for c in t["cols"]]
        lower = [n.lower() for n in names]
        keyed = set()
        pk = [c.name for c in sorted(t["cols"], key=lambda c: c.pk) if c.pk]
        for fk in t["fks"]:
            keyed.update(f.lower() for f, _, _ in fk)
            ref = by_name.get(fk[0][1].lower())
            if ref:
                refcols = [to for _, _, to in fk]
                if all(refcols):
                    ref.setdefault("refkeyed", set()).update(x.lower() for x in refcols)
        keyed.update(x.lower() for x in pk)
        for u in t["uniques"]:
            keyed.update(x.lower() for x in u)
        t["keyed"] = keyed
    for t in tables:
        keyed = t["keyed"] | t.get("refkeyed", set())
        lower = [c.name.lower() for c in t["cols"]]
        for i, c in enumerate(t["cols"]):
            c.mtype = choose_type(c, [r[i] for r in t["rows"]],
                                  c.name.lower() in keyed, collation)
        pk = [c.name for c in sorted(t["cols"], key=lambda c: c.pk) if c.pk]
        idx = [lower.index(x.lower()) for x in pk]
        t["pk"] = []
        if pk and all(not t["cols"][i].mtype.endswith("TEXT")
                      and "BLOB" not in t["cols"][i].mtype for i in idx):
            if unique_ok(t["rows"], idx) and all(
                    r[i] is not None for r in t["rows"] for i in idx):
                t["pk"] = pk
            else:
                warn("%s: primary key (%s) does not hold in the data; not copied"
                     % (t["name"], ", ".join(pk)))
        t["ukeys"] = []
        for u in t["uniques"]:
            if any(x.lower() not in lower for x in u):
                continue
            ui = [lower.index(x.lower()) for x in u]
            if any(t["cols"][i].mtype.endswith("TEXT") for i in ui):
                continue
            if unique_ok(t["rows"], ui):
                t["ukeys"].append(u)
            else:
                warn("%s: unique key (%s) does not hold; not copied" % (t["name"], ", ".join(u)))


NUM_RANK = {"TINYINT": 1, "BIGINT": 2, "DOUBLE": 3}
INT_TEXT = re.compile(r"^-?(0|[1-9][0-9]{0,17})$")


def varchar_len(mtype):
    m = re.match(r"VARCHAR\((\d+)\)", mtype)
    return int(m.group(1)) if m else None


def fk_pairs(tables):
    """(child table, child column, parent table, parent column) of every
    foreign key whose tables and columns exist."""
    by_name = {t["name"].lower(): t for t in tables}
    for t in tables:
        cols = {c.name.lower(): c for c in t["cols"]}
        for fk in t["fks"]:
            ref = by_name.get(fk[0][1].lower())
            if not ref:
                continue
            rcols = {c.name.lower(): c for c in ref["cols"]}
            for i, (f, _, to) in enumerate(fk):
                if not to:
                    pk = [c for c in sorted(ref["cols"], key=lambda c: c.pk) if c.pk]
                    to = pk[i].name if i < len(pk) else None
                if to and f.lower() in cols and to.lower() in rcols:
                    yield t, cols[f.lower()], ref, rcols[to.lower()]


def values_of(t, col):
    i = t["cols"].index(col)
    return [r[i] for r in t["rows"] if r[i] is not None]


def unify_fk_types(tables, collation):
    """Give both ends of a foreign key the same type, as MariaDB requires
    (SQLite compares 1 and '1' as equal; Spider mixes them): numbers keep
    the wider numeric type, texts the longer VARCHAR, and a text of plain
    integers next to a number becomes a number; else both become text."""
    coll = " COLLATE " + collation
    for _ in range(4):  # chains of keys settle in a few rounds
        changed = False
        for t, c, ref, p in fk_pairs(tables):
            a, b = c.mtype, p.mtype
            if a == b:
                continue
            if a in NUM_RANK and b in NUM_RANK:
                new = max(a, b, key=NUM_RANK.get)
                c.mtype = p.mtype = new
                changed = True
                continue
            for (x, tx), (y, ty) in (((c, t), (p, ref)), ((p, ref), (c, t))):
                if x.mtype in NUM_RANK and varchar_len(y.mtype) is not None:
                    vals = values_of(ty, y)
                    if all(isinstance(v, int) or (isinstance(v, str) and INT_TEXT.match(v))
                           for v in vals) and x.mtype != "DOUBLE":
                        y.mtype = x.mtype
                    else:
                        n = max([len(str(v)) for v in values_of(tx, x) + vals] + [1])
                        if n <= KEY_CHARS:
                            x.mtype = y.mtype = "VARCHAR(%d)%s" % (n, coll)
                    changed = True
                    break
            else:
                la, lb = varchar_len(a), varchar_len(b)
                if la is not None and lb is not None:
                    c.mtype = p.mtype = "VARCHAR(%d)%s" % (max(la, lb), coll)
                    changed = True
        if not changed:
            break


def create_sql(t):
    parts = []
    for c in t["cols"]:
        s = "  %s %s" % (q(c.name), c.mtype)
        if c.notnull and c.name in t["pk"]:
            s += " NOT NULL"
        elif c.notnull and all(r[t["cols"].index(c)] is not None for r in t["rows"]):
            s += " NOT NULL"
        if c.comment:
            s += " COMMENT " + lit(c.comment[:1024])
        parts.append(s)
    if t["pk"]:
        parts.append("  PRIMARY KEY (%s)" % ", ".join(q(x) for x in t["pk"]))
    for u in t["ukeys"]:
        parts.append("  UNIQUE (%s)" % ", ".join(q(x) for x in u))
    # Columns other tables point at need an index for a foreign key.
    for x in sorted(t.get("refkeyed", set())):
        names = {c.name.lower(): c for c in t["cols"]}
        c = names.get(x)
        if c and not c.mtype.endswith("TEXT") and "BLOB" not in c.mtype and \
                [x] != [p.lower() for p in t["pk"]]:
            parts.append("  KEY (%s)" % q(c.name))
    return "CREATE TABLE %s (\n%s\n) ENGINE=InnoDB" % (q(t["name"]), ",\n".join(parts))


def insert_sql(t):
    head = "INSERT INTO %s (%s) VALUES " % (
        q(t["name"]), ", ".join(q(c.name) for c in t["cols"]))
    batch, size = [], 0
    for r in t["rows"]:
        tup = "(" + ", ".join(lit(v) for v in r) + ")"
        batch.append(tup)
        size += len(tup)
        if size >= BATCH_BYTES:
            yield head + ",\n".join(batch) + ";\n"
            batch, size = [], 0
    if batch:
        yield head + ",\n".join(batch) + ";\n"


def fk_sql(tables):
    """ALTER TABLE ... ADD FOREIGN KEY for the keys that hold; warnings for
    the others."""
    by_name = {t["name"].lower(): t for t in tables}
    out = []
    for t in tables:
        lower = [c.name.lower() for c in t["cols"]]
        for fk in t["fks"]:
            ref = by_name.get(fk[0][1].lower())
            desc = "%s(%s) -> %s" % (t["name"], ", ".join(f for f, _, _ in fk), fk[0][1])
            if not ref:
                warn("foreign key %s: no such table; skipped" % desc)
                continue
            rlower = [c.name.lower() for c in ref["cols"]]
            tos = [to if to else (ref["pk"][i] if i < len(ref["pk"]) else None)
                   for i, (_, _, to) in enumerate(fk)]
            if any(to is None or to.lower() not in rlower for to in tos) or \
                    any(f.lower() not in lower for f, _, _ in fk):
                warn("foreign key %s: columns not found; skipped" % desc)
                continue
            fi = [lower.index(f.lower()) for f, _, _ in fk]
            ti = [rlower.index(to.lower()) for to in tos]
            if any(t["cols"][a].mtype != ref["cols"][b].mtype for a, b in zip(fi, ti)):
                warn("foreign key %s: column types differ; skipped" % desc)
                continue
            if len(fk) > 1 and [ref["cols"][b].name for b in ti] != ref["pk"] and \
                    [ref["cols"][b].name for b in ti] not in ref["ukeys"]:
                warn("foreign key %s: the referenced columns are not a key; skipped" % desc)
                continue
            # 1, 1.0 and '1' are one key once the types are one.
            def norm(v):
                if isinstance(v, float) and v.is_integer():
                    v = int(v)
                return v if isinstance(v, bytes) else str(v)
            parent = {tuple(norm(r[b]) for b in ti) for r in ref["rows"]}
            dangling = sum(1 for r in t["rows"]
                           if all(r[a] is not None for a in fi)
                           and tuple(norm(r[a]) for a in fi) not in parent)
            if dangling:
                warn("foreign key %s: %d rows point at nothing; skipped" % (desc, dangling))
                continue
            out.append("ALTER TABLE %s ADD FOREIGN KEY (%s) REFERENCES %s (%s);\n" % (
                q(t["name"]), ", ".join(q(t["cols"][a].name) for a in fi),
                q(ref["name"]), ", ".join(q(ref["cols"][b].name) for b in ti)))
    return out


def view_sql(name, sql):
    m = re.match(r"\s*CREATE\s+(?:TEMP\w*\s+)?VIEW\s+(?:IF\s+NOT\s+EXISTS\s+)?"
                 r"(\"(?:[^\"]|\"\")+\"|`[^`]+`|\[[^\]]+\]|\S+)\s+(.*)$", sql, re.S | re.I)
    if not m:
        return None
    return "CREATE VIEW %s %s;\n" % (q(name), m.group(2).rstrip().rstrip(";"))


# --------------------------------------------------------------------------
# The client
# --------------------------------------------------------------------------

def parse_url(url):
    u = urllib.parse.urlsplit(url)
    if u.scheme.lower() not in ("mariadb", "mysql"):
        die("--url must be mariadb://... or mysql://...", 2)
    qs = urllib.parse.parse_qs(u.query)
    return {
        "user": urllib.parse.unquote(u.username) if u.username else None,
        "password": urllib.parse.unquote(u.password) if u.password else None,
        "host": u.hostname, "port": u.port,
        "database": urllib.parse.unquote(u.path.lstrip("/")) or None,
        "socket": qs.get("socket", [None])[0],
    }


class Client:
    def __init__(self, conn):
        fd, self.cnf = tempfile.mkstemp(prefix="load_mariadb.", suffix=".cnf")
        with os.fdopen(fd, "w") as f:
            f.write("[client]\n")
            for k in ("user", "password", "host", "port", "socket"):
                v = conn.get(k)
                if v is not None:
                    f.write("%s=%s\n" % (k, str(v).replace("\\", "\\\\")))
            if conn.get("host") and conn.get("port") and not conn.get("socket"):
                f.write("protocol=TCP\n")

    def close(self):
        os.unlink(self.cnf)

    def run(self, sql_iter, db=None, force=False):
        args = ["mariadb", "--defaults-extra-file=" + self.cnf, "--batch",
                "--skip-column-names", "--default-character-set=utf8mb4",
                "--init-command=SET sql_mode='ANSI,NO_BACKSLASH_ESCAPES,"
                "STRICT_ALL_TABLES'"]
        if force:
            args.append("--force")
        if db:
            args.append(db)
        p = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE)
        import threading
        outs = {}

        def drain(name, stream):
            outs[name] = stream.read()
        th = [threading.Thread(target=drain, args=(n, s))
              for n, s in (("out", p.stdout), ("err", p.stderr))]
        for x in th:
            x.start()
        try:
            for s in sql_iter:
                p.stdin.write(s.encode("utf-8"))
        except BrokenPipeError:
            pass
        try:
            p.stdin.close()
        except BrokenPipeError:
            pass
        rc = p.wait()
        for x in th:
            x.join()
        return rc, outs["out"].decode("utf-8", "replace"), outs["err"].decode("utf-8", "replace")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--socket", help="the server's Unix socket")
    g.add_argument("--url", help="mariadb://user:password@host:port/db")
    ap.add_argument("--sqlite", required=True, help="the SQLite file to copy")
    ap.add_argument("--db", help="the MariaDB database to create (default: the URL's)")
    ap.add_argument("--user", help="user for --socket (default: the option files')")
    ap.add_argument("--replace", action="store_true",
                    help="drop the database first if it exists")
    ap.add_argument("--collation", default="utf8mb4_bin",
                    help="collation of text columns (default utf8mb4_bin: '=' as in SQLite)")
    ap.add_argument("--quiet", action="store_true", help="no warnings")
    a = ap.parse_args()
    if a.quiet:
        global warn
        warn = lambda msg: None  # noqa: E731
    conn = parse_url(a.url) if a.url else {"socket": a.socket}
    if a.user:
        conn["user"] = a.user
    db = a.db or conn.get("database")
    if not db:
        die("name the database: --db NAME (or at the end of the URL)", 2)
    if not re.fullmatch(r"[A-Za-z0-9_$-]{1,64}", db):
        die("database name %r: use letters, digits, _, $ or -" % db, 2)
    if not re.fullmatch(r"[A-Za-z0-9_]+", a.collation):
        die("bad --collation", 2)
    tables, views = read_sqlite(a.sqlite)
    if not tables:
        die("%s has no tables" % a.sqlite)
    plan(tables, a.collation)
    unify_fk_types(tables, a.collation)
    cl = Client(conn)
    try:
        pre = []
        if a.replace:
            pre.append("DROP DATABASE IF EXISTS %s;\n" % q(db))
        pre.append("CREATE DATABASE %s CHARACTER SET utf8mb4 COLLATE %s;\n" % (q(db), a.collation))
        rc, _, err = cl.run(pre)
        if rc:
            die("cannot create database %s: %s" % (db, err.strip()))

        def body():
            yield "SET foreign_key_checks = 0;\n"
            for t in tables:
                yield create_sql(t) + ";\n"
            for t in tables:
                yield "START TRANSACTION;\n"
                for s in insert_sql(t):
                    yield s
                yield "COMMIT;\n"
        rc, _, err = cl.run(body(), db=db)
        if rc:
            die("loading %s failed: %s" % (db, err.strip()[:2000]))
        fks = fk_sql(tables)
        if fks:
            rc, _, err = cl.run(fks, db=db, force=True)
            for line in err.splitlines():
                if line.strip("- "):  # the client frames a failed statement
                    warn("foreign key not added: " + line)
        vs = [v for v in (view_sql(n, s) for n, s in views) if v]
        for n, s in views:
            if not view_sql(n, s):
                warn("view %s: cannot read its definition; skipped" % n)
        for v in vs:
            rc, _, err = cl.run([v], db=db)
            if rc:
                warn("view not created (%s): %s" % (v.split("\n")[0][:80], err.strip()[:300]))
        nrows = sum(len(t["rows"]) for t in tables)
        if not a.quiet:
            print("load_mariadb: %s: %d tables, %d rows, %d foreign keys, %d views"
                  % (db, len(tables), nrows, len(fks), len(vs)), file=sys.stderr)
    finally:
        cl.close()


if __name__ == "__main__":
    main()
