# syslogrx: build in the libbpf-bootstrap manner.
#
#   make            build everything into build/
#   make run        install missing Debian packages, build, run the demo
#   make test       install missing Debian packages, build, run every test (the Python
#                   tests in TEST_WORKERS processes, then those marked serial alone)
#   make test-sanitize  ASan+UBSan build in build-asan/ (units, fuzzer, integration),
#                   TSan build in build-tsan/ (the threaded paths); BPF stays build/'s
#   make bench      benchmarks (ratios against a reference measured in the same run)
#   make soak       10 minutes under rotation and destination restarts (not in CI)
#   make chaos      every fault (Toxiproxy) x output x disk buffer, as a table (not in CI)
#   make mutants    plant each bug of tests/mutants/mutants.txt, check its tests catch it
#                   (MUTANTS=id1,id2 for some; not part of make test)
#   make format     clang-format every C file in place (.clang-format)
#   make vmlinux    regenerate vmlinux/$(ARCH)/vmlinux.h from the running kernel
#   make install    syslogrx, udpdrops, udpbalance, their man pages, the systemd units, example
#                   config, alert rules, logrotate and sysctl.d files (PREFIX, DESTDIR)
#   make install-lab  the lab tools (sysloggen, drainrx) into $(LIBEXECDIR)/syslogrx
#   make image      the container image localhost/syslogrx:VERSION with podman (dist/Containerfile)
#   make test-container  the image's tests alone (make test runs them with the rest)
#   make deb        the Debian package build/deb/syslogrx_VERSION_ARCH.deb (debian/), lintian-checked
#   make V=1        show full commands
#
# Layout the rules rely on (add a file, not a rule):
#   bpf/NAME.bpf.c          -> build/NAME.bpf.o, build/NAME.skel.h
#   include/bpf/NAME.h      what bpf/NAME.bpf.c and user space share (structs, constants)
#   src/LAYER/**.c          -> build/libLAYER.a, one archive per layer (src/rx/main.c excepted;
#                              rx's rooms settings < sink < path < life < report are folders of it)
#   src/rx/main.c           -> build/syslogrx
#   tools/NAME.c            -> build/NAME
#   tests/unit/test_NAME.c  -> build/test_NAME (cmocka)
#   tests/fuzz/fuzz_NAME.c  -> build/fuzz_NAME (libFuzzer, with the layers FUZZ_LAYERS names)
# What each binary links is said once, below ("Link lines"): its layers, then its libraries.

OUTPUT     := build
# The BPF objects and skeletons: build/'s, also for the sanitized builds.
SKEL_OUTPUT ?= $(OUTPUT)
CLANG      ?= clang
CC         ?= cc
BPFTOOL    ?= bpftool
PYTHON     ?= /usr/bin/python3
ARCH       := $(shell uname -m | sed 's/x86_64/x86/' | sed 's/aarch64/arm64/')
VMLINUX    := vmlinux/$(ARCH)/vmlinux.h

# Debian packages the build, the tests and the lab need.
DEB_PKGS := clang llvm libbpf-dev bpftool libelf-dev zlib1g-dev libcmocka-dev \
            pkg-config iproute2 libclang-rt-14-dev python3 python3-pytest python3-pytest-xdist python3-yaml \
            python3-matplotlib syslog-ng-core procps librdkafka-dev kcat maven clang-format \
            libcurl4-openssl-dev libssl-dev \
            systemd systemd-container groff-base man-db linux-perf logrotate python3-pip \
            universal-ctags gdb strace debhelper lintian haproxy nftables
# What `make image` and the container tests need besides (make deps installs
# them too; `make image` installs only these): podman runs on runc here
# (lab/containers.conf says why), debootstrap makes a base with no registry.
CONTAINER_PKGS := podman runc debootstrap

ifeq ($(V),1)
	Q =
	msg =
else
	Q = @
	msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
	MAKEFLAGS += --no-print-directory
endif

# Before `make deps` has run, say so instead of failing on a missing compiler.
# Only goals that compile straight away check at parse time: the jobs that run
# `deps` first (run, test, bench, soak, the SC4S tables) build in a sub-make,
# which parses this file again once clang is there.
DEPS_FIRST_GOALS := deps container-deps image clean format run test test-sanitize bench soak chaos sc4s-table sc4s-replica
ifeq ($(filter $(DEPS_FIRST_GOALS),$(MAKECMDGOALS)),)
ifeq ($(shell command -v $(CLANG) 2>/dev/null),)
$(error $(CLANG) is not installed: run `make deps` (as root) first, or `make run` / `make test`, which do)
endif
endif

# clang's own system include dirs, after the BPF target's (libbpf-bootstrap).
CLANG_BPF_SYS_INCLUDES := $(shell $(CLANG) -v -E - </dev/null 2>&1 \
	| sed -n '/<...> search starts here:/,/End of search list./{ s| \(/.*\)|-idirafter \1|p }')

BPF_CFLAGS := -g -O2 -target bpf -mcpu=v3 -D__TARGET_ARCH_$(ARCH) \
	-Ivmlinux/$(ARCH) -Iinclude $(CLANG_BPF_SYS_INCLUDES) -Wall -Werror

# Includes name their layer: "common/log.h", "net/tracer.h", "rx/path/window.h";
# "bpf/balancer.h" is include/bpf/: what the BPF programs and user space share.
CFLAGS   ?= -g -O2
CFLAGS   += -std=gnu11 -Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers -Werror=implicit-function-declaration \
	    -D_GNU_SOURCE -Isrc -Iinclude -I$(SKEL_OUTPUT) -MMD -MP $(SAN_CFLAGS)
LDFLAGS  += $(SAN_CFLAGS)

LIBBPF_LIBS := $(shell pkg-config --libs libbpf 2>/dev/null || echo -lbpf -lelf -lz)
KAFKA_LIBS  := $(shell pkg-config --libs rdkafka 2>/dev/null || echo -lrdkafka)
CURL_LIBS   := $(shell pkg-config --libs libcurl 2>/dev/null || echo -lcurl)
# The tls output (RFC 5425): only syslogrx links it.
SSL_LIBS    := $(shell pkg-config --libs openssl 2>/dev/null || echo -lssl -lcrypto)

BPF_SRCS   := $(wildcard bpf/*.bpf.c)
SKELS      := $(patsubst bpf/%.bpf.c,$(SKEL_OUTPUT)/%.skel.h,$(BPF_SRCS))

# One archive per layer; dependencies point down: common <- syslog, net, gen <- rx.
LAYERS     := common syslog net gen rx
layer_srcs  = $(filter-out src/rx/main.c,$(shell find src/$(1) -name '*.c' | sort))
layer_objs  = $(patsubst src/%.c,$(OUTPUT)/src/%.o,$(call layer_srcs,$(1)))
ARCHIVES   := $(foreach l,$(LAYERS),$(OUTPUT)/lib$(l).a)

TOOL_SRCS  := $(wildcard tools/*.c)
TOOLS      := $(patsubst tools/%.c,$(OUTPUT)/%,$(TOOL_SRCS))
TEST_SRCS  := $(wildcard tests/unit/test_*.c)
TESTS      := $(patsubst tests/unit/%.c,$(OUTPUT)/%,$(TEST_SRCS))
FUZZ_SRCS  := $(wildcard tests/fuzz/fuzz_*.c)
FUZZERS    := $(patsubst tests/fuzz/%.c,$(OUTPUT)/%,$(FUZZ_SRCS))
APPS       := $(OUTPUT)/syslogrx $(TOOLS)

# ---- Link lines: each binary's layers (in link order) and libraries ----------
syslogrx_LAYERS   := rx net syslog common
syslogrx_LIBS     := $(KAFKA_LIBS) $(CURL_LIBS) $(SSL_LIBS) $(LIBBPF_LIBS) -lz -lpthread -lm
sysloggen_LAYERS  := gen syslog common
sysloggen_LIBS    := -lpthread -lm
udpdrops_LAYERS   := net common
udpdrops_LIBS     := $(LIBBPF_LIBS)
udpbalance_LAYERS := net common
udpbalance_LIBS   := $(LIBBPF_LIBS)
drainrx_LAYERS    := net syslog common
drainrx_LIBS      := $(LIBBPF_LIBS) -lpthread
# Unit tests: the layer they test and what it stands on (the default: all but rx).
TEST_LAYERS       := net gen syslog common
TEST_LIBS         := $(LIBBPF_LIBS) -lpthread -lm -lcmocka
test_config_LAYERS := rx net syslog common
test_config_LIBS  := $(KAFKA_LIBS) $(LIBBPF_LIBS) -lpthread -lm -lcmocka
test_config_file_LAYERS := $(test_config_LAYERS)
test_config_file_LIBS := $(test_config_LIBS)
test_config_check_LAYERS := $(test_config_LAYERS)
test_config_check_LIBS := $(test_config_LIBS)
test_advice_LAYERS := rx common
test_advice_LIBS  := -lm -lcmocka
test_reorder_LAYERS := rx net syslog common
test_reorder_LIBS := $(test_config_LIBS)
# The disk buffer's crc32 is zlib's (libbpf's dependency already, named here).
test_diskbuf_LAYERS := rx common
test_senders_LAYERS := rx net common
test_diskbuf_LIBS := -lz -lpthread -lcmocka
test_window_LAYERS := rx common
test_window_LIBS  := -lpthread -lcmocka
test_preformat_LAYERS := rx syslog common
test_preformat_LIBS := -lpthread -lm -lcmocka
# The fuzzers are built with sanitizers from these layers' sources.
FUZZ_LAYERS       := syslog common

.PHONY: image test-container container-deps mutants deb deb-root lab-setups
.PHONY: all run test test-sanitize sanitize-unit sanitize-unit-bins unit unit-bins integration fuzz bench soak chaos toxiproxy deps clean vmlinux demo sc4s-table sc4s-replica format install install-lab
.DELETE_ON_ERROR:
.SECONDARY:

all: $(APPS) $(TESTS)

# ---- set-up -----------------------------------------------------------------
# Installs only what is missing; a no-op on a machine that has it all.
define install_missing
	@missing=$$(for p in $(1); do \
		dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q '^install ok installed' || echo $$p; \
	done); \
	$(2) \
	if [ -n "$$missing" ]; then \
		echo "  DEPS     installing:" $$missing; \
		if [ "$$(id -u)" != 0 ]; then echo "make deps: root is needed to install:" $$missing >&2; exit 1; fi; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
	fi
endef

deps:
	$(call install_missing,$(DEB_PKGS) $(CONTAINER_PKGS),command -v java >/dev/null || missing="$$missing default-jre-headless";)

container-deps:
	$(call install_missing,$(CONTAINER_PKGS))

# ---- BPF --------------------------------------------------------------------
$(sort $(OUTPUT) $(SKEL_OUTPUT)):
	$(Q)mkdir -p $@

$(SKEL_OUTPUT)/%.bpf.o: bpf/%.bpf.c $(VMLINUX) | $(SKEL_OUTPUT)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -MMD -MP -MF $(@:.o=.d) -c $< -o $(@:.o=.tmp.o)
	$(Q)$(BPFTOOL) gen object $@ $(@:.o=.tmp.o)
	$(Q)rm -f $(@:.o=.tmp.o)

$(SKEL_OUTPUT)/%.skel.h: $(SKEL_OUTPUT)/%.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< > $@

# ---- user space -------------------------------------------------------------
# One compile rule for src/, tools/ and tests/: X.c -> $(OUTPUT)/X.o.
# Every user object waits for the skeletons: the first build has no .d files yet.
$(OUTPUT)/%.o: %.c | $(SKELS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -c $< -o $@

define layer_rule
$(OUTPUT)/lib$(1).a: $(call layer_objs,$(1))
	$$(call msg,AR,$$@)
	$(Q)rm -f $$@ && ar rcs $$@ $$^
endef
$(foreach l,$(LAYERS),$(eval $(call layer_rule,$(l))))

archives_of = $(foreach l,$(1),$(OUTPUT)/lib$(l).a)

$(OUTPUT)/syslogrx: $(OUTPUT)/src/rx/main.o $(call archives_of,$(syslogrx_LAYERS))
	$(call msg,BINARY,$@)
	$(Q)$(CC) $(LDFLAGS) $^ $(syslogrx_LIBS) -o $@

define tool_rule
$(OUTPUT)/$(1): $(OUTPUT)/tools/$(1).o $(call archives_of,$($(1)_LAYERS))
	$$(call msg,BINARY,$$@)
	$(Q)$$(CC) $$(LDFLAGS) $$^ $($(1)_LIBS) -o $$@
endef
$(foreach t,$(notdir $(TOOLS)),$(eval $(call tool_rule,$(t))))

define test_rule
$(OUTPUT)/$(1): $(OUTPUT)/tests/unit/$(1).o $(call archives_of,$(or $($(1)_LAYERS),$(TEST_LAYERS)))
	$$(call msg,BINARY,$$@)
	$(Q)$$(CC) $$(LDFLAGS) $$^ $(or $($(1)_LIBS),$(TEST_LIBS)) -o $$@
endef
$(foreach t,$(notdir $(TESTS)),$(eval $(call test_rule,$(t))))

# libFuzzer targets: clang, ASan + UBSan, built from the sources of FUZZ_LAYERS.
FUZZ_CFLAGS := -g -O1 -std=gnu11 -D_GNU_SOURCE -Isrc -Iinclude -I$(SKEL_OUTPUT) \
	-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
FUZZ_LIB_SRCS := $(foreach l,$(FUZZ_LAYERS),$(call layer_srcs,$(l)))
$(OUTPUT)/fuzz_%: tests/fuzz/fuzz_%.c $(FUZZ_LIB_SRCS) | $(OUTPUT) $(SKELS)
	$(call msg,FUZZ,$@)
	$(Q)$(CLANG) $(FUZZ_CFLAGS) $^ -lz -o $@

# ---- jobs -------------------------------------------------------------------
demo: all
	$(Q)lab/demo.sh

run: deps
	$(Q)$(MAKE) all
	$(Q)lab/demo.sh

unit-bins: $(TESTS)
unit: $(TESTS)
	$(Q)set -e; for t in $(TESTS); do echo "== $$t"; $$t; done

# The fuzzers at once (each one core for FUZZ_SECONDS), each on its own copy
# of the corpus; then each one's last line, or its last 40 on a failure.
fuzz: $(FUZZERS)
	$(Q)for f in $(FUZZERS); do \
		rm -rf $$f.corpus && cp -r tests/fuzz/corpus $$f.corpus || exit 1; \
		{ $$f -max_total_time=$${FUZZ_SECONDS:-20} -max_len=70000 $$f.corpus > $$f.log 2>&1; \
			echo $$? > $$f.rc; } & \
	done; wait; failed=0; for f in $(FUZZERS); do echo "== $$f ($${FUZZ_SECONDS:-20} s)"; \
		if [ "$$(cat $$f.rc)" = 0 ]; then tail -1 $$f.log; else tail -40 $$f.log; failed=1; fi; \
	done; exit $$failed
	$(Q)[ "$${PARSE_FUZZ_COUNT:-20000}" = 0 ] || echo "== the parse against syslog-ng ($${PARSE_FUZZ_COUNT:-20000} random headers)"
	$(Q)[ "$${PARSE_FUZZ_COUNT:-20000}" = 0 ] || PARSE_FUZZ_COUNT=$${PARSE_FUZZ_COUNT:-20000} PARSE_FUZZ_SEED=$${PARSE_FUZZ_SEED:-$$(date +%s)} \
		$(PYTHON) -m pytest -q tests/integration/receive/test_parse_fuzz_vs_syslog_ng.py $(PYTEST_ARGS)

# promtool, for tests/integration/operations/test_metrics.py: Debian's prometheus package
# unpacked under build/ (apt-get download + dpkg -x), never installed as a service.
PROMTOOL := $(OUTPUT)/prometheus/usr/bin/promtool
$(PROMTOOL):
	$(call msg,FETCH,$@)
	$(Q)lab/promtool-setup.sh $(OUTPUT)/prometheus >/dev/null

# kubernetes-validate (PyPI: Kubernetes' schemas and a validator), the oracle
# for dist/kubernetes/ in test_container_deploy.py: into build/, not system-wide.
K8S_VALIDATE := $(OUTPUT)/kubernetes-validate/kubernetes_validate/__init__.py
$(K8S_VALIDATE):
	$(call msg,FETCH,$(OUTPUT)/kubernetes-validate)
	$(Q)PIP_ROOT_USER_ACTION=ignore $(PYTHON) -m pip install -q --disable-pip-version-check --target $(OUTPUT)/kubernetes-validate \
		kubernetes-validate==1.37.0 >/dev/null

# The official protobuf runtime and OpenTelemetry's generated classes from
# PyPI, for tests/integration/outputs/test_otlp_strict.py: a strict decoder (it
# rejects a string that is not UTF-8) as the oracle for the OTLP encoder.
# Pinned; into build/pyproto only, never system-wide.
PYPROTO := $(OUTPUT)/pyproto/.complete
PYPROTO_PKGS := opentelemetry-proto==1.45.2 protobuf==7.36.2
$(PYPROTO):
	$(call msg,PIP,$(dir $@))
	$(Q)rm -rf $(dir $@) && $(PYTHON) -m pip install --quiet --disable-pip-version-check \
		--no-warn-script-location --root-user-action=ignore --target $(dir $@) $(PYPROTO_PKGS) && touch $@
pyproto: $(PYPROTO)

# Shopify's Toxiproxy (the fault proxy of test_chaos.py and make chaos), pinned,
# built with `go install` from the Go module proxy into build/toxiproxy
# (lab/toxiproxy-setup.sh; Debian 12's old go handled as for the collector).
TOXIPROXY := $(OUTPUT)/toxiproxy/toxiproxy-server
# Under the lock the tests take on the script (support.procs.lab_setup).
$(TOXIPROXY): lab/toxiproxy-setup.sh lab/go-toolchain.sh
	$(call msg,GO,$@)
	$(Q)flock lab/toxiproxy-setup.sh lab/toxiproxy-setup.sh $(OUTPUT)/toxiproxy >/dev/null && touch $@
toxiproxy: $(TOXIPROXY)

# The Python tests in two phases: those not marked serial in TEST_WORKERS
# processes at once (pytest-xdist; tests of a module that share its Kafka
# broker on one of them), then those marked serial (a global sysctl, a fixed
# port, podman, nspawn, SCHED_FIFO) alone. Exit 5 is "none selected" (a
# PYTEST_ARGS that picks no serial test). --durations=10: each phase ends
# with its 10 slowest tests (set-up and tear-down apart). TEST_PATHS: what
# runs, all of tests/ (tests/lab and tests/integration) or one feature's
# folder (TEST_PATHS=tests/integration/outputs).
TEST_WORKERS ?= 4
TEST_PATHS   ?= tests
TEST_TOOLS   := $(PROMTOOL) $(K8S_VALIDATE) $(PYPROTO)
integration: all $(TEST_TOOLS) deb-root
	$(Q){ $(PYTHON) -m pytest -q --durations=10 $(TEST_PATHS) -m "not serial" -n $(TEST_WORKERS) \
		--dist loadgroup $(PYTEST_ARGS) || [ $$? = 5 ]; } && \
	{ $(PYTHON) -m pytest -q --durations=10 $(TEST_PATHS) -m serial $(PYTEST_ARGS) || [ $$? = 5 ]; }

# After each phase, the seconds since make started (a failed phase too).
# "+": the line runs a sub-make (under make -n too), as a literal $(MAKE) would.
TEST_T0    := $(shell date +%s)
test_time   = printf '  TIME     %-24s %5d s\n' "$(strip $(1))" $$(( $$(date +%s) - $(TEST_T0) ))
# Each phase's make with a job per core: the builds (all, the ASan units) in parallel.
TEST_JOBS  ?= $(shell nproc)
test_phase  = $(MAKE) $(1) -j$(TEST_JOBS) && $(call test_time,$(firstword $(1))) || \
	{ $(call test_time,$(firstword $(1)) FAILED); exit 1; }
# The lab's set-ups that tests start on first use (Kafka's jars, then the
# Go builds: Toxiproxy, the collector), each under the lock the tests take
# on its script (support.procs.lab_setup): a test that needs one before it
# is done waits. The tests that need a Go build are handed out last
# (tests/integration/conftest.py).
lab-setups:
	$(Q)flock lab/kafka-setup.sh lab/kafka-setup.sh >/dev/null
	$(Q)$(MAKE) --no-print-directory $(TOXIPROXY)
	$(Q)flock lab/otelcol-setup.sh lab/otelcol-setup.sh >/dev/null

# The package's root (debootstrap: mostly the network and the disk) and the
# ASan units are made beside the build, not before the tests that use them.
# The integration tests' quick tools, then the lab's set-ups, are fetched and
# built in the background from the start (one at a time: they share the Go
# toolchain's fetch and apt), so no test worker spends minutes on a Go build;
# the integration phase waits for the quick tools only. At nice 10: the
# compile and the tests come first, the Go builds take what CPU they leave
# (the tests that need them are handed out last). One shell: the background
# job's process group is killed on every way out.
TEST_BG_LOG := $(OUTPUT)/test-setups.log
TEST_BG_CMD := $(MAKE) --no-print-directory $(TEST_TOOLS) && touch $(OUTPUT)/.test-tools; \
	$(MAKE) --no-print-directory lab-setups
# make -n test (the phases' sub-makes run dry): the background job is shown,
# not started (it clears MAKEFLAGS, so it would not run dry). -n is a letter
# of MAKEFLAGS' first word; the long options (--no-print-directory, above)
# are left out first, or their n would read as -n.
ifneq (,$(findstring n,$(firstword -$(filter-out --%,$(MAKEFLAGS)))))
test_bg_start = echo "background: $(TEST_BG_CMD)"; bg=
test_bg_wait  = true
else
test_bg_start = mkdir -p $(OUTPUT) && rm -f $(OUTPUT)/.test-tools && \
	{ MAKEFLAGS= setsid nice -n 10 sh -c '$(TEST_BG_CMD)' >$(TEST_BG_LOG) 2>&1 & bg=$$!; }
test_bg_wait  = while [ ! -e $(OUTPUT)/.test-tools ] && kill -0 $$bg 2>/dev/null; do sleep 1; done; \
	[ -e $(OUTPUT)/.test-tools ] || { echo "the tests' tools: see $(TEST_BG_LOG)"; tail -20 $(TEST_BG_LOG); }
endif
test: deps
	$(Q)+$(test_bg_start); \
	trap '[ -z "$$bg" ] || kill -- -$$bg 2>/dev/null' EXIT; \
	$(call test_phase,all $(FUZZERS) deb-root sanitize-unit-bins) && \
	$(call test_phase,unit) && \
	{ PARSE_FUZZ_COUNT=0 FUZZ_SECONDS=$${FUZZ_SECONDS:-15} $(call test_phase,fuzz); } && \
	$(call test_phase,sanitize-unit) && \
	{ $(test_bg_wait); } && \
	$(call test_phase,integration) && \
	$(call test_time,make test: all passed)

# ---- sanitizers (clang; libclang-rt-14-dev has their runtimes) ----------------
# The same sources with AddressSanitizer + UndefinedBehaviorSanitizer into
# build-asan/, ThreadSanitizer into build-tsan/; the BPF skeletons stay build/'s.
# Any report fails the run: UBSan does not recover, ASan and TSan exit non-zero.
SAN_ASAN := -g -O1 -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined
SAN_TSAN := -g -O1 -fno-omit-frame-pointer -fsanitize=thread
ASAN_MAKE = $(MAKE) OUTPUT=build-asan SKEL_OUTPUT=$(OUTPUT) CC=$(CLANG) SAN_CFLAGS="$(SAN_ASAN)"
TSAN_MAKE = $(MAKE) OUTPUT=build-tsan SKEL_OUTPUT=$(OUTPUT) CC=$(CLANG) SAN_CFLAGS="$(SAN_TSAN)"
export UBSAN_OPTIONS ?= print_stacktrace=1:halt_on_error=1
export TSAN_OPTIONS ?= halt_on_error=1:second_deadlock_stack=1:suppressions=$(CURDIR)/tests/tsan.supp

# The unit tests under ASan + UBSan (make test runs these; it builds them
# beside the plain build, sanitize-unit-bins, and runs them after).
sanitize-unit: $(SKELS)
	$(Q)$(ASAN_MAKE) unit
sanitize-unit-bins: $(SKELS)
	$(Q)$(ASAN_MAKE) unit-bins

# Units, fuzzer and integration tests under ASan + UBSan, then the threaded
# paths under TSan: the window's and the snapshot's units, and syslogrx
# itself through a live resize, metrics scrapes and the output stage.
# (test_install and test_container are left out: they check what `make install`
# and the image ship, which is build/'s.)
TSAN_INTEGRATION := tests/integration/lifecycle/test_live_resize.py \
	tests/integration/operations/test_metrics.py tests/integration/disk_buffer/test_disk_buffer.py \
	tests/integration/receive/test_window_shutdown.py tests/integration/receive/test_hostile_input.py
test-sanitize: deps
	$(Q)$(MAKE) all $(FUZZERS) $(PROMTOOL) $(PYPROTO) $(TOXIPROXY)
	$(Q)$(MAKE) fuzz
	$(Q)$(ASAN_MAKE) all
	$(Q)$(ASAN_MAKE) unit
	$(Q)ln -sfn ../$(OUTPUT)/prometheus build-asan/prometheus
	$(Q)SYSLOGRX_BUILD=$(CURDIR)/build-asan $(PYTHON) -m pytest -q tests \
		--ignore=tests/integration/operations/test_install.py --ignore=tests/integration/operations/test_container.py \
		--ignore=tests/integration/operations/test_container_deploy.py \
		--ignore=tests/integration/operations/test_container_docs.py $(PYTEST_ARGS)
	$(Q)$(TSAN_MAKE) all
	$(Q)$(TSAN_MAKE) build-tsan/test_window && build-tsan/test_window
	$(Q)ln -sfn ../$(OUTPUT)/prometheus build-tsan/prometheus
	$(Q)SYSLOGRX_BUILD=$(CURDIR)/build-tsan $(PYTHON) -m pytest -q $(TSAN_INTEGRATION) $(PYTEST_ARGS)

bench: deps
	$(Q)$(MAKE) all
	$(Q)$(PYTHON) lab/bench.py $(BENCH_ARGS)
	$(Q)$(PYTHON) lab/bench_otlp.py

# Each deliberate one-line bug of the table in a clean copy of the tree: its
# tests must fail. Prints killed/survived per mutant, the score and the time.
mutants: all
	$(Q)$(PYTHON) tests/mutants/run.py

# Long run, not in CI: RSS flat and the books closed to the message under
# file rotation (SIGHUP) and TCP destination restarts with --disk-buffer.
soak: deps
	$(Q)$(MAKE) all
	$(Q)$(PYTHON) lab/soak.py $(SOAK_ARGS)

# Every fault of the matrix against every output and disk-buffer mode, SIGTERM
# and kill -9 (lab/chaos.py, bounded by --minutes): the table on stdout and in
# build/chaos.md, the Faults table of docs/outputs.md among it. Not in CI.
chaos: deps
	$(Q)$(MAKE) all $(TOXIPROXY)
	$(Q)$(PYTHON) lab/chaos.py $(CHAOS_ARGS)

# The SC4S drop-rate table for this machine, with syslog-ng and rsyslog as rows.
sc4s-table: deps
	$(Q)$(MAKE) all
	$(Q)$(PYTHON) lab/sweep --preset sc4s --out results/sc4s-$$(date +%Y%m%d-%H%M%S)

# SC4S's published table reproduced cell by cell (calibrated --cost-ns, loggen).
sc4s-replica: deps
	$(Q)$(MAKE) all
	$(Q)$(PYTHON) lab/sweep --preset sc4s-replica --out results/sc4s-replica-$$(date +%Y%m%d-%H%M%S)

# ---- container image (dist/Containerfile, docs/container.md) ---------------
VERSION        := $(shell sed -n 's/.*argp_program_version = "syslogrx \(.*\)";/\1/p' src/rx/settings/config_options.c)
IMAGE          ?= localhost/syslogrx:$(VERSION)
# The base both stages start from; where it cannot be pulled, IMAGE_LOCAL_BASE
# is made once with debootstrap and kept in podman's storage.
IMAGE_BASE     ?= docker.io/library/debian:bookworm
IMAGE_LOCAL_BASE ?= localhost/syslogrx-base:bookworm
# source: compile in the build stage; tree: copy build/'s binaries.
IMAGE_BINARIES ?= source
# The project's podman settings (runc, ulimits), never the host's.
export CONTAINERS_CONF := $(CURDIR)/lab/containers.conf

# --layers=false: the build stage (852 MB with its compiler) is not kept as
# an untagged image, nor a cache of it; the image IMAGE named before is
# removed once the tag has moved on (unless it has other names or a container).
image: container-deps
	$(call msg,IMAGE,$(IMAGE))
	$(Q)old=$$(podman image inspect -f '{{.Id}}' $(IMAGE) 2>/dev/null || true); \
	base=$$(lab/container-base.sh $(IMAGE_BASE) $(IMAGE_LOCAL_BASE)) && \
		podman build -q --layers=false -f dist/Containerfile --build-arg BASE=$$base \
			--build-arg BINARIES=$(IMAGE_BINARIES) -t $(IMAGE) . >/dev/null && \
		if [ -n "$$old" ] && [ "$$old" != "$$(podman image inspect -f '{{.Id}}' $(IMAGE))" ]; then \
			podman rmi "$$old" >/dev/null 2>&1 || true; fi
	$(Q)podman image ls --format '  SIZE     {{.Repository}}:{{.Tag}} {{.Size}}' $(IMAGE)

# The image's tests build their own image from build/ (BINARIES=tree).
test-container: container-deps all $(K8S_VALIDATE)
	$(Q)$(PYTHON) -m pytest -q tests/integration/operations/test_container.py \
		tests/integration/operations/test_container_deploy.py tests/integration/operations/test_container_docs.py \
		$(PYTEST_ARGS)

# ---- install (dist/: what an installed system gets besides the binaries) ---
PREFIX     ?= /usr/local
BINDIR     ?= $(PREFIX)/bin
LIBEXECDIR ?= $(PREFIX)/libexec
MANDIR     ?= $(PREFIX)/share/man
DOCDIR     ?= $(PREFIX)/share/doc/syslogrx
UNITDIR    ?= $(PREFIX)/lib/systemd/system
SYSCTLDIR  ?= $(PREFIX)/lib/sysctl.d
SYSCONFDIR ?= /etc

# What an operator runs; the lab tools (a paced sender, a drain-only
# receiver) are not on PATH: `make install-lab`.
INSTALL_BINS := $(OUTPUT)/syslogrx $(OUTPUT)/udpdrops $(OUTPUT)/udpbalance
LAB_BINS     := $(OUTPUT)/sysloggen $(OUTPUT)/drainrx
MAN8         := $(patsubst $(OUTPUT)/%,dist/%.8,$(INSTALL_BINS))

# An existing syslogrx.conf or logrotate file is the admin's: kept (the
# example config goes to DOCDIR too).
install: $(INSTALL_BINS)
	$(call msg,INSTALL,$(DESTDIR)$(PREFIX))
	$(Q)install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man8 $(DESTDIR)$(DOCDIR) \
		$(DESTDIR)$(UNITDIR) $(DESTDIR)$(SYSCONFDIR)/syslogrx \
		$(DESTDIR)$(SYSCONFDIR)/logrotate.d $(DESTDIR)$(SYSCTLDIR)
	$(Q)install -m 0755 $(INSTALL_BINS) $(DESTDIR)$(BINDIR)/
	$(Q)install -m 0644 $(MAN8) $(DESTDIR)$(MANDIR)/man8/
	$(Q)install -m 0644 dist/sysctl.d/60-syslogrx.conf $(DESTDIR)$(SYSCTLDIR)/60-syslogrx.conf
	$(Q)[ -e $(DESTDIR)$(SYSCONFDIR)/logrotate.d/syslogrx ] || \
		install -m 0644 dist/logrotate/syslogrx $(DESTDIR)$(SYSCONFDIR)/logrotate.d/syslogrx
	$(Q)sed -e 's|@BINDIR@|$(BINDIR)|g' -e 's|@SYSCONFDIR@|$(SYSCONFDIR)|g' \
		dist/syslogrx.service.in > $(DESTDIR)$(UNITDIR)/syslogrx.service
	$(Q)chmod 0644 $(DESTDIR)$(UNITDIR)/syslogrx.service
	$(Q)sed -e 's|@BINDIR@|$(BINDIR)|g' -e 's|@SYSCONFDIR@|$(SYSCONFDIR)|g' \
		dist/syslogrx-unprivileged.service.in \
		> $(DESTDIR)$(UNITDIR)/syslogrx-unprivileged.service
	$(Q)chmod 0644 $(DESTDIR)$(UNITDIR)/syslogrx-unprivileged.service
	$(Q)install -m 0644 dist/syslogrx.conf $(DESTDIR)$(DOCDIR)/syslogrx.conf.example
	$(Q)install -m 0644 dist/syslogrx-alerts.yml $(DESTDIR)$(DOCDIR)/syslogrx-alerts.yml
	$(Q)install -m 0644 LICENSE $(DESTDIR)$(DOCDIR)/LICENSE
	$(Q)[ -e $(DESTDIR)$(SYSCONFDIR)/syslogrx/syslogrx.conf ] || \
		install -m 0644 dist/syslogrx.conf $(DESTDIR)$(SYSCONFDIR)/syslogrx/syslogrx.conf

install-lab: $(LAB_BINS)
	$(call msg,INSTALL,$(DESTDIR)$(LIBEXECDIR)/syslogrx)
	$(Q)install -d $(DESTDIR)$(LIBEXECDIR)/syslogrx
	$(Q)install -m 0755 $(LAB_BINS) $(DESTDIR)$(LIBEXECDIR)/syslogrx/

# ---- Debian package (debian/, docs/operating.md) ----------------------------
# What the package is built from (committed or new, not ignored), copied to
# build/deb/syslogrx-VERSION and built there by dpkg-buildpackage: its own
# build/, from scratch, as on a clean clone; the .deb, the .changes and the
# build log land in build/deb/. Then lintian: a warning or an error fails.
# debian/changelog's version must be the program's (a new version needs its
# changelog entry: `dch -v VERSION`).
DEB_TREE    := Makefile LICENSE debian src include bpf vmlinux tools dist
DEB_SRCS    := $(wildcard $(shell git ls-files -co --exclude-standard -- $(DEB_TREE) 2>/dev/null))
DEB_VERSION := $(shell awk 'NR == 1 { gsub(/[()]/, "", $$2); print $$2 }' debian/changelog)
DEB_ARCH    := $(shell dpkg --print-architecture 2>/dev/null)
DEB_DIR     := $(OUTPUT)/deb
DEB_FILE    := $(DEB_DIR)/syslogrx_$(DEB_VERSION)_$(DEB_ARCH).deb
deb: $(DEB_FILE)
$(DEB_FILE): $(DEB_SRCS)
	$(call msg,DEB,$@)
	$(Q)[ "$(DEB_VERSION)" = "$(VERSION)" ] || { echo "make deb: debian/changelog is at $(DEB_VERSION)," \
		"syslogrx at $(VERSION): add its entry (dch -v $(VERSION))" >&2; exit 1; }
	$(Q)rm -rf $(DEB_DIR) && mkdir -p $(DEB_DIR)/syslogrx-$(DEB_VERSION)
	$(Q)git ls-files -co --exclude-standard -z -- $(DEB_TREE) | tar --null --ignore-failed-read -T - -cf - \
		| tar -xf - -C $(DEB_DIR)/syslogrx-$(DEB_VERSION)
	$(Q)cd $(DEB_DIR)/syslogrx-$(DEB_VERSION) && dpkg-buildpackage -b -us -uc -jauto >../build.log 2>&1 || \
		{ tail -30 $(DEB_DIR)/build.log; echo "make deb: failed (whole log: $(DEB_DIR)/build.log;" \
			"unmet build dependencies: make deps)" >&2; exit 1; }
	$(Q)rm -rf $(DEB_DIR)/syslogrx-$(DEB_VERSION)
	$(call msg,LINTIAN,$@)
	$(Q)lintian --fail-on error,warning --info --allow-root $@

# A fresh Debian 12 root for tests/integration/operations/test_deb.py, with what the
# package depends on downloaded into its apt cache (lab/deb-root.sh).
DEB_ROOT    := $(OUTPUT)/deb-root
$(DEB_ROOT)/.deps: $(DEB_FILE) lab/deb-root.sh
	$(call msg,ROOT,$(DEB_ROOT))
	$(Q)lab/deb-root.sh $(DEB_ROOT) $(DEB_FILE) && touch $@
deb-root: $(DEB_ROOT)/.deps

format:
	$(call msg,FORMAT,src tools tests bpf)
	$(Q)clang-format -i $$(git ls-files '*.c' '*.h' | grep -v '^vmlinux/')

vmlinux:
	$(call msg,GEN,$(VMLINUX))
	$(Q)mkdir -p $(dir $(VMLINUX))
	$(Q)$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > $(VMLINUX)

clean:
	$(call msg,CLEAN)
	$(Q)rm -rf $(OUTPUT) build-asan build-tsan

# (Not the package's build and test root: build/deb*.)
-include $(shell find $(OUTPUT) -path '$(OUTPUT)/deb*' -prune -o -name '*.d' -type f -print 2>/dev/null)
