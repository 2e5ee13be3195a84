# dynrec -- plain Makefile.  `make demo` and `make test` first run
# tools/setup.sh, which installs whatever is missing (idempotently), and then
# build in a sub-make that can ask the venv's Python for its flags.

VENV    ?= .venv
PY      ?= $(VENV)/bin/python
BUILD   ?= build
CC      ?= cc

# python3-config of the interpreter behind the venv.
PYCONFIG = $(shell $(PY) -c 'import sys, os; print(os.path.join(sys.base_prefix, "bin", "python%d.%d-config" % sys.version_info[:2]))' 2>/dev/null)
PY_CFLAGS = $(shell $(PYCONFIG) --includes 2>/dev/null)
PY_LDFLAGS = $(shell $(PYCONFIG) --embed --ldflags 2>/dev/null) -Wl,-rpath,$(shell $(PY) -c 'import sysconfig; print(sysconfig.get_config_var("LIBDIR"))' 2>/dev/null)

WARN    := -std=c11 -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes
CFLAGS  ?= -O2 -g
SAN     :=
# The venv a `run` uses when VIRTUAL_ENV is unset; empty for `pip install`,
# whose binary finds the environment it is installed in (recorder/run.c).
DEFAULT_VENV ?= $(abspath $(VENV))
ALL_CFLAGS = $(WARN) $(CFLAGS) $(SAN) -I$(BUILD) -DDR_DEFAULT_VENV='"$(DEFAULT_VENV)"'
LIBS    := -lsqlite3 -lzstd -lseccomp -lpthread

SCHEMA_SRC   := schema/error.c schema/codec.c schema/trace.c schema/json.c schema/text.c schema/ident.c schema/sign.c \
                schema/mask.c
# The trace writer of `dynrec pack`: dynrec only (not in SCHEMA_SRC, which
# the extension module and the test library link too).
PACK_SRC     := schema/pack.c
# The small containers (arena, string vector, map, buffer) of the replayer,
# the CLI and pack.
COMMON_SRC   := common/util.c
RECORDER_SRC := recorder/writer.c recorder/hook.c recorder/session.c recorder/run.c recorder/output.c recorder/around.c recorder/pycompat.c \
                recorder/embed.c
VIEWER_SRC   := viewer/show.c viewer/export.c viewer/report.c
# `dynrec sql` and its SQL functions (sqlfuncs.c is also the SQLite extension).
SQL_SRC      := sql/sqlfuncs.c sql/sql.c
# The terminal viewer is the only user of ncurses: only dynrec links it.
VIEW_SRC     := viewer/view.c viewer/view_doc.c viewer/view_text.c
VIEW_LIBS    := -lncursesw
REPLAYER_SRC := replayer/model.c replayer/compare.c replayer/child.c replayer/rerun.c replayer/replay.c replayer/sandbox.c \
                replayer/repro.c
# The command line: one file per command, and the option parser.
CLI_SRC      := $(wildcard cli/*.c)
DYNREC_SRC   := dynrec.c $(CLI_SRC) $(SCHEMA_SRC) $(PACK_SRC) $(COMMON_SRC) $(RECORDER_SRC) $(VIEWER_SRC) $(SQL_SRC) \
                $(VIEW_SRC) $(REPLAYER_SRC)
TEST_SRC     := tests/test_codec.c tests/test_trace.c tests/test_writer.c tests/test_e2e.c \
                tests/e2e_util.c tests/test_sandbox.c tests/test_dynamo.c tests/unit_util.c tests/test_compare.c \
                tests/test_replay.c tests/test_pack.c tests/test_tools.c tests/test_view.c \
                tests/test_repro.c tests/test_mask.c tests/test_identity.c tests/test_sanitize.c \
                tests/test_hostile_values.c tests/test_hostile_trace.c tests/test_identical.c tests/test_cli.c tests/test_ranks.c \
                tests/test_ident.c \
                viewer/view_text.c
# The in-process recorder's and torchrun's suites (their own line).
TEST_SRC     += tests/test_inproc.c tests/test_dist.c
TEST_SRC     += tests/test_model.c tests/test_escape.c
TEST_LIB_SRC := $(SCHEMA_SRC) recorder/writer.c common/util.c replayer/model.c replayer/compare.c viewer/report.c
HEADERS      := $(wildcard cli/*.h common/*.h schema/*.h recorder/*.h viewer/*.h sql/*.h replayer/*.h) $(BUILD)/embedded_py.h $(BUILD)/default_dict.h

# The recorder as an extension module (recorder/inproc.c), for `import
# dynrec` in a running interpreter, and the package it belongs to laid out
# as pip installs it: $(PKG) is python/dynrec's files, the extension and
# _bin/dynrec.  PYTHONPATH=$(BUILD)/pkg makes `import dynrec` this build.
# Never with $(SAN): the venv's python is not instrumented.
EXT_SUFFIX = $(shell $(PY) -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))' 2>/dev/null)
PKG        := $(BUILD)/pkg/dynrec
INPROC_SRC := recorder/inproc.c recorder/session.c recorder/writer.c recorder/hook.c recorder/around.c recorder/pycompat.c \
              recorder/embed.c \
              $(SCHEMA_SRC)
PKG_FILES  := $(wildcard python/dynrec/*.py python/dynrec/*.pyi) python/dynrec/py.typed

.PHONY: all setup pkg demo test check unit asan bench clean format format-check fuzz test-compat

all: setup
	@$(MAKE) --no-print-directory $(BUILD)/dynrec $(BUILD)/dynrec_sqlite.so pkg

setup:
	@tools/setup.sh

demo: setup
	@$(MAKE) --no-print-directory $(BUILD)/dynrec $(BUILD)/dynrec_sqlite.so
	$(BUILD)/dynrec run -o $(BUILD)/demo.db examples/quickstart.py
	$(BUILD)/dynrec show $(BUILD)/demo.db

test: setup
	@$(MAKE) --no-print-directory check
	@$(MAKE) --no-print-directory asan

# The test suite against the normal build, after the C format check, the
# lint of all of dynrec's Python (ruff) and the public Python API's type check (mypy --strict over
# python/dynrec, with the extension's stub).
check: $(BUILD)/dynrec $(BUILD)/tests $(BUILD)/dynrec_sqlite.so pkg
	@$(MAKE) --no-print-directory format-check
	$(PY) -m ruff check --no-cache --quiet $(PY_LINT)
	$(PY) -m mypy --strict --no-error-summary --cache-dir $(BUILD)/mypy-cache python/dynrec
	DYNREC_BIN=$(abspath $(BUILD)/dynrec) DYNREC_PYTHON=$(abspath $(PY)) DYNREC_PKG=$(abspath $(BUILD)/pkg) \
	    $(BUILD)/tests --jobs 2

# The same tests built and run with AddressSanitizer and UBSan.  CPython
# and torch are not instrumented and keep their allocations at exit, so leak
# checking is on for the unit tests and off inside the recorded runs.
asan:
	@$(MAKE) --no-print-directory BUILD=$(BUILD)/asan SAN='-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all' CFLAGS='-O1 -g' $(BUILD)/asan/dynrec $(BUILD)/asan/tests $(BUILD)/asan/dynrec_sqlite.so
	@$(MAKE) --no-print-directory pkg
	ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
	LSAN_OPTIONS=suppressions=$(abspath tests/lsan.supp) \
	DYNREC_BIN=$(abspath $(BUILD)/asan/dynrec) DYNREC_PYTHON=$(abspath $(PY)) DYNREC_ASAN=1 \
	DYNREC_PKG=$(abspath $(BUILD)/pkg) \
	    $(BUILD)/asan/tests --jobs 2

# dynrec's Python sources, compiled into the binary as C strings and as
# code marshalled by the venv's Python (tools/embed_py.py): the table
# dr_embedded[] of recorder/embed.c, which builds the modules _dynrec.NAME
# from it (named "<dynrec recorder/dynamo.py>" in tracebacks).  PY_LINT is
# what `make check` runs ruff over (pyproject.toml [tool.ruff]).
EMBED_PY := recorder/adapter.py recorder/dynamo.py recorder/dynamo_spec.py recorder/capture.py \
            replayer/value_kinds.py replayer/recorded.py replayer/definitions.py replayer/replay.py replayer/repro_values.py \
            replayer/repro.py
PY_LINT  := $(EMBED_PY) python/dynrec
$(BUILD)/embedded_py.h: $(EMBED_PY) tools/embed_py.py
	@mkdir -p $(BUILD)
	@$(PY) tools/embed_py.py $@ $(EMBED_PY)

# The default zstd dictionary (tools/train_dict.sh), as a C array.
$(BUILD)/default_dict.h: schema/default.dict
	@mkdir -p $(BUILD)
	@{ echo '/* generated from $< by the Makefile */'; \
	  echo 'static const unsigned char dr_default_dict[] = {'; \
	  od -An -v -tx1 $< | sed -e 's/\([0-9a-f][0-9a-f]\)/0x\1,/g'; \
	  echo '};'; } > $@

$(BUILD)/train_dict: tools/train_dict.c $(SCHEMA_SRC)
	@mkdir -p $(BUILD)
	$(CC) $(ALL_CFLAGS) -o $@ $^ $(LIBS)

# The dynrec binary links SQLite, zstd, libseccomp and ncurses statically
# where their archives are installed (Debian's -dev packages ship them):
# every library the program loads later (torch's, a user's extension) looks
# each of its symbols up in the executable's libraries first, so shared
# ones would cost a recording ~20M instructions of symbol lookups while
# torch loads, and would bind a user's extension to dynrec's copy of zstd
# or SQLite.  Without the archives, the shared libraries.
static_a = $(filter /%,$(shell $(CC) -print-file-name=lib$(1).a 2>/dev/null))
STATIC_LIBS := -Wl,-Bstatic -lsqlite3 -lzstd -lseccomp -lncursesw -ltinfo -Wl,-Bdynamic -lpthread -lm -ldl
DYNREC_LIBS = $(if $(and $(call static_a,sqlite3),$(call static_a,zstd),$(call static_a,seccomp),$(call static_a,ncursesw),$(call static_a,tinfo)),\
              $(STATIC_LIBS),$(LIBS) $(VIEW_LIBS))

$(BUILD)/dynrec: $(DYNREC_SRC) $(HEADERS)
	@mkdir -p $(BUILD)
	$(CC) $(ALL_CFLAGS) $(PY_CFLAGS) -o $@ $(DYNREC_SRC) $(PY_LDFLAGS) $(DYNREC_LIBS)

pkg: $(PKG)/_dynrec$(EXT_SUFFIX) $(PKG)/_bin/dynrec $(addprefix $(PKG)/,$(notdir $(PKG_FILES)))

$(PKG)/_dynrec$(EXT_SUFFIX): $(INPROC_SRC) $(HEADERS)
	@mkdir -p $(PKG)
	$(CC) $(WARN) $(CFLAGS) -I$(BUILD) $(PY_CFLAGS) -fPIC -shared -fvisibility=hidden -o $@ \
	    $(INPROC_SRC) -lsqlite3 -lzstd -lpthread

$(PKG)/_bin/dynrec: $(BUILD)/dynrec
	@mkdir -p $(PKG)/_bin
	@ln -sf $(abspath $<) $@

$(PKG)/%: python/dynrec/%
	@mkdir -p $(PKG)
	@ln -sf $(abspath $<) $@

# dynrec_text and dynrec_json as a loadable SQLite extension (`.load
# build/dynrec_sqlite` in the sqlite3 shell).  Never with $(SAN): a stock
# sqlite3 cannot load an ASan-instrumented library.
$(BUILD)/dynrec_sqlite.so: sql/sqlfuncs.c schema/codec.c schema/error.c schema/ident.c sql/sqlfuncs.h schema/codec.h schema/error.h schema/ident.h
	@mkdir -p $(BUILD)
	$(CC) $(WARN) $(CFLAGS) -fPIC -shared -fvisibility=hidden -DDR_SQLITE_EXTENSION -o $@ \
	    sql/sqlfuncs.c schema/codec.c schema/error.c schema/ident.c -lzstd

$(BUILD)/tests: $(TEST_SRC) $(TEST_LIB_SRC) $(HEADERS)
	@mkdir -p $(BUILD)
	$(CC) $(ALL_CFLAGS) -Ischema -Irecorder -Wno-strict-prototypes -o $@ $(TEST_SRC) $(TEST_LIB_SRC) -lcriterion $(LIBS)

# The compatibility matrix (tools/compat.sh): dynrec built for each CPython
# 3.10-3.13 x torch (tools/requirements-compat.txt) that installs here, in
# cached venvs outside the checkout, and the end-to-end suites run against
# each.  COMPAT='py3.12:2.13.0 ...' picks combinations.  Downloads several
# GB the first time; not part of `make test`.
test-compat: setup
	@$(MAKE) --no-print-directory $(BUILD)/tests
	tools/compat.sh $(COMPAT)

bench: setup
	@$(MAKE) --no-print-directory $(BUILD)/dynrec $(BUILD)/writer_bench $(BUILD)/open_bench
	bench/run_all.sh

$(BUILD)/writer_bench: bench/writer_bench.c $(TEST_LIB_SRC) $(HEADERS)
	$(CC) $(ALL_CFLAGS) -o $@ bench/writer_bench.c $(TEST_LIB_SRC) $(LIBS)

$(BUILD)/open_bench: bench/open_bench.c $(SCHEMA_SRC) $(VIEWER_SRC) $(SQL_SRC) $(HEADERS)
	$(CC) $(ALL_CFLAGS) -o $@ bench/open_bench.c $(SCHEMA_SRC) $(VIEWER_SRC) $(SQL_SRC) $(LIBS)

$(BUILD)/dict_bench: bench/dict_bench.c schema/codec.c schema/error.c
	$(CC) $(ALL_CFLAGS) -o $@ $^ -lzstd

# Fuzzing with libFuzzer (clang, installed by `tools/setup.sh --fuzz`):
# each target runs FUZZ_TIME seconds (default 60) from the seed corpus in
# tests/fuzz/corpus/ plus what earlier runs found (build/fuzz/corpus-*),
# after replaying every input in tests/fuzz/regressions/ (past crashes).
# The replay's value-tree parser is Python: the driver damages FUZZ_TREES
# copies of each seed trace's trees itself (DYNREC_REPLAY_FUZZ).
FUZZ_TIME ?= 60
FUZZ_TREES ?= 20000
FUZZ_CC   ?= clang
FUZZ_FLAGS = -std=c11 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
             -I$(BUILD) -DDR_DEFAULT_VENV='""'
FUZZ_TARGETS := codec trace
REPLAYER_LIB := $(COMMON_SRC) replayer/model.c replayer/compare.c

fuzz:
	@tools/setup.sh --fuzz
	@$(MAKE) --no-print-directory $(BUILD)/default_dict.h
	@mkdir -p $(BUILD)/fuzz
	$(FUZZ_CC) $(FUZZ_FLAGS) -o $(BUILD)/fuzz/fuzz_codec tests/fuzz/fuzz_codec.c schema/codec.c schema/error.c -lzstd
	$(FUZZ_CC) $(FUZZ_FLAGS) -o $(BUILD)/fuzz/fuzz_trace tests/fuzz/fuzz_trace.c $(SCHEMA_SRC) $(VIEWER_SRC) $(SQL_SRC) \
	    viewer/view_doc.c viewer/view_text.c $(REPLAYER_LIB) $(LIBS)
	@for t in $(FUZZ_TARGETS); do \
	    mkdir -p $(BUILD)/fuzz/corpus-$$t; \
	    if ls tests/fuzz/regressions/$$t/* >/dev/null 2>&1; then \
	        $(BUILD)/fuzz/fuzz_$$t tests/fuzz/regressions/$$t/* || exit 1; fi; \
	    echo "fuzz: $$t for $(FUZZ_TIME) s"; \
	    $(BUILD)/fuzz/fuzz_$$t -max_total_time=$(FUZZ_TIME) -timeout=20 -rss_limit_mb=2048 \
	        -print_final_stats=1 -artifact_prefix=$(BUILD)/fuzz/crash-$$t- \
	        $(BUILD)/fuzz/corpus-$$t tests/fuzz/corpus/$$t 2>$(BUILD)/fuzz/$$t.log || \
	        { tail -40 $(BUILD)/fuzz/$$t.log; exit 1; }; \
	    grep -E "stat::number_of_executed_units|stat::peak_rss_mb" $(BUILD)/fuzz/$$t.log; \
	done
	@$(MAKE) --no-print-directory $(BUILD)/dynrec
	@echo "fuzz: the replay's value-tree parser, $(FUZZ_TREES) damaged trees per seed trace"
	@for db in tests/fuzz/corpus/trace/*.db; do \
	    DYNREC_REPLAY_TRUST=1 DYNREC_REPLAY_FUZZ=$(FUZZ_TREES) $(BUILD)/dynrec run -q \
	        -o $(BUILD)/fuzz/replay-fuzz.db --replay-of $$db || exit 1; \
	done

# Every C file, in the style of .clang-format: `make format` applies it,
# `make check` (format-check) fails on a file that differs.
FORMAT_SRC := $(wildcard dynrec.c cli/*.[ch] common/*.[ch] schema/*.[ch] recorder/*.[ch] viewer/*.[ch] \
                sql/*.[ch] replayer/*.[ch] tests/*.[ch] tests/fuzz/*.c bench/*.c tools/*.c)
format:
	clang-format -i $(FORMAT_SRC)

format-check:
	@clang-format --dry-run -Werror $(FORMAT_SRC) || \
	    { echo "make check: C files differ from .clang-format; run make format" >&2; exit 1; }

clean:
	rm -rf $(BUILD)
