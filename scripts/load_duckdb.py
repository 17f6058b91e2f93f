#!/usr/bin/env python3
"""load_duckdb.py - copy an SQLite database into a DuckDB database file.

    scripts/load_duckdb.py --sqlite shop.db --out shop.duckdb
    scripts/load_duckdb.py --sqlite shop.db --out shop.duckdb \\
        --export orders --csv orders.csv --parquet orders.parquet
    scripts/load_duckdb.py --print-python

Copies every table (columns, primary keys, unique constraints, foreign keys
where DuckDB accepts them, and the rows) and every view DuckDB can parse.
SQLite is loosely typed and Spider's databases are messy, so a column's
DuckDB type comes from the values it holds: integers -> BIGINT, numbers ->
DOUBLE, blobs -> BLOB, anything else (or a mix) -> VARCHAR. A key that
the data breaks (duplicates, NULLs, dangling references) is left out with a
note on stderr; the rows are always copied. --export TABLE writes that
table to --csv and/or --parquet files too. --out must not exist.

DuckDB's Python package (duckdb==1.5.6, the library askdb links) comes
from PyPI, pinned by hash, into a virtualenv of its own in
${ASKDB_CACHE_DIR:-~/.cache/askdb}/duckdb-venv-1.5.6; the script re-runs
itself there. Exit status: 0 done, 1 failed, 2 usage.
"""
import argparse
import os
import sqlite3
import subprocess
import sys

VERSION = "1.5.6"
# The manylinux x86_64 wheels of duckdb 1.5.6 on PyPI, one per CPython.
WHEEL_SHA256 = [
    "dbd348e9ebdc8b28f1f9930efb5a74a382063c35d9c43901075566fbae50ab5c",  # 3.10
    "73b108c04c932b36c2fa4e41110cc1c3c8cd510eb49f065f92d050be8e6929fd",  # 3.11
    "bc9619ed7d4ffa117b5155d84b44794366bb6635178d78ed5e13a6024845c757",  # 3.12
    "644f54ce99b3b61844bc9a3fe80e0aecb1ea4084b1fffc4396d1569db6111679",  # 3.13
    "19c5e485e59613b8878d1670bcaa7a010f53c5a4da5ae8e08863e5e529ca6182",  # 3.14
]


def cache_dir():
    if os.environ.get("ASKDB_CACHE_DIR"):
        return os.environ["ASKDB_CACHE_DIR"]
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(
        os.path.expanduser("~"), ".cache")
    return os.path.join(base, "askdb")


def venv_python():
    return os.path.join(cache_dir(), "duckdb-venv-" + VERSION, "bin", "python")


def have_duckdb(python):
    r = subprocess.run([python, "-c", "import duckdb, sys; "
                        "sys.exit(duckdb.__version__ != '%s')" % VERSION],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return r.returncode == 0


def ensure_venv():
    """The virtualenv's python, created and filled the first time."""
    py = venv_python()
    if os.path.exists(py) and have_duckdb(py):
        return py
    venv = os.path.dirname(os.path.dirname(py))
    print("load_duckdb: installing duckdb==%s into %s" % (VERSION, venv),
          file=sys.stderr)
    subprocess.run([sys.executable, "-m", "venv", venv], check=True)
    req = os.path.join(venv, "requirements.txt")
    with open(req, "w") as f:
        f.write("duckdb==%s %s\n" % (VERSION, " ".join(
            "--hash=sha256:" + h for h in WHEEL_SHA256)))
    subprocess.run([py, "-m", "pip", "install", "-q",
                    "--disable-pip-version-check", "--only-binary", ":all:",
                    "--require-hashes", "-r", req], check=True)
    if not have_duckdb(py):
        sys.exit("load_duckdb: duckdb %s did not install into %s" %
                 (VERSION, venv))
    return py


def qi(name):
    """An identifier, double-quoted."""
    return '"' + name.replace('"', '""') + '"'


def column_type(values):
    """The DuckDB type that holds every value of a column."""
    kinds = {type(v) for v in values if v is not None}
    if not kinds:
        return "VARCHAR"
    if kinds == {int}:
        if all(-2**63 <= v < 2**63 for v in values if v is not None):
            return "BIGINT"
        return "VARCHAR"
    if kinds <= {int, float}:
        return "DOUBLE"
    if kinds == {bytes}:
        return "BLOB"
    return "VARCHAR"


def convert(v, typ):
    if v is None:
        return None
    if typ == "VARCHAR" and not isinstance(v, str):
        if isinstance(v, bytes):
            return v.decode("utf-8", "replace")
        return str(v)
    if typ == "DOUBLE":
        return float(v)
    return v


def note(msg):
    print("load_duckdb: " + msg, file=sys.stderr)


class Table:
    def __init__(self, src, name):
        self.name = name
        info = src.execute("SELECT name, pk, \"notnull\" FROM "
                           "pragma_table_info(?) ORDER BY cid",
                           (name,)).fetchall()
        self.cols = [r[0] for r in info]
        self.notnull = {r[0] for r in info if r[2]}
        self.pk = [r[0] for r in sorted((r for r in info if r[1]),
                                        key=lambda r: r[1])]
        self.rows = src.execute("SELECT %s FROM %s" % (
            ", ".join(qi(c) for c in self.cols), qi(name))).fetchall()
        self.types = [column_type([r[i] for r in self.rows])
                      for i in range(len(self.cols))]
        self.uniques = []
        for (idx, uniq, origin) in src.execute(
                "SELECT name, \"unique\", origin FROM pragma_index_list(?)",
                (name,)).fetchall():
            if not uniq or origin == "pk":
                continue
            cols = [r[0] for r in src.execute(
                "SELECT name FROM pragma_index_info(?) ORDER BY seqno",
                (idx,)).fetchall()]
            if (cols and None not in cols and cols != self.pk and
                    cols not in self.uniques):
                self.uniques.append(cols)
        self.fks = {}
        for (fid, seq, table, frm, to) in src.execute(
                "SELECT id, seq, \"table\", \"from\", \"to\" FROM "
                "pragma_foreign_key_list(?) ORDER BY id, seq",
                (name,)).fetchall():
            self.fks.setdefault(fid, (table, [], []))
            self.fks[fid][1].append(frm)
            self.fks[fid][2].append(to)

    def values(self, cols):
        idx = [self.cols.index(c) for c in cols]
        return [tuple(r[i] for i in idx) for r in self.rows]

    def key_holds(self, cols):
        """Do the rows keep cols unique and not NULL?"""
        if any(c not in self.cols for c in cols):
            return False
        vals = self.values(cols)
        return all(None not in v for v in vals) and len(set(vals)) == len(vals)


def plan_keys(tables):
    """Which keys each table gets: a key the data breaks is dropped; a
    foreign key needs a primary or unique key on what it references,
    values that all exist there, and no cycle (DuckDB creates the
    referenced table first)."""
    by_name = {t.name.lower(): t for t in tables}
    for t in tables:
        if t.pk and not t.key_holds(t.pk):
            note("%s: primary key (%s) dropped: the data has duplicates or "
                 "NULLs" % (t.name, ", ".join(t.pk)))
            t.pk = []
        t.uniques = [u for u in t.uniques if t.key_holds(u)]
        keep = []
        for (table, frm, to) in t.fks.values():
            parent = by_name.get(table.lower())
            if parent is None:
                continue
            if None in to:
                to = parent.pk
            if not to or len(to) != len(frm):
                continue
            if to != parent.pk and to not in parent.uniques:
                continue
            if any(c not in parent.cols or f not in t.cols for c, f in
                   zip(to, frm)):
                continue
            if [t.types[t.cols.index(c)] for c in frm] != \
                    [parent.types[parent.cols.index(c)] for c in to]:
                note("%s: foreign key (%s) -> %s dropped: the types differ"
                     % (t.name, ", ".join(frm), parent.name))
                continue
            have = set(parent.values(to))
            if any(None not in v and v not in have for v in t.values(frm)):
                note("%s: foreign key (%s) -> %s dropped: dangling values"
                     % (t.name, ", ".join(frm), parent.name))
                continue
            keep.append((parent, frm, to))
        t.keep_fks = keep
    # Creation order: parents first; a table in a cycle loses the foreign
    # keys that close it.
    order, state = [], {}

    def visit(t):
        state[t.name] = 1
        fks = []
        for fk in t.keep_fks:
            s = state.get(fk[0].name)
            if fk[0] is t:
                fks.append(fk)
                continue
            if s == 1:
                note("%s: foreign key -> %s dropped: a cycle" %
                     (t.name, fk[0].name))
                continue
            if s is None:
                visit(fk[0])
            fks.append(fk)
        t.keep_fks = fks
        state[t.name] = 2
        order.append(t)

    for t in tables:
        if t.name not in state:
            visit(t)
    return order


def create_sql(t):
    parts = []
    for c, typ in zip(t.cols, t.types):
        nn = " NOT NULL" if c in t.notnull and all(
            v[0] is not None for v in t.values([c])) else ""
        parts.append("%s %s%s" % (qi(c), typ, nn))
    if t.pk:
        parts.append("PRIMARY KEY (%s)" % ", ".join(qi(c) for c in t.pk))
    for u in t.uniques:
        parts.append("UNIQUE (%s)" % ", ".join(qi(c) for c in u))
    for parent, frm, to in t.keep_fks:
        parts.append("FOREIGN KEY (%s) REFERENCES %s (%s)" % (
            ", ".join(qi(c) for c in frm), qi(parent.name),
            ", ".join(qi(c) for c in to)))
    return "CREATE TABLE %s (\n  %s\n)" % (qi(t.name), ",\n  ".join(parts))


def insert(dst, t, batch=500):
    """The rows of t, many to a statement: one INSERT a row is slow."""
    row = "(" + ", ".join("?" for _ in t.cols) + ")"
    for i in range(0, len(t.rows), batch):
        part = t.rows[i:i + batch]
        params = [convert(v, typ) for r in part
                  for v, typ in zip(r, t.types)]
        dst.execute("INSERT INTO %s VALUES %s" % (
            qi(t.name), ", ".join(row for _ in part)), params)


def load(args):
    import duckdb
    if os.path.exists(args.out):
        sys.exit("load_duckdb: %s exists (it is never overwritten)" % args.out)
    src = sqlite3.connect("file:%s?mode=ro" % args.sqlite, uri=True)
    src.text_factory = lambda b: b.decode("utf-8", "replace")
    names = [r[0] for r in src.execute(
        "SELECT name FROM sqlite_schema WHERE type = 'table' "
        "AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY rowid")]
    tables = [Table(src, n) for n in names]
    tmp = args.out + ".tmp"
    for p in (tmp, tmp + ".wal"):
        if os.path.exists(p):
            os.remove(p)
    dst = duckdb.connect(tmp)
    for t in plan_keys(tables):
        try:
            dst.execute(create_sql(t))
        except duckdb.Error as e:
            note("%s: created without foreign keys: %s" %
                 (t.name, str(e).splitlines()[0]))
            t.keep_fks = []
            dst.execute(create_sql(t))
        if any(fk[0] is t for fk in t.keep_fks):
            # A row may reference one of the same batch, which DuckDB does
            # not see yet: one row a statement, parents first as SQLite
            # stored them, else the table without its foreign keys.
            try:
                insert(dst, t, batch=1)
                continue
            except duckdb.Error as e:
                note("%s: foreign keys dropped: %s" %
                     (t.name, str(e).splitlines()[0]))
                dst.execute("DROP TABLE %s" % qi(t.name))
                t.keep_fks = []
                dst.execute(create_sql(t))
        insert(dst, t)
    for (name, sql) in src.execute(
            "SELECT name, sql FROM sqlite_schema WHERE type = 'view' "
            "ORDER BY rowid"):
        try:
            dst.execute(sql)
        except duckdb.Error as e:
            note("view %s left out: %s" % (name, str(e).splitlines()[0]))
    if args.export:
        q = "SELECT * FROM %s" % qi(args.export)
        if args.csv:
            dst.execute("COPY (%s) TO '%s' (HEADER)" %
                        (q, args.csv.replace("'", "''")))
        if args.parquet:
            dst.execute("COPY (%s) TO '%s' (FORMAT parquet)" %
                        (q, args.parquet.replace("'", "''")))
    dst.execute("CHECKPOINT")
    dst.close()
    os.rename(tmp, args.out)


def main():
    ap = argparse.ArgumentParser(
        description="Copy an SQLite database into a DuckDB file.")
    ap.add_argument("--sqlite", help="the SQLite database to read")
    ap.add_argument("--out", help="the DuckDB file to create")
    ap.add_argument("--export", metavar="TABLE",
                    help="also write this table to --csv / --parquet")
    ap.add_argument("--csv", metavar="FILE")
    ap.add_argument("--parquet", metavar="FILE")
    ap.add_argument("--print-python", action="store_true",
                    help="print the virtualenv's python (made if needed)")
    args = ap.parse_args()
    if args.print_python:
        print(ensure_venv())
        return 0
    if not args.sqlite or not args.out:
        ap.error("--sqlite and --out are needed")
    if (args.csv or args.parquet) and not args.export:
        ap.error("--csv and --parquet need --export TABLE")
    try:
        import duckdb
        ok = duckdb.__version__ == VERSION
    except ImportError:
        ok = False
    if not ok:
        py = ensure_venv()
        os.execv(py, [py, os.path.abspath(__file__)] + sys.argv[1:])
    load(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
