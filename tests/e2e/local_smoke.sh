#!/usr/bin/env bash
# tests/e2e/local_smoke.sh - the askdb command with a real local model.
#
#   ASKDB=build/asan/askdb ASKDB_SMALL_MODEL=$(scripts/models.sh --path small) \
#       bash tests/e2e/local_smoke.sh
#   LOCAL_SMOKE_LIMIT_S=N  kill an askdb run after N s (default 600)
#   E2E_VERBOSE=1          show stderr of a failed test
#
# The small model (SmolLM2-135M) runs in-process through llama.cpp. It
# rarely writes valid SQL, so the smoke test checks the plumbing, not the
# answer: the command finishes, exits 0 (answered) or 1 (every attempt
# listed), the trace holds prompts and replies of the local provider with
# token counts, and the database is unchanged. The runs are pinned to one
# CPU (taskset), so the model uses one thread and a busy machine only
# slows it down instead of stalling its threads on each other.
#
# Skipped (and says why) when ASKDB_SMALL_MODEL is unset or askdb was built
# without llama.cpp. Prints "ok NAME" or "FAIL NAME: reason" per test, then
# "N passed, M failed"; exit status 0 only when M is 0.
set -u

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
ASKDB=$(realpath -m "${ASKDB:-$ROOT/build/asan/askdb}")
SHOP_DB=$(realpath -m "${SHOP_DB:-$ROOT/examples/shop.db}")
SMALL=${ASKDB_SMALL_MODEL:-}
LIMIT=${LOCAL_SMOKE_LIMIT_S:-600}

# Nothing of the developer's model setup may leak in.
for _v in $(compgen -e); do
    case $_v in ASKDB_*) unset "$_v" ;; esac
done
unset OPENAI_API_KEY ANTHROPIC_API_KEY
export LC_ALL=C

[ -x "$ASKDB" ] || { echo "local_smoke.sh: $ASKDB is not built" >&2; exit 2; }
[ -f "$SHOP_DB" ] || { echo "local_smoke.sh: $SHOP_DB is missing" >&2; exit 2; }
command -v python3 >/dev/null || { echo "local_smoke.sh: python3 is needed" >&2; exit 2; }

TMP=$(mktemp -d "${TMPDIR:-/tmp}/askdb-local.XXXXXX") || exit 2
trap 'rm -rf "$TMP"' EXIT
export ASKDB_CACHE_DIR=$TMP/cache-run   # value indexes stay out of $HOME

PIN=()
command -v taskset >/dev/null && PIN=(taskset -c "$(taskset -pc $$ | sed 's/.*: //; s/[,-].*//')")

# run ARGS...: askdb in $TMP; sets RC, stdout in $TMP/out, stderr in $TMP/err.
run() {
    (cd "$TMP" && exec timeout -k 5 "$LIMIT" "${PIN[@]}" "$ASKDB" "$@") \
        </dev/null >"$TMP/out" 2>"$TMP/err"
    RC=$?
}

fail() { printf '%s\n' "$*" >"$TMP/.fail"; exit 1; }

sanitizer_clean() {
    if grep -qE 'ERROR: (Address|Leak)Sanitizer|runtime error:' "$TMP/err"; then
        fail "sanitizer report: $(grep -m3 -E 'Sanitizer|runtime error' "$TMP/err")"
    fi
}

# eval_small CACHE SUITE TRACE [OPTION...]: askdb eval of SUITE in $TMP with
# the small model (one thread, one attempt, one candidate, quiet), its cache
# in $TMP/CACHE and its trace in $TMP/TRACE; answered or not, it must end
# well and sanitizer-clean.
eval_small() {
    local cache=$1 suite=$2 trace=$3
    shift 3
    ASKDB_CACHE_DIR="$TMP/$cache" run eval --suite "$suite" --model "$SMALL" \
        --threads 1 --max-attempts 1 --candidates 1 -q --trace "$trace" "$@"
    sanitizer_clean
    [ "$RC" = 0 ] || [ "$RC" = 1 ] || fail "exit $RC: $(head -c 300 "$TMP/err")"
}

# ---------------------------------------------------------------------------

small_model_answers_or_lists_every_attempt() {
    cp "$SHOP_DB" "$TMP/shop.db"
    local before after
    before=$(sha256sum "$TMP/shop.db" | cut -d' ' -f1)
    run ask --model "$SMALL" --max-attempts 3 --max-tokens 128 \
        --trace trace.jsonl -f csv shop.db "How many customers are there?"
    [ "$RC" != 124 ] && [ "$RC" != 137 ] || fail "did not finish within $LIMIT s"
    sanitizer_clean
    [ "$RC" = 0 ] || [ "$RC" = 1 ] || fail "exit $RC: $(head -c 400 "$TMP/err")"
    after=$(sha256sum "$TMP/shop.db" | cut -d' ' -f1)
    [ "$before" = "$after" ] || fail "the database changed"
    python3 - "$TMP/trace.jsonl" "$RC" "$TMP/out" "$TMP/err" "$TMP/py.err" <<'PY' ||
import json, re, sys
path, rc = sys.argv[1], int(sys.argv[2])
out, err = open(sys.argv[3]).read(), open(sys.argv[4]).read()
def check(cond, msg):
    if not cond:
        open(sys.argv[5], "w").write(msg)
        sys.exit(1)
lines = [json.loads(l) for l in open(path, encoding="utf-8")]
steps = [l["step"] for l in lines]
prompts = [l for l in lines if l["step"] == "prompt"]
replies = [l for l in lines if l["step"] == "reply"]
check(prompts and replies, "no prompt or reply step in %r" % steps)
attempts = [p for p in prompts if not p.get("first_candidate")]
check(len(attempts) <= 3, "prompts: %r" % steps)
# by default the local model asks for the greedy candidate alone first
# (the gate, 0.5), then for candidates 2 and 3 when it was unsure
check(prompts[0].get("candidates") == 1 and prompts[0].get("gate") == 0.5,
      "first attempt: %r" % {k: prompts[0].get(k) for k in ("candidates", "gate")})
later = [p for p in prompts if p.get("first_candidate")]
check(all(p["candidates"] == 2 and p["first_candidate"] == 2 and p["attempt"] == 1 for p in later),
      "later candidates: %r" % later)
check(len(replies) == sum(p.get("candidates", 1) for p in prompts), "prompts/replies: %r" % steps)
check(all(p.get("provider") == "local" for p in prompts), "provider: %r" % [p.get("provider") for p in prompts])
for r in replies:
    check("error" not in r, "model call failed: %r" % r.get("error"))
    check(r.get("prompt_tokens", 0) > 0, "no prompt tokens: %r" % r)
    check(0 <= r.get("completion_tokens", -1) <= 128, "completion tokens: %r" % r)
check(replies[0].get("load_ms", 0) > 0, "first reply has no load_ms: %r" % replies[0])
for r in replies[1:]:
    # a candidate shares the prompt evaluated once; a repair extends the
    # same conversation: either way its prefix is in the KV cache
    check(r.get("cached_tokens", 0) > 0, "later reply (candidate or repair) without prefix reuse: %r" % r)
    check("load_ms" not in r, "load_ms on a later reply: %r" % r)
ans = lines[-1]
check(ans["step"] == "answer", "last step: %r" % ans)
if rc == 0:
    check("execute" in steps and ans.get("status") == "ok", "exit 0 without an executed statement: %r" % steps)
    check(re.match(r"^SELECT|^WITH", ans.get("sql") or "", re.I), "accepted SQL: %r" % ans.get("sql"))
    check(out.strip() != "", "no rows on stdout")
else:
    check("no valid SQL after" in err, "stderr: %r" % err[:300])
    for i in range(1, len(attempts) + 1):
        check("attempt %d:" % i in err, "attempt %d not listed: %r" % (i, err[:600]))
PY
        fail "$(cat "$TMP/py.err" 2>/dev/null || echo "trace check failed")"
}

second_run_loads_the_schema_prompt_from_its_file() {
    cp "$SHOP_DB" "$TMP/shop.db"
    mkdir -p "$TMP/cache-kv"
    local i
    for i in 1 2 3; do
        local extra=()
        [ "$i" = 3 ] && extra=(--no-prompt-cache)
        ASKDB_CACHE_DIR="$TMP/cache-kv" run ask --model "$SMALL" \
            --max-attempts 1 --max-tokens 16 --trace "kv$i.jsonl" "${extra[@]}" \
            shop.db "How many customers are there?"
        sanitizer_clean
        [ "$RC" = 0 ] || [ "$RC" = 1 ] || fail "run $i: exit $RC: $(head -c 300 "$TMP/err")"
    done
    # another database: only the instructions' file is of use to it
    python3 -c 'import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); c.execute("CREATE TABLE singer (id INTEGER PRIMARY KEY, name TEXT, age INTEGER)"); c.commit()' "$TMP/other.db"
    ASKDB_CACHE_DIR="$TMP/cache-kv" run ask --model "$SMALL" \
        --max-attempts 1 --max-tokens 16 --trace kv4.jsonl \
        other.db "How many singers are there?"
    sanitizer_clean
    [ "$RC" = 0 ] || [ "$RC" = 1 ] || fail "run 4: exit $RC: $(head -c 300 "$TMP/err")"
    python3 - "$TMP" "$TMP/py.err" <<'PY' ||
import glob, json, os, sys
tmp = sys.argv[1]
def check(cond, msg):
    if not cond:
        open(sys.argv[2], "w").write(msg)
        sys.exit(1)
def first_reply(i):
    for l in open(os.path.join(tmp, "kv%d.jsonl" % i), encoding="utf-8"):
        e = json.loads(l)
        if e["step"] == "reply":
            return e
    check(False, "run %d: no reply" % i)
r1, r2, r3, r4 = first_reply(1), first_reply(2), first_reply(3), first_reply(4)
files = glob.glob(os.path.join(tmp, "cache-kv", "prompts", "*.kv"))
# the instructions' file, shop.db's whole prefix, other.db's
check(len(files) == 3, "prompt-cache files: %r" % files)
check(r1.get("file_saved") is True and "file_tokens" not in r1, "run 1: %r" % r1)
# a new process: the schema prompt comes from the file, the question is evaluated
check(r2.get("file_tokens", 0) > 500, "run 2 did not load the file: %r" % r2)
check(r2.get("cached_tokens") == r2["file_tokens"], "run 2: %r" % r2)
check(r2["prompt_tokens"] - r2["file_tokens"] < 40, "run 2 evaluated too much: %r" % r2)
check(r2.get("reply") == r1.get("reply"), "replies differ: %r vs %r" % (r1.get("reply"), r2.get("reply")))
check("file_tokens" not in r3 and "file_saved" not in r3, "--no-prompt-cache: %r" % r3)
# another database: the instructions come from their file, its schema is evaluated
check(64 <= r4.get("file_tokens", 0) < r2["file_tokens"], "run 4: %r" % r4)
check(r4.get("cached_tokens") == r4["file_tokens"] and r4.get("file_saved") is True, "run 4: %r" % r4)
PY
        fail "$(cat "$TMP/py.err" 2>/dev/null || echo "trace check failed")"
}

# askdb serve --workers 2: two questions sent at once are decoded in one
# batch (their reply events count the steps shared with the other) and
# both end with an answer (ok or no SQL, as the small model goes).
# --candidate-gate: the greedy reply is asked for alone; the other two
# candidates follow only when some token of it had a probability below the
# gate. A gate no reply can miss (1e-9) leaves one candidate; a gate of 1
# (every chosen token below certainty) brings the other two, in a second
# call marked first_candidate 2.
candidate_gate_asks_the_others_only_when_unsure() {
    cp "$SHOP_DB" "$TMP/shop.db"
    local g
    for g in 0.000000001 1; do
        run ask --model "$SMALL" --max-attempts 1 --max-tokens 48 \
            --candidate-gate "$g" --trace "gate$g.jsonl" shop.db \
            "How many customers are there?"
        sanitizer_clean
        [ "$RC" = 0 ] || [ "$RC" = 1 ] || fail "gate $g: exit $RC: $(head -c 300 "$TMP/err")"
    done
    python3 - "$TMP" "$TMP/py.err" <<'PY' ||
import json, os, sys
tmp = sys.argv[1]
def check(cond, msg):
    if not cond:
        open(sys.argv[2], "w").write(msg)
        sys.exit(1)
def events(g):
    return [json.loads(l) for l in open(os.path.join(tmp, "gate%s.jsonl" % g), encoding="utf-8")]
low = events("0.000000001")
prompts = [e for e in low if e["step"] == "prompt"]
replies = [e for e in low if e["step"] == "reply"]
check(len(prompts) == 1 and prompts[0]["candidates"] == 1 and prompts[0].get("gate") == 1e-9,
      "gate 1e-9 prompts: %r" % [(p.get("candidates"), p.get("gate")) for p in prompts])
check(len(replies) == 1 and 0 < replies[0].get("min_p_words", 0) <= 1, "gate 1e-9 replies: %r" % replies)
high = events("1")
prompts = [e for e in high if e["step"] == "prompt"]
replies = [e for e in high if e["step"] == "reply"]
check([p["candidates"] for p in prompts] == [1, 2], "gate 1 prompts: %r" % [p.get("candidates") for p in prompts])
check(prompts[1].get("first_candidate") == 2 and prompts[1].get("why") == "unsure" and "messages" not in prompts[1],
      "second prompt: %r" % prompts[1])
check([r.get("candidate") for r in replies] == [1, 2, 3], "gate 1 replies: %r" % [r.get("candidate") for r in replies])
check(all(r.get("cached_tokens", 0) > 0 for r in replies[1:]), "later candidates without the prompt reused: %r" % replies[1:])
check([e for e in high if e["step"] == "answer"][0].get("candidates") == 3, "gate 1 answer: %r" % high[-1])
check([e for e in low if e["step"] == "answer"][0].get("candidates") == 1, "gate 1e-9 answer: %r" % low[-1])
PY
        fail "$(cat "$TMP/py.err" 2>/dev/null || echo "trace check failed")"
}

serve_decodes_two_questions_in_one_batch() {
    cp "$SHOP_DB" "$TMP/shop.db"
    python3 - "$ASKDB" "$SMALL" "$TMP" "$LIMIT" "$TMP/py.err" "${PIN[@]}" <<'PY' ||
import json, http.client, os, subprocess, sys, threading, time
askdb, small, tmp, limit, errf = sys.argv[1:6]
pin = sys.argv[6:]
def check(cond, msg):
    if not cond:
        open(errf, "w").write(msg)
        sys.exit(1)
err = open(os.path.join(tmp, "err"), "w")
srv = subprocess.Popen(pin + [askdb, "serve", "--listen", "127.0.0.1:0", "--db",
                       "shop=" + os.path.join(tmp, "shop.db"), "--model", small,
                       "--workers", "2", "--threads", "1", "--max-tokens", "48",
                       "--access-log", "off", "--no-warm"], cwd=tmp, stderr=err)
port = None
for _ in range(600):
    text = open(os.path.join(tmp, "err")).read()
    if "listening on http://" in text:
        port = int(text.split("listening on http://")[1].split(":")[1].split("/")[0])
        break
    if srv.poll() is not None:
        break
    time.sleep(0.1)
check(port, "server did not start: %s" % open(os.path.join(tmp, "err")).read()[:400])
res = {}
def ask(q):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=float(limit))
    c.request("POST", "/api/ask", body=json.dumps({"database": "shop", "question": q}),
              headers={"Content-Type": "application/json", "Accept": "text/event-stream"})
    event, replies, done = None, [], None
    for line in c.getresponse():
        line = line.decode().rstrip("\n")
        if line.startswith("event: "):
            event = line[7:]
        elif line.startswith("data: "):
            d = json.loads(line[6:])
            if event == "step" and d.get("step") == "reply":
                replies.append(d)
            if event == "done":
                done = d
                break
    res[q] = (replies, done)
qs = ["How many customers are there?", "Which products cost more than 20?"]
ts = [threading.Thread(target=ask, args=(q,)) for q in qs]
try:
    for t in ts:
        t.start()
    for t in ts:
        t.join()
finally:
    srv.terminate()
    srv.wait(60)
for q in qs:
    replies, done = res.get(q, ([], None))
    check(done and done.get("status") in ("ok", "no valid SQL"), "%r: done %r" % (q, done))
    check(replies, "%r: no reply step" % q)
    check(replies[0].get("shared_steps", 0) > 0,
          "%r: its first model call shared no step with the other: %r" % (q, replies[0]))
PY
        fail "$(cat "$TMP/py.err" 2>/dev/null || echo "serve check failed")"
    sanitizer_clean
}

# askdb serve gets the schema prompt ready before any question: the
# prompt-cache file appears with no question asked, and the first question
# finds its prefix evaluated. Stopping the server during the warm-up stops
# it at once.
serve_warms_the_schema_prompt_at_start() {
    cp "$SHOP_DB" "$TMP/shop.db"
    python3 - "$ASKDB" "$SMALL" "$TMP" "$LIMIT" "$TMP/py.err" "${PIN[@]}" <<'PY' ||
import glob, json, http.client, os, signal, subprocess, sys, time
askdb, small, tmp, limit, errf = sys.argv[1:6]
pin = sys.argv[6:]
def check(cond, msg):
    if not cond:
        open(errf, "w").write(msg)
        sys.exit(1)
def start(cache):
    err = open(os.path.join(tmp, "err"), "w")
    env = dict(os.environ, ASKDB_CACHE_DIR=cache)
    srv = subprocess.Popen(pin + [askdb, "serve", "--listen", "127.0.0.1:0", "--db",
                           "shop=" + os.path.join(tmp, "shop.db"), "--model", small,
                           "--threads", "1", "--max-tokens", "32", "--access-log", "off"],
                           cwd=tmp, stderr=err, env=env)
    for _ in range(600):
        text = open(os.path.join(tmp, "err")).read()
        if "listening on http://" in text:
            return srv, int(text.split("listening on http://")[1].split(":")[1].split("/")[0])
        if srv.poll() is not None:
            break
        time.sleep(0.1)
    srv.kill()
    check(False, "server did not start: %s" % open(os.path.join(tmp, "err")).read()[:400])
cache = os.path.join(tmp, "cache-warm")
srv, port = start(cache)
try:
    t0 = time.time()
    while not glob.glob(os.path.join(cache, "prompts", "*.kv")) and time.time() - t0 < float(limit):
        check(srv.poll() is None, "server died: %s" % open(os.path.join(tmp, "err")).read()[:400])
        time.sleep(0.2)
    check(glob.glob(os.path.join(cache, "prompts", "*.kv")), "no prompt-cache file without a question")
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=float(limit))
    c.request("POST", "/api/ask", body=json.dumps({"database": "shop", "question": "How many customers are there?"}),
              headers={"Content-Type": "application/json", "Accept": "text/event-stream"})
    event, first = None, None
    for line in c.getresponse():
        line = line.decode().rstrip("\n")
        if line.startswith("event: "):
            event = line[7:]
        elif line.startswith("data: "):
            d = json.loads(line[6:])
            if event == "step" and d.get("step") == "reply" and first is None:
                first = d
            if event == "done":
                break
    check(first and first.get("cached_tokens", 0) > 100,
          "the first question evaluated its schema again: %r" % first)
finally:
    srv.terminate()
    srv.wait(60)
# Stopped during the warm-up (a fresh cache: it has to evaluate).
srv, port = start(os.path.join(tmp, "cache-stop"))
t0 = time.time()
srv.send_signal(signal.SIGTERM)
try:
    rc = srv.wait(30)
except subprocess.TimeoutExpired:
    srv.kill()
    check(False, "the server did not stop within 30 s of SIGTERM during the warm-up")
check(rc == 0, "exit %r after SIGTERM: %s" % (rc, open(os.path.join(tmp, "err")).read()[:400]))
PY
        fail "$(cat "$TMP/py.err" 2>/dev/null || echo "serve check failed")"
    sanitizer_clean
}

# askdb mcp loads the model and gets each database's schema prompt ready
# at start, before any message: the prompt-cache file appears, and the
# first ask then reuses it; stdin closed during the warm-up ends it.
mcp_warms_the_schema_prompt_at_start() {
    cp "$SHOP_DB" "$TMP/shop.db"
    python3 - "$ASKDB" "$SMALL" "$TMP" "$LIMIT" "$TMP/py.err" "${PIN[@]}" <<'PY' ||
import glob, json, os, subprocess, sys, time
askdb, small, tmp, limit, errf = sys.argv[1:6]
pin = sys.argv[6:]
def check(cond, msg):
    if not cond:
        open(errf, "w").write(msg)
        sys.exit(1)
def start(cache, *extra):
    err = open(os.path.join(tmp, "err"), "w")
    env = dict(os.environ, ASKDB_CACHE_DIR=cache)
    return subprocess.Popen(pin + [askdb, "mcp", "--db", "shop=" + os.path.join(tmp, "shop.db"),
                            "--model", small, "--threads", "1", "--max-tokens", "32",
                            "--trace", os.path.join(tmp, "mcp.trace")] + list(extra),
                            cwd=tmp, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=err, env=env)
def send(p, msg):
    p.stdin.write((json.dumps(msg) + "\n").encode())
    p.stdin.flush()
def reply(p, rid):
    for line in p.stdout:
        m = json.loads(line)
        if m.get("id") == rid:
            return m
    check(False, "no reply to %r: %s" % (rid, open(os.path.join(tmp, "err")).read()[:400]))
cache = os.path.join(tmp, "cache-mcp")
p = start(cache)
try:
    t0 = time.time()
    while not glob.glob(os.path.join(cache, "prompts", "*.kv")) and time.time() - t0 < float(limit):
        check(p.poll() is None, "askdb mcp died: %s" % open(os.path.join(tmp, "err")).read()[:400])
        time.sleep(0.2)
    check(glob.glob(os.path.join(cache, "prompts", "*.kv")), "no prompt-cache file without a message")
    send(p, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "local_smoke", "version": "1"}}})
    reply(p, 1)
    send(p, {"jsonrpc": "2.0", "method": "notifications/initialized"})
    send(p, {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "ask", "arguments": {"database": "shop", "question": "How many customers are there?"}}})
    r = reply(p, 2)
    check("result" in r, "ask failed: %r" % r)
    p.stdin.close()
    check(p.wait(60) == 0, "exit %r" % p.returncode)
finally:
    if p.poll() is None:
        p.kill()
ev = [json.loads(l) for l in open(os.path.join(tmp, "mcp.trace"))]
first = [e for e in ev if e.get("step") == "reply"]
check(first and first[0].get("cached_tokens", 0) > 100,
      "the first question evaluated its schema again: %r" % (first[:1],))
# stdin closed during the warm-up (a fresh cache: it has to evaluate)
p = start(os.path.join(tmp, "cache-stop"))
time.sleep(1.0)
p.stdin.close()
try:
    rc = p.wait(30)
except subprocess.TimeoutExpired:
    p.kill()
    check(False, "askdb mcp did not end within 30 s of its stdin's end during the warm-up")
check(rc == 0, "exit %r: %s" % (rc, open(os.path.join(tmp, "err")).read()[:400]))
# --no-warm: nothing made ready before a question
p = start(os.path.join(tmp, "cache-cold"), "--no-warm")
time.sleep(3.0)
p.stdin.close()
p.wait(30)
check(not glob.glob(os.path.join(tmp, "cache-cold", "prompts", "*.kv")), "--no-warm made a prompt-cache file")
PY
        fail "$(cat "$TMP/py.err" 2>/dev/null || echo "mcp check failed")"
    sanitizer_clean
}

# askdb shell on a terminal gets the schema prompt ready while the first
# line is typed: the prompt-cache file appears before any question, and
# .quit during the warm-up ends the shell at once.
shell_warms_the_schema_prompt_while_you_type() {
    cp "$SHOP_DB" "$TMP/shop.db"
    python3 - "$ASKDB" "$SMALL" "$TMP" "$LIMIT" "$TMP/py.err" "${PIN[@]}" <<'PY' ||
import glob, os, pty, select, signal, subprocess, sys, time
askdb, small, tmp, limit, errf = sys.argv[1:6]
pin = sys.argv[6:]
def check(cond, msg):
    if not cond:
        open(errf, "w").write(msg)
        sys.exit(1)
def shell(cache):
    m, s = pty.openpty()
    env = dict(os.environ, ASKDB_CACHE_DIR=cache, HOME=tmp, TERM="dumb")
    p = subprocess.Popen(pin + [askdb, "shell", "--model", small, "--threads", "1",
                         os.path.join(tmp, "shop.db")], stdin=s, stdout=s,
                         stderr=s, env=env, cwd=tmp,
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    os.close(s)
    return p, m
def read_until(m, text, secs):
    got, t0 = b"", time.time()
    while text not in got and time.time() - t0 < secs:
        r, _, _ = select.select([m], [], [], 0.2)
        if r:
            try:
                got += os.read(m, 4096)
            except OSError:
                break
    return got
cache = os.path.join(tmp, "cache-shell")
p, m = shell(cache)
out = read_until(m, b"askdb> ", 60)
check(b"askdb> " in out, "no prompt: %r" % out[-300:])
t0 = time.time()
while not glob.glob(os.path.join(cache, "prompts", "*.kv")) and time.time() - t0 < float(limit):
    check(p.poll() is None, "shell died")
    time.sleep(0.2)
check(glob.glob(os.path.join(cache, "prompts", "*.kv")), "no prompt-cache file before a question")
os.write(m, b".quit\n")
check(p.wait(60) == 0, "exit %r" % p.returncode)
# .quit at once, while a fresh cache is still being evaluated
p, m = shell(os.path.join(tmp, "cache-shell-quit"))
check(b"askdb> " in read_until(m, b"askdb> ", 60), "no prompt")
os.write(m, b".quit\n")
try:
    rc = p.wait(30)
except subprocess.TimeoutExpired:
    p.kill()
    check(False, ".quit during the warm-up took over 30 s")
check(rc == 0, "exit %r after .quit" % rc)
# Ctrl-C while the first question waits for the warm-up (a fresh cache):
# the warm-up stops, the question is dropped and the prompt comes back;
# it ended the shell. (A signal to askdb, as a terminal's Ctrl-C is; the
# default action, as at a keyboard, even when the test runs in the
# background.)
p, m = shell(os.path.join(tmp, "cache-shell-ctrl-c"))
check(b"askdb> " in read_until(m, b"askdb> ", 60), "no prompt")
os.write(m, b"How many orders are there?\n")
time.sleep(0.5)
p.send_signal(signal.SIGINT)
out = read_until(m, b"askdb> ", 60)
check(b"cancelled" in out and b"askdb> " in out and p.poll() is None,
      "Ctrl-C during the warm-up: exit %r, %r" % (p.poll(), out[-300:]))
os.write(m, b".sql SELECT 41 + 1 AS x\n")
out = read_until(m, b"| 42 |", 60)
check(b"| 42 |" in out, "no .sql after the cancelled warm-up: %r" % out[-300:])
os.write(m, b".quit\n")
check(p.wait(60) == 0, "exit %r after Ctrl-C and .quit" % p.returncode)
PY
        fail "$(cat "$TMP/py.err" 2>/dev/null || echo "shell check failed")"
}

# askdb eval --warm: the schema prompt is ready before the database's first
# question, so that question evaluates little more than itself. The second
# question is evaluated from the schema's end too, not from where the first
# one's words part from it ("How many"): what was asked before does not
# change how a question is read.
eval_warm_readies_the_first_question() {
    cp "$SHOP_DB" "$TMP/shop.db"
    { printf '{"db": "shop.db", "question": "How many customers are there?", "gold": "SELECT count(*) FROM customers"}\n'
      printf '{"db": "shop.db", "question": "How many orders are there?", "gold": "SELECT count(*) FROM orders"}\n'
    } >"$TMP/suite.jsonl"
    eval_small cache-eval suite.jsonl evalwarm.jsonl --max-tokens 32 --warm
    python3 - "$TMP/evalwarm.jsonl" "$TMP/py.err" <<'PY' ||
import json, sys
def check(cond, msg):
    if not cond:
        open(sys.argv[2], "w").write(msg)
        sys.exit(1)
replies = [json.loads(l) for l in open(sys.argv[1]) if '"reply"' in l]
firsts = {}
for r in replies:
    if r.get("step") == "reply":
        firsts.setdefault(r["request_id"], r)
replies = list(firsts.values())
check(len(replies) == 2, "want one first reply per question: %r" % replies)
r = replies[0]
check(r.get("cached_tokens", 0) > 100 and r["prompt_tokens"] - r["cached_tokens"] < 40,
      "the first question evaluated the schema: %r" % r)
check(replies[1].get("cached_tokens") == r["cached_tokens"],
      "the second question did not start at the schema's end: %r" % replies)
PY
        fail "$(cat "$TMP/py.err" 2>/dev/null || echo "eval check failed")"
}

# askdb eval loads the model once for the run, as serve and mcp do: no
# question reports a load, and the second database's first question finds
# the system prompt the first one evaluated (no prompt-cache files).
eval_loads_the_model_once_for_every_database() {
    cp "$SHOP_DB" "$TMP/shop.db"
    cp "$SHOP_DB" "$TMP/shop2.db"
    { printf '{"db": "shop.db", "question": "How many customers are there?", "gold": "SELECT count(*) FROM customers"}\n'
      printf '{"db": "shop2.db", "question": "How many products are there?", "gold": "SELECT count(*) FROM products"}\n'
    } >"$TMP/suite2.jsonl"
    eval_small cache-eval2 suite2.jsonl evalonce.jsonl --max-tokens 16 --no-prompt-cache
    python3 - "$TMP/evalonce.jsonl" "$TMP/py.err" <<'PY' ||
import json, sys
def check(cond, msg):
    if not cond:
        open(sys.argv[2], "w").write(msg)
        sys.exit(1)
events = [json.loads(l) for l in open(sys.argv[1])]
firsts = {}
for e in events:
    if e.get("step") == "reply":
        firsts.setdefault(e["request_id"], e)
replies = list(firsts.values())
check(len(replies) == 2, "want one first reply per question: %r" % replies)
# The model is loaded before the first question, not by an agent: no
# question pays for it (each database's agent loaded its own before).
check(not [r for r in replies if "load_ms" in r], "a question loaded the model: %r" % replies)
check(replies[0].get("cached_tokens", 0) == 0, "nothing to reuse before: %r" % replies[0])
check(replies[1].get("cached_tokens", 0) > 20, "the system prompt was evaluated again: %r" % replies[1])
PY
        fail "$(cat "$TMP/py.err" 2>/dev/null || echo "eval check failed")"
    # The summary says what the load took instead.
    grep -qE '^model load: [0-9]+ ms, once for the run' "$TMP/out" "$TMP/err" ||
        fail "no model load line in the summary: $(tail -5 "$TMP/out")"
}

missing_model_file_is_a_usage_error() {
    cp "$SHOP_DB" "$TMP/shop.db"
    run ask --model /nonexistent/m.gguf shop.db "How many customers are there?"
    sanitizer_clean
    [ "$RC" = 2 ] || fail "exit $RC, want 2: $(head -c 300 "$TMP/err")"
    grep -q "cannot open model file '/nonexistent/m.gguf'" "$TMP/err" || fail "stderr: $(cat "$TMP/err")"
}

missing_default_model_says_make_model() {
    cp "$SHOP_DB" "$TMP/shop.db"
    mkdir -p "$TMP/cache"
    ASKDB_CACHE_DIR="$TMP/cache" run ask shop.db "How many customers are there?"
    sanitizer_clean
    [ "$RC" = 2 ] || fail "exit $RC, want 2: $(head -c 300 "$TMP/err")"
    grep -q "the default local model '$TMP/cache/models/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf' is not there: run 'make model'" "$TMP/err" ||
        fail "stderr: $(cat "$TMP/err")"
}

a_remote_model_name_without_a_url_is_a_usage_error() {
    # With only a vendor's key in the environment (read for its host
    # only), `--model claude-sonnet-4-5` was dropped and the default local
    # model answered, with nothing said.
    cp "$SHOP_DB" "$TMP/shop.db"
    ANTHROPIC_API_KEY=sk-ant-test run ask --model claude-sonnet-4-5 shop.db "How many customers are there?"
    sanitizer_clean
    [ "$RC" = 2 ] || fail "exit $RC, want 2: $(head -c 300 "$TMP/err")"
    grep -qF -- "the model 'claude-sonnet-4-5' (--model or ASKDB_MODEL) is not a .gguf file" "$TMP/err" || fail "stderr: $(cat "$TMP/err")"
    grep -qF -- "--provider openai or anthropic" "$TMP/err" || fail "stderr: $(cat "$TMP/err")"
}

# ---------------------------------------------------------------------------

if [ -z "$SMALL" ]; then
    echo "skipped: ASKDB_SMALL_MODEL is not set (scripts/models.sh small)"
    echo "0 passed, 0 failed"
    exit 0
fi
run ask --model /nonexistent/m.gguf "$SHOP_DB" "q?"
if grep -q "not built into this askdb" "$TMP/err"; then
    echo "skipped: $ASKDB was built without llama.cpp (make llama, then rebuild)"
    echo "0 passed, 0 failed"
    exit 0
fi

passed=0 failed=0
for t in small_model_answers_or_lists_every_attempt \
         second_run_loads_the_schema_prompt_from_its_file \
         candidate_gate_asks_the_others_only_when_unsure \
         serve_decodes_two_questions_in_one_batch \
         serve_warms_the_schema_prompt_at_start \
         mcp_warms_the_schema_prompt_at_start \
         shell_warms_the_schema_prompt_while_you_type \
         eval_warm_readies_the_first_question \
         eval_loads_the_model_once_for_every_database \
         missing_model_file_is_a_usage_error missing_default_model_says_make_model \
         a_remote_model_name_without_a_url_is_a_usage_error; do
    rm -f "$TMP/.fail" "$TMP/py.err"
    if (set -u; "$t"); then
        echo "ok $t"; passed=$((passed + 1))
    else
        echo "FAIL $t: $(cat "$TMP/.fail" 2>/dev/null)"; failed=$((failed + 1))
        [ -n "${E2E_VERBOSE:-}" ] && sed 's/^/  stderr: /' "$TMP/err" | head -40
    fi
done
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
