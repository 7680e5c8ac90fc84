# syslogrx: build in the libbpf-bootstrap manner.
#
#   make            build everything into build/
#   make run        install missing Debian packages, build, run the demo
#   make test       install missing Debian packages, build, run every test
#   make test-sanitize  ASan+UBSan build in build-asan/ (units, fuzzer, integration),
#                   TSan build in build-tsan/ (the threaded paths); BPF stays build/'s
#   make bench      benchmarks (ratios against a reference measured in the same run)
#   make soak       10 minutes under rotation and destination restarts (not in CI)
#   make format     clang-format every C file in place (.clang-format)
#   make vmlinux    regenerate vmlinux/$(ARCH)/vmlinux.h from the running kernel
#   make install    binaries, systemd unit, man page, example config, alert rules (PREFIX, DESTDIR)
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
            pkg-config iproute2 libclang-rt-14-dev python3 python3-pytest \
            python3-matplotlib syslog-ng-core procps librdkafka-dev kcat maven clang-format \
            libmicrohttpd-dev libcurl4-openssl-dev libssl-dev \
            systemd systemd-container groff-base man-db linux-perf

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
DEPS_FIRST_GOALS := deps clean format run test test-sanitize bench soak sc4s-table sc4s-replica
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
MHD_LIBS    := $(shell pkg-config --libs libmicrohttpd 2>/dev/null || echo -lmicrohttpd)
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
syslogrx_LIBS     := $(KAFKA_LIBS) $(CURL_LIBS) $(SSL_LIBS) $(LIBBPF_LIBS) $(MHD_LIBS) -lz -lpthread -lm
sysloggen_LAYERS  := gen syslog common
sysloggen_LIBS    := -lpthread -lm
udpdrops_LAYERS   := net common
udpdrops_LIBS     := $(LIBBPF_LIBS) $(MHD_LIBS)
udpbalance_LAYERS := net common
udpbalance_LIBS   := $(LIBBPF_LIBS)
drainrx_LAYERS    := net syslog common
drainrx_LIBS      := $(LIBBPF_LIBS) -lpthread
# Unit tests: the layer they test and what it stands on (the default: all but rx).
TEST_LAYERS       := net gen syslog common
TEST_LIBS         := $(LIBBPF_LIBS) -lpthread -lm -lcmocka
test_config_LAYERS := rx net syslog common
test_config_LIBS  := $(KAFKA_LIBS) $(LIBBPF_LIBS) $(MHD_LIBS) -lpthread -lm -lcmocka
test_config_file_LAYERS := $(test_config_LAYERS)
test_config_file_LIBS := $(test_config_LIBS)
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
# The fuzzers are built with sanitizers from these layers' sources.
FUZZ_LAYERS       := syslog common

.PHONY: all run test test-sanitize sanitize-unit unit integration fuzz bench soak deps clean vmlinux demo sc4s-table sc4s-replica format install
.DELETE_ON_ERROR:
.SECONDARY:

all: $(APPS) $(TESTS)

# ---- set-up -----------------------------------------------------------------
# Installs only what is missing; a no-op on a machine that has it all.
deps:
	@missing=$$(for p in $(DEB_PKGS); do \
		dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q '^install ok installed' || echo $$p; \
	done); \
	command -v java >/dev/null || missing="$$missing default-jre-headless"; \
	if [ -n "$$missing" ]; then \
		echo "  DEPS     installing:" $$missing; \
		if [ "$$(id -u)" != 0 ]; then echo "make deps: root is needed to install:" $$missing >&2; exit 1; fi; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
	fi

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
# Every user object waits for the skeletons: the first build has no .d files yet.
$(OUTPUT)/src/%.o: src/%.c | $(SKELS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -c $< -o $@

$(OUTPUT)/tools/%.o: tools/%.c | $(SKELS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -c $< -o $@

$(OUTPUT)/tests/%.o: tests/%.c | $(SKELS)
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

unit: $(TESTS)
	$(Q)set -e; for t in $(TESTS); do echo "== $$t"; $$t; done

fuzz: $(FUZZERS)
	$(Q)set -e; for f in $(FUZZERS); do echo "== $$f ($${FUZZ_SECONDS:-20} s)"; \
		rm -rf $(OUTPUT)/corpus && cp -r tests/fuzz/corpus $(OUTPUT)/corpus; \
		$$f -max_total_time=$${FUZZ_SECONDS:-20} -max_len=70000 $(OUTPUT)/corpus > $(OUTPUT)/fuzz.log 2>&1 \
			|| { tail -40 $(OUTPUT)/fuzz.log; exit 1; }; tail -1 $(OUTPUT)/fuzz.log; done

# promtool, for tests/integration/test_metrics.py: Debian's prometheus package
# unpacked under build/ (apt-get download + dpkg -x), never installed as a service.
PROMTOOL := $(OUTPUT)/prometheus/usr/bin/promtool
$(PROMTOOL):
	$(call msg,FETCH,$@)
	$(Q)lab/promtool-setup.sh $(OUTPUT)/prometheus >/dev/null

integration: all $(PROMTOOL)
	$(Q)$(PYTHON) -m pytest -q tests $(PYTEST_ARGS)

test: deps
	$(Q)$(MAKE) all $(FUZZERS)
	$(Q)$(MAKE) unit
	$(Q)$(MAKE) fuzz
	$(Q)$(MAKE) sanitize-unit
	$(Q)$(MAKE) integration

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

# The unit tests under ASan + UBSan (make test runs these).
sanitize-unit: $(SKELS)
	$(Q)$(ASAN_MAKE) unit

# Units, fuzzer and integration tests under ASan + UBSan, then the threaded
# paths under TSan: the window's and the snapshot's units, and syslogrx
# itself through a live resize, metrics scrapes and the output stage.
# (test_install is left out: it checks that `make install` ships build/.)
TSAN_INTEGRATION := tests/integration/test_live_resize.py tests/integration/test_metrics.py \
	tests/integration/test_disk_buffer.py \
	tests/integration/test_window_shutdown.py tests/integration/test_hostile_input.py
test-sanitize: deps
	$(Q)$(MAKE) all $(FUZZERS) $(PROMTOOL)
	$(Q)$(MAKE) fuzz
	$(Q)$(ASAN_MAKE) all
	$(Q)$(ASAN_MAKE) unit
	$(Q)ln -sfn ../$(OUTPUT)/prometheus build-asan/prometheus
	$(Q)SYSLOGRX_BUILD=$(CURDIR)/build-asan $(PYTHON) -m pytest -q tests \
		--ignore=tests/integration/test_install.py $(PYTEST_ARGS)
	$(Q)$(TSAN_MAKE) all
	$(Q)$(TSAN_MAKE) build-tsan/test_window && build-tsan/test_window
	$(Q)ln -sfn ../$(OUTPUT)/prometheus build-tsan/prometheus
	$(Q)SYSLOGRX_BUILD=$(CURDIR)/build-tsan $(PYTHON) -m pytest -q $(TSAN_INTEGRATION) $(PYTEST_ARGS)

bench: deps
	$(Q)$(MAKE) all
	$(Q)$(PYTHON) lab/bench.py $(BENCH_ARGS)
	$(Q)$(PYTHON) lab/bench_otlp.py

# Long run, not in CI: RSS flat and the books closed to the message under
# file rotation (SIGHUP) and TCP destination restarts with --disk-buffer.
soak: deps
	$(Q)$(MAKE) all
	$(Q)$(PYTHON) lab/soak.py $(SOAK_ARGS)

# The SC4S drop-rate table for this machine, with syslog-ng and rsyslog as rows.
sc4s-table: deps
	$(Q)$(MAKE) all
	$(Q)$(PYTHON) lab/sweep --preset sc4s --out results/sc4s-$$(date +%Y%m%d-%H%M%S)

# SC4S's published table reproduced cell by cell (calibrated --cost-ns, loggen).
sc4s-replica: deps
	$(Q)$(MAKE) all
	$(Q)$(PYTHON) lab/sweep --preset sc4s-replica --out results/sc4s-replica-$$(date +%Y%m%d-%H%M%S)

# ---- install (dist/: what an installed system gets besides the binaries) ---
PREFIX     ?= /usr/local
BINDIR     ?= $(PREFIX)/bin
MANDIR     ?= $(PREFIX)/share/man
DOCDIR     ?= $(PREFIX)/share/doc/syslogrx
UNITDIR    ?= $(PREFIX)/lib/systemd/system
SYSCONFDIR ?= /etc

# An existing syslogrx.conf is the admin's: kept, the example goes to DOCDIR too.
install: $(APPS)
	$(call msg,INSTALL,$(DESTDIR)$(PREFIX))
	$(Q)install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man8 $(DESTDIR)$(DOCDIR) \
		$(DESTDIR)$(UNITDIR) $(DESTDIR)$(SYSCONFDIR)/syslogrx
	$(Q)install -m 0755 $(APPS) $(DESTDIR)$(BINDIR)/
	$(Q)install -m 0644 dist/syslogrx.8 $(DESTDIR)$(MANDIR)/man8/syslogrx.8
	$(Q)sed -e 's|@BINDIR@|$(BINDIR)|g' -e 's|@SYSCONFDIR@|$(SYSCONFDIR)|g' \
		dist/syslogrx.service.in > $(DESTDIR)$(UNITDIR)/syslogrx.service
	$(Q)chmod 0644 $(DESTDIR)$(UNITDIR)/syslogrx.service
	$(Q)sed -e 's|@BINDIR@|$(BINDIR)|g' -e 's|@SYSCONFDIR@|$(SYSCONFDIR)|g' \
		dist/syslogrx-unprivileged.service.in \
		> $(DESTDIR)$(UNITDIR)/syslogrx-unprivileged.service
	$(Q)chmod 0644 $(DESTDIR)$(UNITDIR)/syslogrx-unprivileged.service
	$(Q)install -m 0644 dist/syslogrx.conf $(DESTDIR)$(DOCDIR)/syslogrx.conf.example
	$(Q)install -m 0644 dist/syslogrx-alerts.yml $(DESTDIR)$(DOCDIR)/syslogrx-alerts.yml
	$(Q)[ -e $(DESTDIR)$(SYSCONFDIR)/syslogrx/syslogrx.conf ] || \
		install -m 0644 dist/syslogrx.conf $(DESTDIR)$(SYSCONFDIR)/syslogrx/syslogrx.conf

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

-include $(shell find $(OUTPUT) -name '*.d' -type f 2>/dev/null)
