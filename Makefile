# Makefile - builds libaskdb, the askdb command, the tests and benchmarks.
#
#   make            build/askdb, build/libaskdb.a and build/libaskdb.so,
#                   build/api/libaskdb.a (the archive installed)
#   make test       sanitizer build, unit tests, end-to-end tests
#   make install    PREFIX=/usr/local (and DESTDIR): askdb.h, libaskdb.a,
#                   libaskdb.so*, askdb.pc, the askdb command, its man page,
#                   askdb-exec (LIBEXECDIR) that runs the statements;
#                   make uninstall removes them
#   make demo       sample database + a question answered end to end
#   make bench      overhead and large-schema benchmarks
#   WERROR=1        turn warnings into errors (CI does)

# `make` alone builds `all`, whatever rule comes first below.
.DEFAULT_GOAL := all

CC      ?= gcc
# The library's packages; the command adds libedit (the shell's line editor).
LIB_PKGS := sqlite3 libcurl jansson libxxhash
# PostgreSQL (src/db/postgres.c) when libpq is there (libpq-dev); without
# it a postgresql:// URL says so.
HAVE_LIBPQ := $(shell pkg-config --exists libpq && echo 1)
ifeq ($(HAVE_LIBPQ),1)
LIB_PKGS += libpq
endif
# MariaDB/MySQL (src/db/mariadb.c) when libmariadb-dev is there; without it
# the driver says what is missing.
HAVE_MARIADB := $(shell pkg-config --exists libmariadb && echo 1)
ifeq ($(HAVE_MARIADB),1)
LIB_PKGS += libmariadb
endif
PKGS    := $(LIB_PKGS) libedit
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS))
PKG_LIBS   := $(shell pkg-config --libs $(PKGS))
WARN    := -std=c11 -Wall -Wextra -Wpedantic -Wshadow -Wstrict-prototypes \
           -Wmissing-prototypes -Wformat=2 -Wundef -Wimplicit-fallthrough
ifeq ($(WERROR),1)
WARN    += -Werror
endif
OPT     ?= -O2 -g
# The library sees its own tree (src/); a front end (src/cli/, later
# src/server/ and src/mcp/) sees include/ alone, so that an include of an
# internal header fails to build: the front ends stand on askdb.h.
FE_CPPFLAGS := -D_POSIX_C_SOURCE=200809L -Iinclude $(PKG_CFLAGS) \
               $(shell pkg-config --cflags libmicrohttpd)
CPPFLAGS := -D_POSIX_C_SOURCE=200809L -DASKDB_BUILD -Iinclude -Isrc $(PKG_CFLAGS)
ifeq ($(HAVE_LIBPQ),1)
CPPFLAGS += -DASKDB_HAVE_LIBPQ=1
endif
ifeq ($(HAVE_MARIADB),1)
CPPFLAGS += -DASKDB_HAVE_MARIADB=1
endif
CFLAGS  := $(WARN) $(OPT) -fvisibility=hidden
LDLIBS  := $(PKG_LIBS) -lstemmer -lm -lpthread
# What the askdb command links besides the library: the HTTP server.
FE_LIBS := $(shell pkg-config --libs libmicrohttpd)
# What libaskdb.so links: every dependency, so `cc prog.c -laskdb` is enough.
LIB_LDLIBS := $(shell pkg-config --libs $(LIB_PKGS)) -lstemmer -lm -lpthread
# The release library objects are position-independent, so that one set
# makes both libaskdb.a and libaskdb.so.
LIB_CFLAGS := -fPIC

# The version is askdb_version()'s; the soname changes with the major one,
# and while the major is 0 with the minor too (libaskdb.so.0.1): a 0.x
# minor may change the API (CHANGELOG.md), and a program linked against
# one must not load another.
VERSION := $(shell sed -n 's/^.define ASKDB_VERSION "\(.*\)"$$/\1/p' src/core/config.c)
ifeq ($(VERSION),)
$(error cannot read ASKDB_VERSION from src/core/config.c)
endif
VMAJOR  := $(word 1,$(subst ., ,$(VERSION)))
VMINOR  := $(word 2,$(subst ., ,$(VERSION)))
SONAME  := libaskdb.so.$(if $(filter 0,$(VMAJOR)),0.$(VMINOR),$(VMAJOR))
SOFILE  := libaskdb.so.$(VERSION)

# Where `make install` puts things (DESTDIR is prepended, not recorded).
PREFIX  ?= /usr/local
BINDIR  ?= $(PREFIX)/bin
LIBDIR  ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
MANDIR  ?= $(PREFIX)/share/man
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
# askdb-exec, the helper that runs each statement of an SQLite or DuckDB
# file in a process libaskdb can kill (src/db/isolate.c); libaskdb knows
# this path, and also looks beside the running program (the build tree).
LIBEXECDIR ?= $(PREFIX)/libexec/askdb

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
LLAMA_LIBS := $(shell scripts/llama.sh --print-libs)
LDLIBS  += $(LLAMA_LIBS)
LIB_LDLIBS += $(LLAMA_LIBS)
endif
# llama.cpp's static libraries are installed beside libaskdb for static
# linking, in LIBDIR/askdb/ so that they never shadow a system llama.cpp.
LLAMA_ARCHIVES := $(filter %.a,$(LLAMA_LIBS))

# DuckDB (.duckdb, .csv and .parquet files) is linked when scripts/duckdb.sh
# has fetched its C library into the cache (DUCKDB=auto; `make duckdb`
# fetches it); without it askdb still builds, and such a path says how to
# get it. DUCKDB=0 forces a build without it. The library is shared (DuckDB
# ships no archive): the build tree finds it in the cache through an rpath
# (TREE_RPATH), and `make install` copies it to LIBDIR/askdb/, where what
# it installs looks, and nowhere else: libaskdb.so in $ORIGIN/askdb, askdb
# in $ORIGIN/../lib/askdb and LIBDIR/askdb, askdb-exec in
# $ORIGIN/../../lib/askdb and LIBDIR/askdb (INST_RPATH_*; those three are
# linked again for the install, build/inst/).
DUCKDB ?= auto
ifneq ($(DUCKDB),0)
DUCKDB_PREFIX := $(shell scripts/duckdb.sh --print-prefix 2>/dev/null)
endif
ifneq ($(DUCKDB_PREFIX),)
DUCKDB_CPPFLAGS := -DASKDB_HAVE_DUCKDB=1 -isystem $(DUCKDB_PREFIX)/include
DUCKDB_LIBS := -L$(DUCKDB_PREFIX)/lib -lduckdb
DUCKDB_SO := $(DUCKDB_PREFIX)/lib/libduckdb.so
TREE_RPATH := -Wl,-rpath,$(DUCKDB_PREFIX)/lib
INST_RPATH_LIB := -Wl,-rpath,'$$ORIGIN/askdb'
INST_RPATH_BIN := -Wl,-rpath,'$$ORIGIN/../lib/askdb' -Wl,-rpath,$(LIBDIR)/askdb
INST_RPATH_EXEC := -Wl,-rpath,'$$ORIGIN/../../lib/askdb' \
                   -Wl,-rpath,$(LIBDIR)/askdb
LDLIBS  += $(DUCKDB_LIBS) $(TREE_RPATH)
LIB_LDLIBS += $(DUCKDB_LIBS) $(TREE_RPATH)
endif

LIB_SRC := $(wildcard src/core/*.c src/db/*.c src/llm/*.c src/sql/*.c \
                      src/agent/*.c src/eval/*.c)
# The askdb command: its front ends (cli, serve, mcp), plus the server's
# OpenAPI document made into C (build/gen/openapi.c).
CLI_SRC := $(wildcard src/cli/*.c src/server/*.c src/mcp/*.c)
# askdb-exec: the statements' process (src/exec/main.c).
EXEC_SRC := src/exec/main.c
UNIT_SRC := $(wildcard tests/unit/test_*.c)

# Release objects in build/, sanitizer objects in build/asan/.
B  := build
BA := build/asan
LIB_OBJ  := $(LIB_SRC:%.c=$(B)/%.o)
CLI_OBJ  := $(CLI_SRC:%.c=$(B)/%.o) $(B)/gen/openapi.o
LIBA_OBJ := $(LIB_SRC:%.c=$(BA)/%.o)
CLIA_OBJ := $(CLI_SRC:%.c=$(BA)/%.o) $(BA)/gen/openapi.o
EXEC_OBJ := $(EXEC_SRC:%.c=$(B)/%.o)
EXECA_OBJ := $(EXEC_SRC:%.c=$(BA)/%.o)
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(BA)/tests/%)
# The example bank (data/bank.tsv, src/agent/bank.c) made into C.
LIB_OBJ  += $(B)/gen/bank.o
LIBA_OBJ += $(BA)/gen/bank.o

# Objects are rebuilt when llama.cpp comes or goes: build/llama.flags holds
# the prefix in use and changes only with it.
LLAMA_STAMP := $(B)/llama.flags
$(shell mkdir -p $(B) && (echo '$(LLAMA_PREFIX)' | cmp -s - $(LLAMA_STAMP) \
    || echo '$(LLAMA_PREFIX)' > $(LLAMA_STAMP)))
$(LIB_OBJ) $(CLI_OBJ) $(LIBA_OBJ) $(CLIA_OBJ) $(EXEC_OBJ) $(EXECA_OBJ): $(LLAMA_STAMP)
$(CLI_OBJ) $(CLIA_OBJ): CPPFLAGS := $(FE_CPPFLAGS)

# The DuckDB driver is rebuilt when DuckDB comes or goes (build/duckdb.flags
# holds the prefix in use); only it sees duckdb.h.
DUCKDB_STAMP := $(B)/duckdb.flags
$(shell echo '$(DUCKDB_PREFIX)' | cmp -s - $(DUCKDB_STAMP) \
    || echo '$(DUCKDB_PREFIX)' > $(DUCKDB_STAMP))
$(B)/src/db/duckdb.o $(BA)/src/db/duckdb.o: $(DUCKDB_STAMP)
$(B)/src/db/duckdb.o $(BA)/src/db/duckdb.o: CPPFLAGS += $(DUCKDB_CPPFLAGS)

# The same for the release library objects' own flags (build/lib.flags).
LIB_STAMP := $(B)/lib.flags
$(shell echo '$(LIB_CFLAGS)' | cmp -s - $(LIB_STAMP) \
    || echo '$(LIB_CFLAGS)' > $(LIB_STAMP))
$(LIB_OBJ): $(LIB_STAMP)
$(LIB_OBJ): CFLAGS += $(LIB_CFLAGS)

# Where libaskdb looks for an installed askdb-exec (build/libexec.flags
# changes only with it).
LIBEXEC_STAMP := $(B)/libexec.flags
$(shell echo '$(LIBEXECDIR)' | cmp -s - $(LIBEXEC_STAMP) \
    || echo '$(LIBEXECDIR)' > $(LIBEXEC_STAMP))
$(B)/src/db/isolate.o $(BA)/src/db/isolate.o: $(LIBEXEC_STAMP)
$(B)/src/db/isolate.o $(BA)/src/db/isolate.o: \
    CPPFLAGS += -DASKDB_LIBEXECDIR='"$(LIBEXECDIR)"'

.PHONY: all test unit e2e security demo bench fuzz grammar-accept clean lint check-banned \
        check-layers llama model small-model install uninstall duckdb e2e-duckdb \
        security-duckdb
all: $(B)/askdb $(B)/askdb-exec $(B)/libaskdb.a $(B)/api/libaskdb.a \
     $(B)/libaskdb.so $(B)/askdb.pc $(B)/examples/embed examples/shop.db

# decoder.c multiplies the output layer's text rows on OpenMP threads, as
# llama.cpp's kernels run (libgomp comes with llama.cpp's link flags).
$(B)/src/llm/decoder.o $(BA)/src/llm/decoder.o: CFLAGS += -fopenmp

$(B)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -MMD -MP -c $< -o $@

$(BA)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(SAN) -O1 -MMD -MP -c $< -o $@

# The tree's own archive: every object with its internal names, for the
# programs of this tree that use them (askdb-exec, the benchmarks).
$(B)/libaskdb.a: $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

# The archive make install installs exports only the API, as libaskdb.so
# does: the objects linked into one (ld -r), in which every global name
# but those of default visibility (ASKDB_API: the names libaskdb.so
# exports, build/api/api.syms) is made local, so that a program linking
# it statically may have its own buf_init or trace_open. What the library
# needs of other libraries (SQLite, curl, llama.cpp, ...) stays undefined
# for the program's link (tests/e2e/install.sh checks both).
$(B)/api/libaskdb.a: $(LIB_OBJ)
	@mkdir -p $(dir $@)
	@rm -f $@
	$(LD) -r -o $(B)/api/libaskdb.o $^
	readelf -Ws --wide $(B)/api/libaskdb.o | awk '$$5 == "GLOBAL" && \
	    $$6 == "DEFAULT" && $$7 != "UND" { print $$8 }' | LC_ALL=C sort -u \
	    > $(B)/api/api.syms
	objcopy --keep-global-symbols=$(B)/api/api.syms $(B)/api/libaskdb.o
	ar rcs $@ $(B)/api/libaskdb.o

# The shared library exports exactly the ASKDB_API functions: our objects
# are compiled with -fvisibility=hidden, and --exclude-libs keeps the
# symbols of the static llama.cpp libraries inside it. --no-undefined: every
# dependency is linked in (tests/e2e/install.sh checks both).
SO_LINK = $(CC) $(CFLAGS) -shared -Wl,-soname,$(SONAME) -Wl,--no-undefined \
          -Wl,--exclude-libs,ALL
$(B)/$(SOFILE): $(LIB_OBJ)
	$(SO_LINK) -o $@ $^ $(LIB_LDLIBS)

$(B)/$(SONAME): $(B)/$(SOFILE)
	ln -sf $(SOFILE) $@

$(B)/libaskdb.so: $(B)/$(SONAME)
	ln -sf $(SONAME) $@

$(BA)/libaskdb.a: $(LIBA_OBJ)
	@rm -f $@
	ar rcs $@ $^

# The askdb command runs its statements in askdb-exec beside it: building
# one builds both. It links the archive an embedder gets: the API alone.
$(B)/askdb: $(CLI_OBJ) $(B)/api/libaskdb.a $(B)/layers.ok $(B)/askdb-exec
	$(CC) $(CFLAGS) -o $@ $(filter-out %.ok %askdb-exec,$^) $(LDLIBS) \
	    $(FE_LIBS)

# askdb-exec links only what it uses of the library (the drivers).
EXEC_LDFLAGS := -Wl,--as-needed
$(B)/askdb-exec: $(EXEC_OBJ) $(B)/libaskdb.a
	$(CC) $(CFLAGS) -o $@ $^ $(EXEC_LDFLAGS) $(LDLIBS)

# What make install installs that finds libraries at run time, linked
# again without the build tree's run path into the cache and with the
# install's own (INST_RPATH_*, above): build/inst.flags holds them and
# changes with LIBDIR. The same objects and archives as the tree's.
INST_BIN := $(B)/inst/$(SOFILE) $(B)/inst/askdb $(B)/inst/askdb-exec
all: $(INST_BIN)
INST_STAMP := $(B)/inst.flags
INST_TEXT := $(INST_RPATH_LIB)|$(INST_RPATH_BIN)|$(INST_RPATH_EXEC)
$(shell echo '$(INST_TEXT)' | cmp -s - $(INST_STAMP) \
    || echo '$(INST_TEXT)' > $(INST_STAMP))
$(B)/inst/$(SOFILE): $(LIB_OBJ) $(INST_STAMP)
	@mkdir -p $(dir $@)
	$(SO_LINK) -o $@ $(LIB_OBJ) $(filter-out $(TREE_RPATH),$(LIB_LDLIBS)) \
	    $(INST_RPATH_LIB)

$(B)/inst/askdb: $(CLI_OBJ) $(B)/web_assets.o $(B)/api/libaskdb.a \
    $(B)/layers.ok $(INST_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $(filter-out %.ok %.flags,$^) \
	    $(filter-out $(TREE_RPATH),$(LDLIBS)) $(FE_LIBS) $(INST_RPATH_BIN)

$(B)/inst/askdb-exec: $(EXEC_OBJ) $(B)/libaskdb.a $(INST_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $(filter-out %.flags,$^) $(EXEC_LDFLAGS) \
	    $(filter-out $(TREE_RPATH),$(LDLIBS)) $(INST_RPATH_EXEC)

$(BA)/askdb-exec: $(EXECA_OBJ) $(BA)/libaskdb.a
	$(CC) $(CFLAGS) $(SAN) -o $@ $^ $(EXEC_LDFLAGS) $(LDLIBS)

$(B)/gen/openapi.c: src/server/openapi.json scripts/c_string.py
	@mkdir -p $(dir $@)
	python3 scripts/c_string.py srv_openapi_json $< $@

$(B)/gen/bank.c: data/bank.tsv scripts/c_string.py
	@mkdir -p $(dir $@)
	python3 scripts/c_string.py askdb_bank_tsv $< $@

$(B)/gen/bank.o: $(B)/gen/bank.c
	$(CC) $(CFLAGS) -c $< -o $@

$(BA)/gen/bank.o: $(B)/gen/bank.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@

$(B)/gen/openapi.o: $(B)/gen/openapi.c
	$(CC) $(FE_CPPFLAGS) $(CFLAGS) -c $< -o $@

$(BA)/gen/openapi.o: $(B)/gen/openapi.c
	@mkdir -p $(dir $@)
	$(CC) $(FE_CPPFLAGS) $(CFLAGS) $(SAN) -c $< -o $@

# The tree's shape (scripts/check_layers.py): layers, no include or symbol
# cycle, front ends on askdb.h alone. The build fails when it breaks.
$(B)/layers.ok: scripts/check_layers.py $(LIB_OBJ) $(CLI_OBJ) $(EXEC_OBJ)
	python3 scripts/check_layers.py --objects $(B)
	@touch $@

$(BA)/askdb: $(CLIA_OBJ) $(BA)/libaskdb.a $(BA)/askdb-exec
	$(CC) $(CFLAGS) $(SAN) -o $@ $(filter-out %askdb-exec,$^) $(LDLIBS) \
	    $(FE_LIBS)

# pkg-config's file, for the install prefix: build/pc.flags holds what it
# says and changes only with it. libcurl is linked by name, not required:
# Debian's libcurl.pc names, for static linking, libraries whose -dev
# packages libcurl4-openssl-dev does not install, so `pkg-config --static`
# would fail; libaskdb.a needs only libcurl itself.
PC_LIBDIR := $(patsubst $(PREFIX)/%,$${prefix}/%,$(LIBDIR))
PC_INCLUDEDIR := $(patsubst $(PREFIX)/%,$${prefix}/%,$(INCLUDEDIR))
PC_REQUIRES := $(filter-out libcurl libpq libmariadb,$(LIB_PKGS))
PC_LIBS_PRIVATE := -lcurl -lstemmer -lm -lpthread
# libpq likewise: Debian's libpq.pc names, for static linking, libpgcommon
# and libpgport, which libpq-dev does not install.
ifeq ($(HAVE_LIBPQ),1)
PC_LIBS_PRIVATE += -lpq
endif
# libmariadb by name as well: its .pc would add its include directory to
# every program's cflags, and askdb.h needs none of it.
ifeq ($(HAVE_MARIADB),1)
PC_LIBS_PRIVATE += -lmariadb
endif
ifneq ($(DUCKDB_PREFIX),)
PC_LIBS_PRIVATE += -L$${libdir}/askdb -lduckdb -Wl,-rpath,$${libdir}/askdb
endif
ifneq ($(LLAMA_ARCHIVES),)
PC_LIBS_PRIVATE += -L$${libdir}/askdb \
    $(patsubst lib%.a,-l%,$(notdir $(LLAMA_ARCHIVES))) \
    $(patsubst -fopenmp,-lgomp,$(filter-out %.a -lm -lpthread,$(LLAMA_LIBS)))
endif
PC_TEXT := $(PREFIX)|$(PC_LIBDIR)|$(PC_INCLUDEDIR)|$(VERSION)|$(PC_REQUIRES)|$(PC_LIBS_PRIVATE)
PC_STAMP := $(B)/pc.flags
$(shell echo '$(PC_TEXT)' | cmp -s - $(PC_STAMP) || echo '$(PC_TEXT)' > $(PC_STAMP))

$(B)/askdb.pc: askdb.pc.in $(PC_STAMP)
	sed -e 's|@prefix@|$(PREFIX)|' -e 's|@libdir@|$(PC_LIBDIR)|' \
	    -e 's|@includedir@|$(PC_INCLUDEDIR)|' -e 's|@version@|$(VERSION)|' \
	    -e 's|@requires_private@|$(PC_REQUIRES)|' \
	    -e 's|@libs_private@|$(strip $(PC_LIBS_PRIVATE))|' $< > $@.tmp
	mv $@.tmp $@

# The embedding example, built the way an embedder builds it: askdb.h as a
# user sees it (no ASKDB_BUILD) and the shared library.
$(B)/examples/embed: examples/embed.c include/askdb.h $(B)/libaskdb.so
	@mkdir -p $(dir $@)
	$(CC) $(WARN) $(OPT) -Iinclude -o $@ $< -L$(B) -laskdb \
	    -Wl,-rpath,$(abspath $(B))

install: $(INST_BIN) $(B)/api/libaskdb.a $(B)/askdb.pc
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(INCLUDEDIR) \
	    $(DESTDIR)$(LIBDIR) $(DESTDIR)$(PKGCONFIGDIR) $(DESTDIR)$(MANDIR)/man1 \
	    $(DESTDIR)$(LIBEXECDIR)
	install -m 755 $(B)/inst/askdb $(DESTDIR)$(BINDIR)/askdb
	install -m 755 $(B)/inst/askdb-exec $(DESTDIR)$(LIBEXECDIR)/askdb-exec
	install -m 644 include/askdb.h $(DESTDIR)$(INCLUDEDIR)/askdb.h
	install -m 644 $(B)/api/libaskdb.a $(DESTDIR)$(LIBDIR)/libaskdb.a
	install -m 755 $(B)/inst/$(SOFILE) $(DESTDIR)$(LIBDIR)/$(SOFILE)
	ln -sf $(SOFILE) $(DESTDIR)$(LIBDIR)/$(SONAME)
	ln -sf $(SONAME) $(DESTDIR)$(LIBDIR)/libaskdb.so
	install -m 644 $(B)/askdb.pc $(DESTDIR)$(PKGCONFIGDIR)/askdb.pc
	install -m 644 docs/askdb.1 $(DESTDIR)$(MANDIR)/man1/askdb.1
ifneq ($(LLAMA_ARCHIVES),)
	install -d $(DESTDIR)$(LIBDIR)/askdb
	install -m 644 $(LLAMA_ARCHIVES) $(DESTDIR)$(LIBDIR)/askdb/
endif
ifneq ($(DUCKDB_SO),)
	install -d $(DESTDIR)$(LIBDIR)/askdb
	install -m 755 $(DUCKDB_SO) $(DESTDIR)$(LIBDIR)/askdb/libduckdb.so
endif

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/askdb $(DESTDIR)$(INCLUDEDIR)/askdb.h \
	    $(DESTDIR)$(LIBDIR)/libaskdb.a $(DESTDIR)$(LIBDIR)/libaskdb.so \
	    $(DESTDIR)$(LIBDIR)/$(SONAME) $(DESTDIR)$(LIBDIR)/$(SOFILE) \
	    $(DESTDIR)$(PKGCONFIGDIR)/askdb.pc $(DESTDIR)$(MANDIR)/man1/askdb.1
	rm -rf $(DESTDIR)$(LIBDIR)/askdb
	rm -f $(DESTDIR)$(LIBEXECDIR)/askdb-exec
	-rmdir $(DESTDIR)$(LIBEXECDIR) 2>/dev/null

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

# test_db and test_api run the statements of some handles in askdb-exec
# too, the sanitizer build's (test_use_exec_helper() in testutil.h).
$(BA)/tests/test_db $(BA)/tests/test_api: | $(BA)/askdb-exec

# The MCP handler's test links the MCP front end's objects too, and the
# warm-up they use (before the library, which they need). The tools' call
# of askdb_agent_ask_opts() goes through the test's wrapper, which can
# cancel a call at the moment its question starts.
$(BA)/tests/test_mcp: tests/unit/test_mcp.c \
    $(filter-out $(BA)/src/mcp/cmd.o,$(filter $(BA)/src/mcp/%,$(CLIA_OBJ))) \
    $(BA)/src/cli/warm.o \
    $(BA)/libaskdb.a $(UNIT_HDR)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(SAN) -O1 -Itests \
	    -Wl,--wrap=askdb_agent_ask_opts -o $@ \
	    $(filter-out %.h,$^) \
	    $(shell pkg-config --cflags --libs cmocka) $(LDLIBS)

# /mcp's test links the front ends' objects but main's (askdb serve's
# /mcp needs the MCP handler and the stream code), with the body's
# reading wrapped so that a stop can begin while a POST is taken.
$(BA)/tests/test_mcp_http: tests/unit/test_mcp_http.c \
    $(filter-out $(BA)/src/cli/main.o,$(CLIA_OBJ)) $(BA)/web_assets.o \
    $(BA)/libaskdb.a $(UNIT_HDR)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(SAN) -O1 -Itests \
	    -Wl,--wrap=mcp_in_read -o $@ \
	    $(filter-out %.h,$^) \
	    $(shell pkg-config --cflags --libs cmocka) $(LDLIBS) $(FE_LIBS)

examples/shop.db: examples/shop.sql
	@rm -f $@.tmp
	sqlite3 $@.tmp < $<
	mv $@.tmp $@

test: unit e2e security e2e-duckdb security-duckdb

# askdb against a real PostgreSQL server: a private cluster in a temporary
# directory on a free loopback port, stopped at the end (tests/e2e/
# postgres.sh; needs Debian's postgresql, which scripts/deps.sh installs).
.PHONY: e2e-postgres
e2e-postgres: $(BA)/askdb $(BA)/fake_llm examples/shop.db
	ASKDB=$(BA)/askdb FAKE_LLM=$(BA)/fake_llm SHOP_DB=examples/shop.db \
	    bash tests/e2e/postgres.sh
test: e2e-postgres

# ASKDB_SMALL_MODEL: the small GGUF for the local-model tests. The tests
# fetch it first (scripts/models.sh small: checksums verified, cached in
# ~/.cache/askdb, nothing downloaded once there). SKIP_SMALL_MODEL=1 is the
# explicit opt-out: nothing fetched, and those tests skip and say so.
SKIP_SMALL_MODEL ?= 0
ifeq ($(SKIP_SMALL_MODEL),1)
SMALL_MODEL :=
else
SMALL_MODEL = $$(scripts/models.sh --path small)
endif

small-model:
ifneq ($(SKIP_SMALL_MODEL),1)
	scripts/models.sh small >/dev/null
endif

# SPIDER_DIR: Spider's training split, for tests over real databases.
SPIDER_DIR ?= $(wildcard ../shared/bench/spider-train)

unit: $(UNIT_BIN) $(BA)/fake_llm examples/shop.db small-model
	@set -e; small=$(SMALL_MODEL); for t in $(UNIT_BIN); do \
	    echo "== $$t"; FAKE_LLM=$(BA)/fake_llm SHOP_DB=examples/shop.db \
	    ASKDB_SMALL_MODEL=$$small SPIDER_DIR=$(SPIDER_DIR) $$t; \
	done

# install.sh installs the release build into a temporary prefix (the
# sub-make finds it built) and builds examples/embed.c against that copy.
e2e: $(BA)/askdb $(BA)/fake_llm examples/shop.db small-model \
     $(B)/askdb $(B)/api/libaskdb.a $(B)/libaskdb.so $(B)/askdb.pc
	ASKDB=$(BA)/askdb FAKE_LLM=$(BA)/fake_llm bash tests/e2e/run.sh
	ASKDB=$(BA)/askdb FAKE_LLM=$(BA)/fake_llm bash tests/e2e/eval.sh
	ASKDB=$(BA)/askdb bash tests/e2e/learn.sh
	ASKDB=$(BA)/askdb FAKE_LLM=$(BA)/fake_llm bash tests/e2e/mcp.sh
	ASKDB=$(BA)/askdb ASKDB_SMALL_MODEL=$(SMALL_MODEL) \
	    bash tests/e2e/local_smoke.sh
	MAKE="$(MAKE)" FAKE_LLM=$(BA)/fake_llm bash tests/e2e/install.sh
	scripts/mcp_venv.sh
	ASKDB=$(BA)/askdb FAKE_LLM=$(BA)/fake_llm \
	    $$(scripts/mcp_venv.sh --print-python) tests/e2e/serve_test.py

# The read-only guard against the attack corpus (tests/security/): every
# statement directly and as the model's reply, on a rollback-journal and a
# WAL copy, every file's sha256 checked after every run. The release
# build: the corpus is about the guard, and ASan would make it slow.
security: $(B)/askdb $(BA)/fake_llm examples/shop.db
	ASKDB=$(B)/askdb FAKE_LLM=$(BA)/fake_llm SHOP_DB=examples/shop.db \
	    python3 tests/security/run.py

# The MariaDB/MySQL driver against a private server that the test starts
# and stops itself (tests/e2e/mariadb.sh; mariadb-server from deps.sh).
.PHONY: mariadb-test
mariadb-test: $(BA)/askdb $(BA)/fake_llm examples/shop.db
ifeq ($(HAVE_MARIADB),1)
	ASKDB=$(BA)/askdb FAKE_LLM=$(BA)/fake_llm SHOP_DB=examples/shop.db \
	    bash tests/e2e/mariadb.sh
else
	@echo "mariadb-test: skipped: askdb is built without libmariadb-dev"
endif
test: mariadb-test

# The web page of `askdb serve` (src/server/web/, README "The web page"):
# its npm libraries fetched and verified by scripts/web_vendor.sh (pinned
# in src/server/web/vendor.lock), then all of it made into C by
# scripts/web_embed.py; askdb links $(B)/web_assets.o (src/server/http.c
# serves it). web-test runs the page in headless Chromium against askdb
# serve and the scripted model (tests/web/run.sh; screenshots in
# build/screenshots/).
WEB_VENDOR := $(B)/web/vendor
WEB_SRC    := $(wildcard src/server/web/*.html src/server/web/*.js \
                         src/server/web/*.css src/server/web/*.svg)
$(WEB_VENDOR)/.stamp: scripts/web_vendor.sh src/server/web/vendor.lock
	scripts/web_vendor.sh $(WEB_VENDOR)
$(B)/web_assets.c: scripts/web_embed.py $(WEB_SRC) $(WEB_VENDOR)/.stamp
	python3 scripts/web_embed.py --vendor $(WEB_VENDOR) -o $@
$(B)/web_assets.o: $(B)/web_assets.c src/server/web_assets.h
	$(CC) $(FE_CPPFLAGS) -Isrc/server $(CFLAGS) -c $< -o $@
$(BA)/web_assets.o: $(B)/web_assets.c src/server/web_assets.h
	@mkdir -p $(dir $@)
	$(CC) $(FE_CPPFLAGS) -Isrc/server $(CFLAGS) $(SAN) -c $< -o $@
$(B)/askdb: $(B)/web_assets.o
$(BA)/askdb: $(BA)/web_assets.o
.PHONY: web-assets web-test
web-assets: $(B)/web_assets.o
web-test: $(BA)/askdb $(BA)/fake_llm examples/shop.db
	ASKDB=$(BA)/askdb FAKE_LLM=$(BA)/fake_llm bash tests/web/run.sh
test: web-test

# DuckDB: the .duckdb, CSV and Parquet paths through the real binary, the
# guard against DuckDB's own escapes with every file's sha256 compared,
# time and size limits (tests/e2e/duckdb.sh). It says SKIP when this build
# has no DuckDB (scripts/duckdb.sh not run; .ci/run runs it).
e2e-duckdb: $(BA)/askdb $(BA)/fake_llm examples/shop.db
	ASKDB=$(BA)/askdb FAKE_LLM=$(BA)/fake_llm SHOP_DB=examples/shop.db \
	    bash tests/e2e/duckdb.sh

# The attack corpora on DuckDB (tests/security/duckdb_run.py): DuckDB's own
# escapes on shop.duckdb, orders.csv and orders.parquet, and SQLite's
# corpus, every file's sha256 checked after every run. Release build, as
# for `security`; SKIP without DuckDB.
security-duckdb: $(B)/askdb $(BA)/fake_llm examples/shop.db
	ASKDB=$(B)/askdb FAKE_LLM=$(BA)/fake_llm SHOP_DB=examples/shop.db \
	    python3 tests/security/duckdb_run.py

duckdb:
	scripts/duckdb.sh

# The local model, both into ~/.cache/askdb (checksums verified): llama.cpp
# as static libraries (about 5 minutes the first time) and the GGUF models
# (MODEL=default, small or all).
MODEL ?= all
llama:
	scripts/llama.sh

model:
	scripts/models.sh $(MODEL)

# From a fresh Debian machine to an answer by the default local model. The
# build runs in a sub-make so that it sees the llama.cpp and DuckDB just
# fetched (without DuckDB, .duckdb, .csv and .parquet files cannot be asked
# and `make test` skips their tests).
demo:
	scripts/deps.sh
	$(MAKE) llama
	$(MAKE) duckdb
	$(MAKE) model MODEL=default
	$(MAKE) all
	$(B)/askdb ask --show-sql examples/shop.db \
	    "Which 5 customers spent the most in 2024?"

# Time to first token with the local model (bench/local_ttft.c).
$(B)/local_ttft: bench/local_ttft.c $(B)/libaskdb.a
	$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $^ $(LDLIBS)

# What one decode step costs by the rows in its batch (bench/batch_rows.c;
# llama.cpp alone).
$(B)/batch_rows: bench/batch_rows.c src/llm/hugepage.c src/llm/hugepage.h
	$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ bench/batch_rows.c src/llm/hugepage.c \
	    $(LDLIBS)

# Whether a draft's rows in one batch get the logits of one-token steps
# (bench/draft_bits.c; llama.cpp alone).
$(B)/draft_bits: bench/draft_bits.c
	$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $^ $(LDLIBS)

# Token ids of text lines (bench/tokenize_lines.c, for bench/specsim.py).
$(B)/tokenize_lines: bench/tokenize_lines.c
	$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $^ $(LDLIBS)

# What a statement costs in askdb-exec against in-process (bench/
# exec_overhead.c); built beside askdb-exec, which it finds there.
$(B)/exec_overhead: bench/exec_overhead.c $(B)/libaskdb.a $(B)/askdb-exec
	$(CC) -Iinclude $(CFLAGS) -o $@ $< $(B)/libaskdb.a $(LDLIBS)

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
# schema extraction on a generated 2,000-table database (bench/run.sh);
# askdb serve under load on loopback with the scripted model
# (bench/serve_load.py). bench/serve_local.py (the local model, minutes)
# runs by hand.
bench: $(B)/libaskdb.a $(B)/askdb $(BA)/fake_llm
	bash bench/run.sh
	python3 bench/serve_load.py

check-layers: $(B)/layers.ok

check-banned:
	@! grep -nE '\b(strcpy|sprintf|strtok|atoi|gets)\s*\(' \
	    $(LIB_SRC) $(CLI_SRC) $(EXEC_SRC) tests/fake_llm/*.c || \
	    (echo "banned call found" >&2; exit 1)

clean:
	rm -rf $(B) examples/shop.db

-include $(LIB_OBJ:.o=.d) $(CLI_OBJ:.o=.d) $(LIBA_OBJ:.o=.d) $(CLIA_OBJ:.o=.d) \
    $(EXEC_OBJ:.o=.d) $(EXECA_OBJ:.o=.d)
