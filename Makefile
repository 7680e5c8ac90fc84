# syslogrx: build in the libbpf-bootstrap manner.
#
#   make            build everything into build/
#   make run        install missing Debian packages, build, run the demo
#   make test       install missing Debian packages, build, run every test
#   make bench      benchmarks (ratios against a reference measured in the same run)
#   make vmlinux    regenerate vmlinux/$(ARCH)/vmlinux.h from the running kernel
#   make V=1        show full commands
#
# Layout the rules rely on (add a file, not a rule):
#   bpf/NAME.bpf.c     -> build/NAME.bpf.o, build/NAME.skel.h
#   src/*.c            -> build/libsyslogrx.a (all but src/syslogrx.c)
#   src/syslogrx.c     -> build/syslogrx
#   tools/NAME.c       -> build/NAME
#   tests/test_NAME.c  -> build/test_NAME (cmocka)

OUTPUT     := build
CLANG      ?= clang
CC         ?= cc
BPFTOOL    ?= bpftool
PYTHON     ?= /usr/bin/python3
ARCH       := $(shell uname -m | sed 's/x86_64/x86/' | sed 's/aarch64/arm64/')
VMLINUX    := vmlinux/$(ARCH)/vmlinux.h

# Debian packages the build, the tests and the lab need.
DEB_PKGS := clang llvm libbpf-dev bpftool libelf-dev zlib1g-dev libcmocka-dev \
            pkg-config iproute2 libclang-rt-14-dev python3 python3-pytest \
            python3-matplotlib syslog-ng-core procps librdkafka-dev kcat maven

ifeq ($(V),1)
	Q =
	msg =
else
	Q = @
	msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
	MAKEFLAGS += --no-print-directory
endif

# clang's own system include dirs, after the BPF target's (libbpf-bootstrap).
CLANG_BPF_SYS_INCLUDES := $(shell $(CLANG) -v -E - </dev/null 2>&1 \
	| sed -n '/<...> search starts here:/,/End of search list./{ s| \(/.*\)|-idirafter \1|p }')

BPF_CFLAGS := -g -O2 -target bpf -mcpu=v3 -D__TARGET_ARCH_$(ARCH) \
	-Iinclude -Ivmlinux/$(ARCH) $(CLANG_BPF_SYS_INCLUDES) -Wall -Werror

CFLAGS   ?= -g -O2
CFLAGS   += -std=gnu11 -Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers -Werror=implicit-function-declaration \
	    -D_GNU_SOURCE -Iinclude -I$(OUTPUT) -MMD -MP
LDLIBS   += $(shell pkg-config --libs libbpf 2>/dev/null || echo -lbpf -lelf -lz) \
	    $(shell pkg-config --libs rdkafka 2>/dev/null || echo -lrdkafka) -lpthread -lm

BPF_SRCS   := $(wildcard bpf/*.bpf.c)
BPF_OBJS   := $(patsubst bpf/%.bpf.c,$(OUTPUT)/%.bpf.o,$(BPF_SRCS))
SKELS      := $(patsubst bpf/%.bpf.c,$(OUTPUT)/%.skel.h,$(BPF_SRCS))

LIB_SRCS   := $(filter-out src/syslogrx.c,$(wildcard src/*.c))
LIB_OBJS   := $(patsubst src/%.c,$(OUTPUT)/src/%.o,$(LIB_SRCS))
LIB        := $(OUTPUT)/libsyslogrx.a

TOOL_SRCS  := $(wildcard tools/*.c)
TOOLS      := $(patsubst tools/%.c,$(OUTPUT)/%,$(TOOL_SRCS))

TEST_SRCS  := $(wildcard tests/test_*.c)
TESTS      := $(patsubst tests/%.c,$(OUTPUT)/%,$(TEST_SRCS))

FUZZ_SRCS  := $(wildcard tests/fuzz_*.c)
FUZZERS    := $(patsubst tests/%.c,$(OUTPUT)/%,$(FUZZ_SRCS))

APPS       := $(OUTPUT)/syslogrx $(TOOLS)

.PHONY: all run test unit integration fuzz bench deps clean vmlinux demo sc4s-table
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
$(OUTPUT) $(OUTPUT)/src $(OUTPUT)/tests:
	$(Q)mkdir -p $@

$(OUTPUT)/%.bpf.o: bpf/%.bpf.c $(VMLINUX) | $(OUTPUT)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -MMD -MP -MF $(@:.o=.d) -c $< -o $(@:.o=.tmp.o)
	$(Q)$(BPFTOOL) gen object $@ $(@:.o=.tmp.o)
	$(Q)rm -f $(@:.o=.tmp.o)

$(OUTPUT)/%.skel.h: $(OUTPUT)/%.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< > $@

# ---- user space -------------------------------------------------------------
# Every user object waits for the skeletons: the first build has no .d files yet.
$(OUTPUT)/src/%.o: src/%.c | $(OUTPUT)/src $(SKELS)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) -c $< -o $@

$(OUTPUT)/tools/%.o: tools/%.c | $(SKELS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -c $< -o $@

$(OUTPUT)/tests/%.o: tests/%.c | $(OUTPUT)/tests $(SKELS)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) -c $< -o $@

$(LIB): $(LIB_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

$(OUTPUT)/syslogrx: $(OUTPUT)/src/syslogrx.o $(LIB)
	$(call msg,BINARY,$@)
	$(Q)$(CC) $(LDFLAGS) $^ $(LDLIBS) -o $@

$(OUTPUT)/%: $(OUTPUT)/tools/%.o $(LIB)
	$(call msg,BINARY,$@)
	$(Q)$(CC) $(LDFLAGS) $^ $(LDLIBS) -o $@

$(OUTPUT)/test_%: $(OUTPUT)/tests/test_%.o $(LIB)
	$(call msg,BINARY,$@)
	$(Q)$(CC) $(LDFLAGS) $^ $(LDLIBS) -lcmocka -o $@

# libFuzzer targets: clang, ASan + UBSan, built from the library sources they test.
FUZZ_CFLAGS := -g -O1 -std=gnu11 -D_GNU_SOURCE -Iinclude -I$(OUTPUT) \
	-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
$(OUTPUT)/fuzz_%: tests/fuzz_%.c $(LIB_SRCS) | $(OUTPUT) $(SKELS)
	$(call msg,FUZZ,$@)
	$(Q)$(CLANG) $(FUZZ_CFLAGS) $< $(filter src/syslog_parse.c src/escape.c src/format.c,$(LIB_SRCS)) -o $@

# ---- jobs -------------------------------------------------------------------
demo: all
	$(Q)tools/demo.sh

run: deps
	$(Q)$(MAKE) all
	$(Q)tools/demo.sh

unit: $(TESTS)
	$(Q)set -e; for t in $(TESTS); do echo "== $$t"; $$t; done

fuzz: $(FUZZERS)
	$(Q)set -e; for f in $(FUZZERS); do echo "== $$f ($${FUZZ_SECONDS:-20} s)"; \
		rm -rf $(OUTPUT)/corpus && cp -r tests/corpus $(OUTPUT)/corpus; \
		$$f -max_total_time=$${FUZZ_SECONDS:-20} -max_len=70000 $(OUTPUT)/corpus > $(OUTPUT)/fuzz.log 2>&1 \
			|| { tail -40 $(OUTPUT)/fuzz.log; exit 1; }; tail -1 $(OUTPUT)/fuzz.log; done

integration: all
	$(Q)$(PYTHON) -m pytest -q tests $(PYTEST_ARGS)

test: deps
	$(Q)$(MAKE) all $(FUZZERS)
	$(Q)$(MAKE) unit
	$(Q)$(MAKE) fuzz
	$(Q)$(MAKE) integration

bench: deps
	$(Q)$(MAKE) all
	$(Q)$(PYTHON) tools/bench.py $(BENCH_ARGS)

# The SC4S drop-rate table for this machine, with syslog-ng and rsyslog as rows.
sc4s-table: deps
	$(Q)$(MAKE) all
	$(Q)$(PYTHON) tools/sweep --preset sc4s --out results/sc4s-$$(date +%Y%m%d-%H%M%S)

vmlinux:
	$(call msg,GEN,$(VMLINUX))
	$(Q)mkdir -p $(dir $(VMLINUX))
	$(Q)$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > $(VMLINUX)

clean:
	$(call msg,CLEAN)
	$(Q)rm -rf $(OUTPUT)

-include $(wildcard $(OUTPUT)/*.d $(OUTPUT)/src/*.d $(OUTPUT)/tools/*.d $(OUTPUT)/tests/*.d)
