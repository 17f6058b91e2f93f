#!/usr/bin/env bash
# Smoke test for fake_llm: builds it (unless FAKE_LLM=path is given), serves a
# small script, checks replies and the request log. Needs curl and jq.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
pid=
cleanup() {
    if [[ -n $pid ]]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
    rm -rf "$tmp"
}
trap cleanup EXIT

bin=${FAKE_LLM:-}
if [[ -z $bin ]]; then
    bin=$tmp/fake_llm
    gcc -std=c11 -D_POSIX_C_SOURCE=200809L -Wall -Wextra -Wpedantic -Wshadow \
        -Wstrict-prototypes -Wmissing-prototypes -Wformat=2 -Wundef \
        -Wimplicit-fallthrough -Werror -O2 -pthread "$here/fake_llm.c" -o "$bin" \
        $(pkg-config --cflags --libs libmicrohttpd jansson)
fi

cat >"$tmp/script.json" <<'EOF'
[
  {"content": "SELECT 1;", "usage": {"prompt_tokens": 7, "completion_tokens": 3}},
  {"content": "héllo wörld"},
  {"status": 429, "headers": {"Retry-After": "1"}},
  {"content": "from claude"},
  {"content": "ab€cd"}
]
EOF

"$bin" --script "$tmp/script.json" --log "$tmp/log.jsonl" --port-file "$tmp/port" 2>"$tmp/stderr" &
pid=$!
for _ in $(seq 100); do [[ -s $tmp/port ]] && break; sleep 0.05; done
port=$(cat "$tmp/port")
base=http://127.0.0.1:$port
fail() { echo "FAIL: $*" >&2; exit 1; }
post() { curl -sS -o "$tmp/out" -D "$tmp/hdr" -w '%{http_code}' -X POST "$@"; }

# 1. plain OpenAI completion
code=$(post "$base/v1/chat/completions" -H 'Authorization: Bearer sk-test' \
    -H 'Content-Type: application/json' -d '{"model":"gpt-x","messages":[{"role":"user","content":"hi"}]}')
[[ $code == 200 ]] || fail "openai status $code"
jq -e '.choices[0].message.content == "SELECT 1;" and .model == "gpt-x" and .id == "fake-1"
       and .usage == {"prompt_tokens":7,"completion_tokens":3,"total_tokens":10}' "$tmp/out" >/dev/null \
    || fail "openai body: $(cat "$tmp/out")"
jq -e 'select(.n == 1) | .headers.authorization == "Bearer sk-test" and .body.model == "gpt-x"
       and .script_index == 0 and .path == "/v1/chat/completions"' "$tmp/log.jsonl" >/dev/null \
    || fail "log line 1"

# 2. OpenAI streaming, with a path prefix; pieces must reassemble to the content
code=$(post "$base/openai/v1/chat/completions" -d '{"model":"m","stream":true,"messages":[]}')
[[ $code == 200 ]] || fail "stream status $code"
grep -qi '^content-type: text/event-stream' "$tmp/hdr" || fail "stream content-type"
tail -c 14 "$tmp/out" | cmp -s - <(printf 'data: [DONE]\n\n') || fail "stream missing [DONE]"
text=$(grep '^data: {' "$tmp/out" | sed 's/^data: //' | jq -j '.choices[0].delta.content // empty')
[[ $text == "héllo wörld" ]] || fail "stream text '$text'"
grep '^data: {' "$tmp/out" | sed 's/^data: //' | jq -se '.[-1].choices[0].finish_reason == "stop"
    and .[-1].usage.completion_tokens > 0 and all(.[:-1][]; (.choices[0].delta.content|utf8bytelength) <= 4)' \
    >/dev/null || fail "stream chunks"

# 3. 429 with Retry-After
code=$(post "$base/v1/chat/completions" -d '{}')
[[ $code == 429 ]] || fail "429 status $code"
grep -qi '^retry-after: 1' "$tmp/hdr" || fail "no Retry-After"
jq -e '.error.message == "fake_llm status 429"' "$tmp/out" >/dev/null || fail "429 body"

# 4. Anthropic, non-streamed
code=$(post "$base/v1/messages" -H 'x-api-key: ak' -H 'anthropic-version: 2023-06-01' \
    -d '{"model":"claude-x","max_tokens":10,"messages":[]}')
[[ $code == 200 ]] || fail "anthropic status $code"
jq -e '.type == "message" and .content[0].text == "from claude" and .model == "claude-x"
       and .stop_reason == "end_turn" and .usage.output_tokens == 3' "$tmp/out" >/dev/null \
    || fail "anthropic body: $(cat "$tmp/out")"
jq -e 'select(.n == 4) | .headers["x-api-key"] == "ak" and .headers["anthropic-version"] == "2023-06-01"' \
    "$tmp/log.jsonl" >/dev/null || fail "anthropic log"

# 5. Anthropic streaming: event order and reassembly (the euro sign is 3 bytes)
code=$(post "$base/v1/messages" -d '{"model":"c","stream":true}')
[[ $code == 200 ]] || fail "anthropic stream status $code"
events=$(grep '^event: ' "$tmp/out" | sed 's/^event: //' | sort -u | tr '\n' ' ')
[[ $events == "content_block_delta content_block_start content_block_stop message_delta message_start message_stop " ]] \
    || fail "anthropic events: $events"
text=$(grep '^data: ' "$tmp/out" | sed 's/^data: //' | jq -j 'select(.type=="content_block_delta") | .delta.text')
[[ $text == "ab€cd" ]] || fail "anthropic stream text '$text'"

# 6. exhausted, bad JSON, unknown path, wrong method
[[ $(post "$base/v1/chat/completions" -d '{}') == 500 ]] || fail "exhausted"
jq -e '.error.message == "fake_llm: script exhausted"' "$tmp/out" >/dev/null || fail "exhausted body"
[[ $(post "$base/v1/chat/completions" -d '{nope') == 400 ]] || fail "bad json"
[[ $(post "$base/v1/other" -d '{}') == 404 ]] || fail "404"
[[ $(curl -sS -o /dev/null -w '%{http_code}' "$base/v1/chat/completions") == 405 ]] || fail "405"

[[ $(wc -l <"$tmp/log.jsonl") == 9 ]] || fail "log has $(wc -l <"$tmp/log.jsonl") lines"
jq -se '[.[].script_index] == [0,1,2,3,4,-1,-1,-1,-1] and .[6].body == "{nope"' "$tmp/log.jsonl" >/dev/null \
    || fail "log indexes"

kill -TERM "$pid"
rc=0; wait "$pid" || rc=$?
pid=
[[ $rc == 0 ]] || fail "exit status $rc after SIGTERM"
echo "fake_llm selfcheck: OK"
