#!/usr/bin/env python3
"""mkbank.py - the built-in bank of examples (data/bank.tsv) from Spider.

    scripts/mkbank.py SPIDER_TRAIN_DIR VALIDATION_DBS OUT

SPIDER_TRAIN_DIR holds Spider's training split (train.json, tables.json,
database/<db_id>/<db_id>.sqlite); VALIDATION_DBS is bench/validation_dbs.txt,
whose databases are left out (issue 17: no example store may use them).
A pair goes in when its SQL runs without error on its database (opened
read-only) and its question is not already in for that database; text
values in double quotes (SQLite's leniency, names elsewhere) are written in
single quotes when the statement then gives the same rows.

OUT, one record a line, fields separated by tabs (tabs and line breaks in
the text become spaces):
    # comment lines (the attribution)
    D <tab> db_id <tab> its table and column names, separated by spaces
    Q <tab> question <tab> SQL          (pairs of the last D)
Spider (Yu et al., 2018) is CC BY-SA 4.0; so is the derived file
(data/README.md).
"""
import json, os, sqlite3, sys

HEADER = """\
# askdb's example bank: question/SQL pairs from other databases (issue 17).
# Derived from the training split of Spider (Yu et al., 2018,
# https://yale-lily.github.io/spider), CC BY-SA 4.0, by scripts/mkbank.py:
# the validation split's databases (bench/validation_dbs.txt) left out,
# only pairs whose SQL runs on their database. This file is CC BY-SA 4.0
# too; see data/README.md.
"""

def requote(sql):
    """sql with its "..." tokens written '...' (outside '...' strings)."""
    out, i, n = [], 0, len(sql)
    while i < n:
        c = sql[i]
        if c in "'\"":
            j = i + 1
            while j < n and not (sql[j] == c and sql[j + 1:j + 2] != c):
                j += 2 if sql[j] == c else 1
            body = sql[i + 1:j]
            if c == '"':
                body = body.replace('""', '"').replace("'", "''")
                out.append("'%s'" % body)
            else:
                out.append(sql[i:j + 1])
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)

def flat(s):
    return " ".join(s.replace("\t", " ").split())

def main(argv):
    if len(argv) != 4:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    root, valfile, out = argv[1:]
    held = {l.strip() for l in open(valfile)
            if l.strip() and not l.startswith("#")}
    pairs = json.load(open(os.path.join(root, "train.json")))
    tables = {t["db_id"]: t for t in
              json.load(open(os.path.join(root, "tables.json")))}
    by_db = {}
    for p in pairs:
        if p["db_id"] not in held:
            by_db.setdefault(p["db_id"], []).append(p)
    kept = dropped = requoted = 0
    lines = [HEADER]
    for db in sorted(by_db):
        path = os.path.join(root, "database", db, db + ".sqlite")
        con = sqlite3.connect("file:%s?mode=ro" % path, uri=True)
        con.text_factory = bytes
        t = tables[db]
        names = [flat(n) for n in t["table_names_original"]]
        names += [flat(c) for i, c in t["column_names_original"] if i >= 0]
        seen, qs = set(), []
        for p in by_db[db]:
            q, sql = flat(p["question"]), flat(p["query"])
            key = q.lower()
            if key in seen:
                continue
            try:
                rows = con.execute(sql).fetchall()
            except sqlite3.Error:
                dropped += 1
                continue
            # Spider often writes text values in double quotes, which only
            # SQLite reads as text (elsewhere they are names): single
            # quotes where that gives the same rows.
            single = requote(sql)
            if single != sql:
                try:
                    if con.execute(single).fetchall() == rows:
                        sql = single
                        requoted += 1
                except sqlite3.Error:
                    pass
            seen.add(key)
            qs.append("Q\t%s\t%s\n" % (q, sql))
        con.close()
        if qs:
            uniq = []
            for n in names:
                if n not in uniq:
                    uniq.append(n)
            lines.append("D\t%s\t%s\n" % (db, " ".join(uniq)))
            lines.extend(qs)
            kept += len(qs)
    with open(out + ".tmp", "w") as f:
        f.writelines(lines)
    os.replace(out + ".tmp", out)
    print("%s: %d pairs of %d databases (%d left out: the SQL failed; "
          "%d with \"...\" values now '...')"
          % (out, kept, len(by_db), dropped, requoted), file=sys.stderr)
    return 0

if __name__ == "__main__":
    sys.exit(main(sys.argv))
