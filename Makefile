# Makefile - builds libaskdb, the askdb command, the tests and benchmarks.
#
#   make            build/askdb and build/libaskdb.a
#   make test       sanitizer build, unit tests, end-to-end tests
#   make demo       sample database + a question answered end to end
#   make bench      overhead and large-schema benchmarks
#   WERROR=1        turn warnings into errors (CI does)

CC      ?= gcc
PKGS    := sqlite3 libcurl jansson libedit libxxhash
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS))
PKG_LIBS   := $(shell pkg-config --libs $(PKGS))
WARN    := -std=c11 -Wall -Wextra -Wpedantic -Wshadow -Wstrict-prototypes \
           -Wmissing-prototypes -Wformat=2 -Wundef -Wimplicit-fallthrough
ifeq ($(WERROR),1)
WARN    += -Werror
endif
OPT     ?= -O2 -g
CPPFLAGS := -D_POSIX_C_SOURCE=200809L -DASKDB_BUILD -Iinclude -Isrc $(PKG_CFLAGS)
CFLAGS  := $(WARN) $(OPT) -fvisibility=hidden
LDLIBS  := $(PKG_LIBS) -lstemmer -lm -lpthread

SAN     := -fsanitize=address,undefined -fno-sanitize-recover=all \
           -fno-omit-frame-pointer

# llama.cpp (the local model) is linked when scripts/llama.sh has built it
# into the cache (LLAMA=auto; `make llama` builds it); without it askdb
# still builds and says how to enable it. LLAMA=0 forces a build without it.
LLAMA ?= auto
ifneq ($(LLAMA),0)
LLAMA_PREFIX := $(shell scripts/llama.sh --print-prefix 2>/dev/null)
endif
ifneq ($(LLAMA_PREFIX),)
CPPFLAGS += -DASKDB_HAVE_LLAMA=1 -isystem $(LLAMA_PREFIX)/include \
            -DASKDB_LLAMA_ID=\"$(notdir $(patsubst %/install,%,$(LLAMA_PREFIX)))\"
LDLIBS  += $(shell scripts/llama.sh --print-libs)
endif

LIB_SRC := $(wildcard src/core/*.c src/db/*.c src/llm/*.c src/sql/*.c \
                      src/agent/*.c src/eval/*.c)
CLI_SRC := $(wildcard src/cli/*.c)
UNIT_SRC := $(wildcard tests/unit/test_*.c)

# Release objects in build/, sanitizer objects in build/asan/.
B  := build
BA := build/asan
LIB_OBJ  := $(LIB_SRC:%.c=$(B)/%.o)
CLI_OBJ  := $(CLI_SRC:%.c=$(B)/%.o)
LIBA_OBJ := $(LIB_SRC:%.c=$(BA)/%.o)
CLIA_OBJ := $(CLI_SRC:%.c=$(BA)/%.o)
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(BA)/tests/%)

# Objects are rebuilt when llama.cpp comes or goes: build/llama.flags holds
# the prefix in use and changes only with it.
LLAMA_STAMP := $(B)/llama.flags
$(shell mkdir -p $(B) && (echo '$(LLAMA_PREFIX)' | cmp -s - $(LLAMA_STAMP) \
    || echo '$(LLAMA_PREFIX)' > $(LLAMA_STAMP)))
$(LIB_OBJ) $(CLI_OBJ) $(LIBA_OBJ) $(CLIA_OBJ): $(LLAMA_STAMP)

.PHONY: all test unit e2e security demo bench fuzz grammar-accept clean lint check-banned llama model
all: $(B)/askdb $(B)/libaskdb.a examples/shop.db

$(B)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -MMD -MP -c $< -o $@

$(BA)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(SAN) -O1 -MMD -MP -c $< -o $@

$(B)/libaskdb.a: $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BA)/libaskdb.a: $(LIBA_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(B)/askdb: $(CLI_OBJ) $(B)/libaskdb.a
	$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS)

$(BA)/askdb: $(CLIA_OBJ) $(BA)/libaskdb.a
	$(CC) $(CFLAGS) $(SAN) -o $@ $^ $(LDLIBS)

# Test tools: the scripted model server.
$(BA)/fake_llm: tests/fake_llm/fake_llm.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(SAN) -O1 -o $@ $< \
	    $(shell pkg-config --cflags --libs libmicrohttpd jansson) -lpthread

# The helpers the unit tests share (tests/unit/*.h) rebuild every test.
UNIT_HDR := $(wildcard tests/unit/*.h)
$(BA)/tests/%: tests/unit/%.c $(BA)/libaskdb.a $(UNIT_HDR)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(SAN) -O1 -Itests -o $@ \
	    $(filter-out %.h,$^) \
	    $(shell pkg-config --cflags --libs cmocka) $(LDLIBS)

examples/shop.db: examples/shop.sql
	@rm -f $@.tmp
	sqlite3 $@.tmp < $<
	mv $@.tmp $@

test: unit e2e security

# ASKDB_SMALL_MODEL: the small GGUF for the local-model tests (empty when
# not fetched; those tests then skip and say so).
SMALL_MODEL = $$(scripts/models.sh --path small 2>/dev/null || true)

# SPIDER_DIR: Spider's training split, for tests over real databases.
SPIDER_DIR ?= $(wildcard ../shared/bench/spider-train)

unit: $(UNIT_BIN) $(BA)/fake_llm examples/shop.db
	@set -e; small=$(SMALL_MODEL); for t in $(UNIT_BIN); do \
	    echo "== $$t"; FAKE_LLM=$(BA)/fake_llm SHOP_DB=examples/shop.db \
	    ASKDB_SMALL_MODEL=$$small SPIDER_DIR=$(SPIDER_DIR) $$t; \
	done

e2e: $(BA)/askdb $(BA)/fake_llm examples/shop.db
	ASKDB=$(BA)/askdb FAKE_LLM=$(BA)/fake_llm bash tests/e2e/run.sh
	ASKDB=$(BA)/askdb FAKE_LLM=$(BA)/fake_llm bash tests/e2e/eval.sh
	ASKDB=$(BA)/askdb bash tests/e2e/learn.sh
	ASKDB=$(BA)/askdb ASKDB_SMALL_MODEL=$(SMALL_MODEL) \
	    bash tests/e2e/local_smoke.sh

# The read-only guard against the attack corpus (tests/security/): every
# statement directly and as the model's reply, on a rollback-journal and a
# WAL copy, every file's sha256 checked after every run. The release
# build: the corpus is about the guard, and ASan would make it slow.
security: $(B)/askdb $(BA)/fake_llm examples/shop.db
	ASKDB=$(B)/askdb FAKE_LLM=$(BA)/fake_llm SHOP_DB=examples/shop.db \
	    python3 tests/security/run.py

# The local model, both into ~/.cache/askdb (checksums verified): llama.cpp
# as static libraries (about 5 minutes the first time) and the GGUF models
# (MODEL=default, small or all).
MODEL ?= all
llama:
	scripts/llama.sh

model:
	scripts/models.sh $(MODEL)

# From a fresh Debian machine to an answer by the default local model. The
# build runs in a sub-make so that it sees the llama.cpp just built.
demo:
	scripts/deps.sh
	$(MAKE) llama
	$(MAKE) model MODEL=default
	$(MAKE) all
	$(B)/askdb ask --show-sql examples/shop.db \
	    "Which 5 customers spent the most in 2024?"

# Time to first token with the local model (bench/local_ttft.c).
$(B)/local_ttft: bench/local_ttft.c $(B)/libaskdb.a
	$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $^ $(LDLIBS)

# Grammar acceptance of Spider's gold SQL (needs llama.cpp and the small
# model for its vocabulary).
$(B)/grammar_accept: bench/grammar_accept.c $(B)/libaskdb.a
	$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $^ $(LDLIBS)

grammar-accept: $(B)/grammar_accept
	$(B)/grammar_accept --spider $(SPIDER_DIR) \
	    --model $$(scripts/models.sh --path small) --mutate 1000

# Schema linking: recall of the gold tables and columns, prompt bytes saved.
.PHONY: link-recall
$(B)/link_recall: bench/link_recall.c $(B)/libaskdb.a
	$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $^ $(LDLIBS)

link-recall: $(B)/link_recall
	$(B)/link_recall --spider $(SPIDER_DIR)

# How often the question check would ask the model on Spider (bench/
# qcheck_gate.c).
$(B)/qcheck_gate: bench/qcheck_gate.c $(B)/libaskdb.a
	$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $^ $(LDLIBS)

# libFuzzer harnesses for the parsers of untrusted text (tests/fuzz/,
# needs clang); FUZZ_SECONDS each, 0 = replay the corpus only.
FUZZ_SECONDS ?= 60
fuzz:
	bash tests/fuzz/run.sh $(FUZZ_SECONDS)

# Benchmarks: per-question overhead on ../shared/bench/spider-train and
# schema extraction on a generated 2,000-table database (bench/run.sh).
bench: $(B)/libaskdb.a
	bash bench/run.sh

check-banned:
	@! grep -nE '\b(strcpy|sprintf|strtok|atoi|gets)\s*\(' \
	    $(LIB_SRC) $(CLI_SRC) tests/fake_llm/*.c || \
	    (echo "banned call found" >&2; exit 1)

clean:
	rm -rf $(B) examples/shop.db

-include $(LIB_OBJ:.o=.d) $(CLI_OBJ:.o=.d) $(LIBA_OBJ:.o=.d) $(CLIA_OBJ:.o=.d)
