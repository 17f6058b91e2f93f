#!/usr/bin/env python3
"""Print the first model call's prompt of an askdb --trace file as the
local model (Qwen2.5's chat template) reads it, for bench/draft_bits.c:

    askdb ask examples/shop.db --trace T.jsonl "Which customers never ordered?"
    python3 bench/trace_prompt.py T.jsonl > prompt.txt
"""
import json
import sys

for line in open(sys.argv[1], encoding="utf-8"):
    event = json.loads(line)
    if "messages" in event:
        for m in event["messages"]:
            sys.stdout.write("<|im_start|>%s\n%s<|im_end|>\n"
                             % (m["role"], m["content"]))
        sys.stdout.write("<|im_start|>assistant\n")
        break
else:
    sys.exit("trace_prompt: no model call with messages in " + sys.argv[1])
