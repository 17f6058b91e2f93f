#!/usr/bin/env python3
"""bench/gate_calibrate.py - where to put --candidate-gate, from two runs.

    python3 bench/gate_calibrate.py ONE.jsonl ONE.trace THREE.jsonl [OUT.jsonl]

ONE is `askdb eval --candidates 1 --trace ONE.trace --out ONE.jsonl` and
THREE the same questions with `--candidates 3` (no gate). With a gate at
p, a question whose greedy reply was sure of every token (its least token
probability, white space aside, `min_p_words` in the trace's first reply
event, at least p) is answered as ONE answered it, the others as THREE:
so the gated EX at each p follows from the two runs, with how many
questions would get one candidate, and how often THREE's candidates were
unanimous at each level of sureness. OUT (optional) gets one line per
question with what this used.
"""
import json
import sys


def records(path):
    return {r["index"]: r for r in map(json.loads, open(path, encoding="utf-8"))}


def sureness(trace):
    """question -> (min_p, min_p_words) of its first attempt's greedy reply."""
    asked, out = {}, {}
    for line in open(trace, encoding="utf-8"):
        e = json.loads(line)
        if e["step"] == "question":
            asked[e["request_id"]] = e["question"]
        elif (e["step"] == "reply" and e.get("attempt") == 1
              and e.get("candidate", 1) == 1 and "min_p" in e):
            out.setdefault(asked[e["request_id"]], (e["min_p"], e.get("min_p_words")))
    return out


def main(argv):
    if len(argv) not in (4, 5):
        sys.exit(__doc__)
    one, three = records(argv[1]), records(argv[3])
    sure = sureness(argv[2])
    idx = sorted(set(one) & set(three))
    rows = []
    for i in idx:
        p = sure.get(one[i]["question"])
        if p is None:
            continue
        rows.append({"index": i, "db": one[i]["db"], "difficulty": one[i].get("difficulty"),
                     "min_p": round(p[0], 4), "min_p_words": round(p[1], 4),
                     "correct_1": bool(one[i]["correct"]), "correct_3": bool(three[i]["correct"]),
                     "confidence_3": round(three[i].get("confidence", 0), 4)})
    n = len(rows)
    print("%d questions in both runs: one candidate %d right, three %d right"
          % (n, sum(r["correct_1"] for r in rows), sum(r["correct_3"] for r in rows)))
    print("gate  EX (gated)  one candidate  gained/lost vs three")
    for g in (0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9):
        ok = single = gain = loss = 0
        for r in rows:
            alone = r["min_p_words"] >= g
            right = r["correct_1"] if alone else r["correct_3"]
            single += alone
            ok += right
            gain += right and not r["correct_3"]
            loss += r["correct_3"] and not right
        print("%.1f   %3d/%d      %3d (%2.0f%%)      +%d -%d" % (g, ok, n, single, 100 * single / max(n, 1), gain, loss))
    print("least p (words)  questions  three unanimous  one right  three right")
    for lo, hi in ((0, .3), (.3, .5), (.5, .7), (.7, .9), (.9, 1.01)):
        b = [r for r in rows if lo <= r["min_p_words"] < hi]
        if b:
            print("[%.1f, %.1f)      %4d       %3.0f%%            %3d        %3d"
                  % (lo, min(hi, 1), len(b), 100 * sum(r["confidence_3"] > .99 for r in b) / len(b),
                     sum(r["correct_1"] for r in b), sum(r["correct_3"] for r in b)))
    if len(argv) == 5:
        with open(argv[4], "w", encoding="utf-8") as f:
            for r in rows:
                f.write(json.dumps(r) + "\n")


if __name__ == "__main__":
    main(sys.argv)
