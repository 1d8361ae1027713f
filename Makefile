# evictd / libpreempt / preemptctl — plain Makefile.
#
#   make                 libpreempt.so.0 + libpreempt.a (+ libpreempt-uninstalled.pc), evictd,
#                        evictd-kube, preemptctl, preemptd
#   make check           every test; last line "N passed, N failed[, N skipped]"
#   make SANITIZE=1 check   the same under ASan+UBSan (LSan on)
#   make run             evictd in the foreground: monitoring (dry-run), or the demonstration on a machine
#                        without pods (RUN_ARGS=--demo / --monitor force one; ./run --help)
#   make install DESTDIR=... PREFIX=...
#   make bench | chaos | fuzz | e2e | fresh | deb | image | lint
#   make help            every target, one line each
#
# Sources are picked up by directory, so adding a file needs no Makefile edit:
#   lib/*.c           -> libpreempt (only symbols in lib/libpreempt.map are exported)
#   agent/STAGE/*.c   -> build/agent-STAGE.a, one archive per folder of the node side (agent/README.md):
#                        common, observe, decide, act, report, and the two programs evictd and
#                        evictd-kube (the file named after the program, its main(), is left out of the archive)
#   kube/*.c          -> build/kube.a (the Kubernetes client and object decoder: preemptctl and
#                        the node service share it)
#   base/*.c          -> build/base.a (the plumbing every program and client links: curl on
#                        sd-event, clocks, array growth, the JSON writer; libc+libsystemd+libcurl+
#                        yajl, not libpreempt)
#   cri/*.c           -> build/cri.a (the container runtime client: gRPC over libcurl, CRI v1
#                        messages generated from cri/api.proto by protoc-c; evictd only)
#   controller/STAGE/*.c -> build/controller-STAGE.a, one archive per folder of the controller side
#                        (controller/README.md), with the same include discipline as agent/
#   tests/{lib,base,controller,kube}/test-*.c, tests/agent/STAGE/test-*.c -> cmocka binaries
#   tests/*/test-*.sh, tests/agent/*/test-*.sh -> shell tests (TAP output, exit 77 = skipped)
#   tests/bench/bench-*.c -> benchmarks

VERSION      := 0.1.0
SOVERSION    := 0
PREFIX       ?= /usr/local
EXEC_PREFIX  ?= $(PREFIX)
LIBDIR       ?= $(EXEC_PREFIX)/lib
INCLUDEDIR   ?= $(PREFIX)/include
BINDIR       ?= $(EXEC_PREFIX)/bin
SBINDIR      ?= $(EXEC_PREFIX)/sbin
LIBEXECDIR   ?= $(EXEC_PREFIX)/libexec
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
SYSCONFDIR   ?= /etc
UNITDIR      ?= $(PREFIX)/lib/systemd/system
CATALOGDIR   ?= /usr/lib/systemd/catalog
MANDIR       ?= $(PREFIX)/share/man
PKG_CONFIG   ?= pkg-config
# Set by debian/rules: `make install` then leaves conffiles and unit enabling to dpkg and debhelper.
PACKAGE_BUILD ?=

B := build
ifeq ($(SANITIZE),1)
B := build-san
endif
ifeq ($(FUZZ),1)
B := build-fuzz
endif

CC       ?= cc
CFLAGS   ?= -O2 -g
WARN     := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
            -Wformat=2 -Wno-format-nonliteral -Wvla -Wundef
BASE_CFLAGS := -std=c11 $(WARN) -D_GNU_SOURCE -Ilib/include -fno-strict-aliasing
ifeq ($(SANITIZE),1)
BASE_CFLAGS += -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
LDFLAGS     += -fsanitize=address,undefined
endif

# Build dependencies install themselves (as root) or stop with the apt-get line to run.
DEPSETS := build
ifneq ($(filter check,$(MAKECMDGOALS)),)
DEPSETS += check
endif
ifneq ($(filter fuzz,$(MAKECMDGOALS)),)
DEPSETS += fuzz
endif
ifneq ($(filter e2e,$(MAKECMDGOALS)),)
DEPSETS += e2e
endif
ifneq ($(filter deb,$(MAKECMDGOALS)),)
DEPSETS += deb
endif
ifneq ($(filter image,$(MAKECMDGOALS)),)
DEPSETS += image
endif
ifneq ($(filter bench,$(MAKECMDGOALS)),)
DEPSETS += bench
endif
ifeq ($(filter clean distclean help,$(MAKECMDGOALS)),)
DEPS_STATUS := $(shell scripts/ensure-deps.sh $(DEPSETS) >&2 && echo ok)
ifneq ($(DEPS_STATUS),ok)
$(error build dependencies are missing (see the message above))
endif
endif

AGENT_PKGS := libsystemd libcgroup inih yajl libfyaml
KUBE_PKGS  := libfyaml yajl
CTL_PKGS   := $(KUBE_PKGS) libcurl
AGENT_CFLAGS := $(shell $(PKG_CONFIG) --cflags $(AGENT_PKGS) 2>/dev/null)
AGENT_LIBS   := $(shell $(PKG_CONFIG) --libs $(AGENT_PKGS) 2>/dev/null)
CTL_CFLAGS   := $(shell $(PKG_CONFIG) --cflags $(CTL_PKGS) 2>/dev/null)
CTL_LIBS     := $(shell $(PKG_CONFIG) --libs $(CTL_PKGS) 2>/dev/null)
# kube/'s HTTPS client and its sd-event driver (evictd-kube) need more than the decoder.
KCLIENT_PKGS := libcurl libsystemd $(KUBE_PKGS)
# preemptd: kube/'s client on sd-event, its journal (libsystemd) and its HTTP endpoints.
PREEMPTD_PKGS := $(KCLIENT_PKGS) libmicrohttpd
KUBE_CFLAGS  := $(shell $(PKG_CONFIG) --cflags $(KCLIENT_PKGS) 2>/dev/null)
KUBE_LIBS    := $(shell $(PKG_CONFIG) --libs $(KCLIENT_PKGS) 2>/dev/null)
PREEMPTD_CFLAGS := $(shell $(PKG_CONFIG) --cflags $(PREEMPTD_PKGS) 2>/dev/null)
PREEMPTD_LIBS   := $(shell $(PKG_CONFIG) --libs $(PREEMPTD_PKGS) 2>/dev/null)
# cri/: the CRI client (gRPC over libcurl on the sd-event loop, protobuf-c messages).
CRI_PKGS     := libcurl libsystemd libprotobuf-c
CRI_CFLAGS   := $(shell $(PKG_CONFIG) --cflags $(CRI_PKGS) 2>/dev/null)
CRI_LIBS     := $(shell $(PKG_CONFIG) --libs $(CRI_PKGS) 2>/dev/null)
PROTOC_C     ?= protoc-c
# base/: the layer between libpreempt and the clients. Everything above lib/ sees its headers
# (BASELAYER_INC); lib/ never does: libpreempt ships alone on libc.
BASELAYER_PKGS   := libcurl libsystemd yajl
BASELAYER_CFLAGS := $(shell $(PKG_CONFIG) --cflags $(BASELAYER_PKGS) 2>/dev/null)
BASELAYER_LIBS   := $(shell $(PKG_CONFIG) --libs $(BASELAYER_PKGS) 2>/dev/null)
BASELAYER_INC     := -Ibase
TEST_CFLAGS  := $(shell $(PKG_CONFIG) --cflags cmocka 2>/dev/null)
TEST_LIBS    := $(shell $(PKG_CONFIG) --libs cmocka 2>/dev/null)

LIB_SRCS   := $(sort $(wildcard lib/*.c))
LIB_OBJS   := $(LIB_SRCS:%.c=$(B)/%.o)
# The node side, one folder per stage (agent/README.md). A folder's code sees only the headers of
# the folders it may use, so an arrow against the pipeline is a compile error, not a review finding.
AGENT_DIRS := common observe decide act report evictd evictd-kube
AGENT_INC_common      := -Iagent/common
# cri/ (the runtime client and its plain data) is seen by evictd's stages, never by evictd-kube.
AGENT_INC_observe     := $(AGENT_INC_common) -Icri -Iagent/observe
AGENT_INC_decide      := $(AGENT_INC_common) -Icri -Iagent/decide
AGENT_INC_act         := $(AGENT_INC_common) -Icri -Iagent/act
AGENT_INC_report      := $(AGENT_INC_common) -Icri -Iagent/observe -Iagent/decide -Iagent/act -Iagent/report
AGENT_INC_evictd      := $(AGENT_INC_report) -Iagent/evictd
AGENT_INC_evictd-kube := $(AGENT_INC_common) -Ikube -Iagent/evictd-kube
# What each folder links, itself first (archive order: users before what they use).
AGENT_USES_common      := common
AGENT_USES_observe     := observe common
AGENT_USES_decide      := decide common
AGENT_USES_act         := act common
AGENT_USES_report      := report act decide observe common
AGENT_USES_evictd      := evictd report act decide observe common
AGENT_USES_evictd-kube := evictd-kube common
agent_archives = $(foreach d,$(AGENT_USES_$(1)),$(B)/agent-$(d).a)
# A folder's unit tests link what the folder uses, with two stated exceptions: act's tests also
# write the journal lines of what they evict (report/evict-log), as the daemon does; evictd-kube's
# read the descriptors it writes back with evictd's own reader (observe/podmeta), the contract
# between the two programs.
AGENT_TEST_INC_act  := $(AGENT_INC_report)
AGENT_TEST_USES_act := report act decide observe common
AGENT_TEST_INC_evictd-kube  := $(AGENT_INC_evictd-kube) -Iagent/observe
AGENT_TEST_USES_evictd-kube := evictd-kube observe common
agent_test_inc = $(or $(AGENT_TEST_INC_$(1)),$(AGENT_INC_$(1)))
agent_test_archives = $(foreach d,$(or $(AGENT_TEST_USES_$(1)),$(AGENT_USES_$(1))),$(B)/agent-$(d).a)
AGENT_MAINS := agent/evictd/evictd.c agent/evictd-kube/evictd-kube.c
AGENT_SRCS := $(filter-out $(AGENT_MAINS),$(sort $(wildcard $(AGENT_DIRS:%=agent/%/*.c))))
AGENT_OBJS := $(AGENT_SRCS:%.c=$(B)/%.o)
# The controller side, one folder per stage (controller/README.md), compiled like agent/: a folder
# sees only the headers of the folders below it.
CTL_DIRS := report queue model cycle watch act shadow preemptctl preemptd
CTL_INC_report     := -Icontroller/report
CTL_INC_queue      := -Icontroller/queue
CTL_INC_model      := -Ikube -Icontroller/queue -Icontroller/model
CTL_INC_cycle      := $(CTL_INC_model) -Icontroller/cycle
CTL_INC_watch      := $(CTL_INC_model) -Icontroller/report -Icontroller/watch
CTL_INC_act        := $(CTL_INC_cycle) -Icontroller/report -Icontroller/act
CTL_INC_shadow     := $(CTL_INC_cycle) -Icontroller/report -Icontroller/shadow
CTL_INC_preemptctl := $(CTL_INC_cycle) -Icontroller/preemptctl
CTL_INC_preemptd   := $(CTL_INC_act) -Icontroller/watch -Icontroller/shadow -Icontroller/preemptd
# What each folder links, itself first (archive order: users before what they use).
CTL_USES_report     := report
CTL_USES_queue      := queue
CTL_USES_model      := model queue
CTL_USES_cycle      := cycle model queue
CTL_USES_watch      := watch model queue report
CTL_USES_act        := act cycle model queue report
CTL_USES_shadow     := shadow cycle model queue report
CTL_USES_preemptctl := preemptctl cycle model queue
CTL_USES_preemptd   := preemptd shadow act watch cycle model queue report
ctl_archives = $(foreach d,$(CTL_USES_$(1)),$(B)/controller-$(d).a)
CTL_MAINS := controller/preemptctl/preemptctl.c controller/preemptd/preemptd.c
BASELAYER_SRCS := $(sort $(wildcard base/*.c))
BASELAYER_OBJS := $(BASELAYER_SRCS:%.c=$(B)/%.o)
KUBE_SRCS  := $(sort $(wildcard kube/*.c))
KUBE_OBJS  := $(KUBE_SRCS:%.c=$(B)/%.o)
CRI_SRCS   := $(sort $(wildcard cri/*.c))
CRI_OBJS   := $(CRI_SRCS:%.c=$(B)/%.o) $(B)/cri/api.pb-c.o

LIB_SO     := $(B)/libpreempt.so.$(VERSION)
LIB_A      := $(B)/libpreempt.a
# evictd's own stack; fuzz targets and benchmarks link it whole.
AGENT_A    := $(call agent_archives,evictd)
# preemptctl's stack (preemptctl.o, its main(), aside); tests and fuzz targets link it whole.
CTL_A      := $(call ctl_archives,preemptctl)
EVICTD     := $(B)/evictd
KUBE_A     := $(B)/kube.a
BASELAYER_A := $(B)/base.a
CRI_A      := $(B)/cri.a
EVICTD_KUBE := $(B)/evictd-kube
PREEMPTCTL := $(B)/preemptctl
PREEMPTD   := $(B)/preemptd

TESTS_LIB   := $(patsubst tests/%.c,$(B)/tests/%,$(sort $(wildcard tests/lib/test-*.c)))
TESTS_AGENT := $(patsubst tests/%.c,$(B)/tests/%,$(sort $(wildcard $(AGENT_DIRS:%=tests/agent/%/test-*.c))))
TESTS_CTL   := $(patsubst tests/%.c,$(B)/tests/%,$(sort $(wildcard tests/controller/test-*.c $(CTL_DIRS:%=tests/controller/%/test-*.c))))
TESTS_BASE  := $(patsubst tests/%.c,$(B)/tests/%,$(sort $(wildcard tests/base/test-*.c)))
TESTS_KUBE  := $(patsubst tests/%.c,$(B)/tests/%,$(sort $(wildcard tests/kube/test-*.c)))
TESTS_CRI   := $(patsubst tests/%.c,$(B)/tests/%,$(sort $(wildcard tests/cri/test-*.c)))
TESTS_SH    := $(sort $(wildcard tests/*/test-*.sh tests/agent/*/test-*.sh tests/controller/*/test-*.sh))
TEST_HELPERS := $(patsubst tests/%.c,$(B)/tests/%,$(sort $(wildcard tests/helpers/*.c)))
BENCHES     := $(patsubst tests/bench/%.c,$(B)/bench/%,$(sort $(wildcard tests/bench/bench-*.c)))
# bench-preemptd replays the streams tests/bench/bench-preemptd.sh generates: run by that script
BENCH_PLAIN := $(filter-out $(B)/bench/bench-preemptd,$(BENCHES))
BENCH_TOOLS := $(B)/bench/idle-floor

all: $(LIB_SO) $(LIB_A) $(B)/libpreempt-uninstalled.pc $(EVICTD) $(PREEMPTCTL) $(EVICTD_KUBE) $(PREEMPTD) \
     $(B)/evictd.service $(B)/cri/api.desc

# --- libpreempt -------------------------------------------------------------------------------
$(B)/lib/%.o: lib/%.c
	@mkdir -p $(@D)
	$(CC) $(BASE_CFLAGS) $(CFLAGS) -fPIC -fvisibility=hidden -MMD -MP -c -o $@ $<

$(LIB_SO): $(LIB_OBJS) lib/libpreempt.map
	$(CC) $(LDFLAGS) -shared -Wl,-soname,libpreempt.so.$(SOVERSION) \
	  -Wl,--version-script=lib/libpreempt.map -Wl,--no-undefined -o $@ $(LIB_OBJS)
	ln -sf libpreempt.so.$(VERSION) $(B)/libpreempt.so.$(SOVERSION)
	ln -sf libpreempt.so.$(SOVERSION) $(B)/libpreempt.so

$(LIB_A): $(LIB_OBJS)
	@rm -f $@
	$(AR) rcs $@ $^

# pkg-config's convention for a library not installed yet: with PKG_CONFIG_PATH=$(B),
# `pkg-config libpreempt` finds libpreempt-uninstalled.pc first, which points at the header in
# the source tree and the library in the build tree (absolute paths: it works from any directory).
$(B)/libpreempt-uninstalled.pc: lib/libpreempt.pc.in Makefile
	@mkdir -p $(@D)
	sed -e 's|@PREFIX@|$(CURDIR)|' -e 's|@LIBDIR@|$(CURDIR)/$(B)|' \
	    -e 's|@INCLUDEDIR@|$(CURDIR)/lib/include|' -e 's|@VERSION@|$(VERSION)|' $< > $@

# --- the node side: agent/<stage>/ -> build/agent-<stage>.a; evictd and evictd-kube ------------
# The version is the Makefile's; the programs' main() objects are rebuilt when it changes.
$(B)/agent/evictd/evictd.o $(B)/agent/evictd-kube/evictd-kube.o: BASE_CFLAGS += -DEVICTD_VERSION='"$(VERSION)"'
$(B)/agent/evictd/evictd.o $(B)/agent/evictd-kube/evictd-kube.o $(B)/controller/preemptctl/preemptctl.o $(B)/controller/preemptd/preemptd-config.o $(B)/controller/preemptd/preemptd.o: Makefile
$(B)/controller/preemptd/preemptd-config.o $(B)/controller/preemptd/preemptd.o: BASE_CFLAGS += -DPREEMPTD_VERSION='"$(VERSION)"'
$(B)/controller/preemptctl/preemptctl.o: BASE_CFLAGS += -DPREEMPTCTL_VERSION='"$(VERSION)"'

define agent_dir_rules
$(B)/agent/$(1)/%.o: agent/$(1)/%.c
	@mkdir -p $$(@D)
	$$(CC) $$(BASE_CFLAGS) $$(CFLAGS) $$(AGENT_CFLAGS) $$(if $$(filter evictd-kube,$(1)),$$(KUBE_CFLAGS)) $$(AGENT_INC_$(1)) $$(BASELAYER_INC) -MMD -MP -c -o $$@ $$<

$(B)/agent-$(1).a: $$(patsubst %.c,$(B)/%.o,$$(filter-out $$(AGENT_MAINS),$$(sort $$(wildcard agent/$(1)/*.c))))
	@rm -f $$@
	$$(AR) rcs $$@ $$^

# A unit test of a folder links that folder and what it may use, nothing above it.
$(B)/tests/agent/$(1)/%: tests/agent/$(1)/%.c $$(call agent_test_archives,$(1)) $$(if $$(filter evictd-kube,$(1)),$$(KUBE_A),$$(CRI_A)) $$(BASELAYER_A) $$(LIB_A)
	@mkdir -p $$(@D)
	$$(CC) $$(BASE_CFLAGS) $$(CFLAGS) $$(TEST_CFLAGS) $$(AGENT_CFLAGS) $$(if $$(filter evictd-kube,$(1)),$$(KUBE_CFLAGS) $$(CTL_CFLAGS)) $$(call agent_test_inc,$(1)) $$(BASELAYER_INC) -Ilib -Itests -Itests/agent -MMD -MP -o $$@ $$< $$(call agent_test_archives,$(1)) $$(if $$(filter evictd-kube,$(1)),$$(KUBE_A),$$(CRI_A)) $$(BASELAYER_A) $$(LIB_A) $$(LDFLAGS) $$(if $$(filter evictd-kube,$(1)),$$(KUBE_LIBS),$$(CRI_LIBS)) $$(AGENT_LIBS) $$(TEST_LIBS) -lm
endef
$(foreach d,$(AGENT_DIRS),$(eval $(call agent_dir_rules,$(d))))

# evictd links libpreempt statically: a node agent must not break when the shared library on the
# node is upgraded under it, and it keeps the unit's ExecStart a single self-contained binary.
$(EVICTD): $(B)/agent/evictd/evictd.o $(call agent_archives,evictd) $(CRI_A) $(BASELAYER_A) $(LIB_A)
	$(CC) $(LDFLAGS) -o $@ $^ $(CRI_LIBS) $(AGENT_LIBS) -lm

# --- base/ (the plumbing every program and client links; above lib/, below kube/ and cri/) ----
$(B)/base/%.o: base/%.c
	@mkdir -p $(@D)
	$(CC) $(BASE_CFLAGS) $(CFLAGS) $(BASELAYER_CFLAGS) $(BASELAYER_INC) -MMD -MP -c -o $@ $<

$(BASELAYER_A): $(BASELAYER_OBJS)
	@rm -f $@
	$(AR) rcs $@ $^

$(B)/tests/base/%: tests/base/%.c $(BASELAYER_A)
	@mkdir -p $(@D)
	$(CC) $(BASE_CFLAGS) $(CFLAGS) $(TEST_CFLAGS) $(BASELAYER_CFLAGS) $(BASELAYER_INC) -Itests -MMD -MP -o $@ $< $(BASELAYER_A) $(LDFLAGS) $(BASELAYER_LIBS) $(TEST_LIBS)

# --- kube/ (the Kubernetes client and object decoder) ----------------------------------------
$(B)/kube/%.o: kube/%.c
	@mkdir -p $(@D)
	$(CC) $(BASE_CFLAGS) $(CFLAGS) $(KUBE_CFLAGS) $(CTL_CFLAGS) -Ikube $(BASELAYER_INC) -MMD -MP -c -o $@ $<

$(KUBE_A): $(KUBE_OBJS)
	@rm -f $@
	$(AR) rcs $@ $^

# Statically linked against libpreempt like evictd, for the same reason.
$(EVICTD_KUBE): $(B)/agent/evictd-kube/evictd-kube.o $(call agent_archives,evictd-kube) $(KUBE_A) $(BASELAYER_A) $(LIB_A)
	$(CC) $(LDFLAGS) -o $@ $^ $(KUBE_LIBS) $(AGENT_LIBS) -lm

# --- cri/ (the container runtime client) ------------------------------------------------------
# The CRI messages in C, and the descriptor set the Python stand-in and the VM scenarios' client
# build their classes from (tests/cri/README.md), both from the one cri/api.proto.
$(B)/cri/api.pb-c.c $(B)/cri/api.pb-c.h $(B)/cri/api.desc &: cri/api.proto
	@mkdir -p $(B)/cri
	$(PROTOC_C) --c_out=$(B)/cri --descriptor_set_out=$(B)/cri/api.desc -Icri cri/api.proto

$(B)/cri/api.pb-c.o: $(B)/cri/api.pb-c.c
	$(CC) $(BASE_CFLAGS) $(CFLAGS) $(CRI_CFLAGS) -I$(B)/cri -MMD -MP -c -o $@ $<

$(B)/cri/%.o: cri/%.c | $(B)/cri/api.pb-c.h
	@mkdir -p $(@D)
	$(CC) $(BASE_CFLAGS) $(CFLAGS) $(CRI_CFLAGS) -Icri -I$(B)/cri $(BASELAYER_INC) -MMD -MP -c -o $@ $<

$(CRI_A): $(CRI_OBJS)
	@rm -f $@
	$(AR) rcs $@ $^

$(B)/tests/cri/%: tests/cri/%.c $(CRI_A) $(BASELAYER_A)
	@mkdir -p $(@D)
	$(CC) $(BASE_CFLAGS) $(CFLAGS) $(TEST_CFLAGS) $(CRI_CFLAGS) -Icri -I$(B)/cri $(BASELAYER_INC) -Itests -Itests/fuzz -MMD -MP -o $@ $< $(CRI_A) $(BASELAYER_A) $(LDFLAGS) $(CRI_LIBS) $(TEST_LIBS)

# --- the controller side: controller/<stage>/ -> build/controller-<stage>.a; preemptctl -------
define ctl_dir_rules
$(B)/controller/$(1)/%.o: controller/$(1)/%.c
	@mkdir -p $$(@D)
	$$(CC) $$(BASE_CFLAGS) $$(CFLAGS) $$(PREEMPTD_CFLAGS) $$(CTL_INC_$(1)) $$(BASELAYER_INC) -MMD -MP -c -o $$@ $$<

$(B)/controller-$(1).a: $$(patsubst %.c,$(B)/%.o,$$(filter-out $$(CTL_MAINS),$$(sort $$(wildcard controller/$(1)/*.c))))
	@rm -f $$@
	$$(AR) rcs $$@ $$^

# A unit test of a folder links that folder and what it may use, nothing above it.
$(B)/tests/controller/$(1)/%: tests/controller/$(1)/%.c $$(call ctl_archives,$(1)) $$(KUBE_A) $$(BASELAYER_A) $$(LIB_A)
	@mkdir -p $$(@D)
	$$(CC) $$(BASE_CFLAGS) $$(CFLAGS) $$(TEST_CFLAGS) $$(PREEMPTD_CFLAGS) $$(CTL_INC_$(1)) $$(BASELAYER_INC) -Ilib -Itests -MMD -MP -o $$@ $$< $$(call ctl_archives,$(1)) $$(KUBE_A) $$(BASELAYER_A) $$(LIB_A) $$(LDFLAGS) $$(PREEMPTD_LIBS) $$(TEST_LIBS) -lm
endef
$(foreach d,$(CTL_DIRS),$(eval $(call ctl_dir_rules,$(d))))

# preemptctl is the reference consumer of the shared library, so it links it dynamically.
$(PREEMPTCTL): $(B)/controller/preemptctl/preemptctl.o $(CTL_A) $(KUBE_A) $(BASELAYER_A) $(LIB_SO)
	$(CC) $(LDFLAGS) -Wl,-rpath,'$$ORIGIN' -o $@ $(B)/controller/preemptctl/preemptctl.o $(CTL_A) $(KUBE_A) $(BASELAYER_A) -L$(B) -lpreempt $(CTL_LIBS) -lm

# preemptd is a service binary: libpreempt linked in, as evictd's, so that a library upgrade on
# the host cannot change a running scheduler's decisions under it.
$(PREEMPTD): $(B)/controller/preemptd/preemptd.o $(call ctl_archives,preemptd) $(KUBE_A) $(BASELAYER_A) $(LIB_A)
	$(CC) $(LDFLAGS) -o $@ $^ $(PREEMPTD_LIBS) -linih -lm

# --- tests ------------------------------------------------------------------------------------
# Unit tests link the static archives, so they can reach internal (non-exported) functions.
$(B)/tests/lib/%: tests/lib/%.c $(LIB_A)
	@mkdir -p $(@D)
	$(CC) $(BASE_CFLAGS) $(CFLAGS) $(TEST_CFLAGS) -Ilib -Itests -MMD -MP -o $@ $< $(LIB_A) $(LDFLAGS) $(TEST_LIBS) -lm

$(B)/tests/controller/test-%: tests/controller/test-%.c $(CTL_A) $(KUBE_A) $(BASELAYER_A) $(LIB_A)
	@mkdir -p $(@D)
	$(CC) $(BASE_CFLAGS) $(CFLAGS) $(TEST_CFLAGS) $(CTL_CFLAGS) $(CTL_INC_preemptctl) $(BASELAYER_INC) -Ilib -Itests -MMD -MP -o $@ $< $(CTL_A) $(KUBE_A) $(BASELAYER_A) $(LIB_A) $(LDFLAGS) $(CTL_LIBS) $(TEST_LIBS) -lm

$(B)/tests/kube/%: tests/kube/%.c $(KUBE_A) $(BASELAYER_A) $(LIB_A)
	@mkdir -p $(@D)
	$(CC) $(BASE_CFLAGS) $(CFLAGS) $(TEST_CFLAGS) $(KUBE_CFLAGS) $(CTL_CFLAGS) -Ikube $(BASELAYER_INC) -Ilib -Itests -MMD -MP -o $@ $< $(KUBE_A) $(BASELAYER_A) $(LIB_A) $(LDFLAGS) $(KUBE_LIBS) $(CTL_LIBS) $(TEST_LIBS) -lm

# Small programs the shell tests start (memory hogs, signal recorders, journal sinks).
$(B)/tests/helpers/%: tests/helpers/%.c
	@mkdir -p $(@D)
	$(CC) $(BASE_CFLAGS) $(CFLAGS) -MMD -MP -o $@ $< $(LDFLAGS)

TEST_PROGS := $(TESTS_LIB) $(TESTS_BASE) $(TESTS_AGENT) $(TESTS_CTL) $(TESTS_KUBE) $(TESTS_CRI)

tests: all $(TEST_PROGS) $(TEST_HELPERS)

check: tests
	@BUILD=$(B) scripts/run-tests.sh $(TEST_PROGS) $(TESTS_SH)

lint:
	cppcheck --quiet --error-exitcode=1 --enable=warning,performance,portability \
	  --inline-suppr --suppress=missingIncludeSystem -D_GNU_SOURCE -Ilib/include -Ilib $(AGENT_DIRS:%=-Iagent/%) $(CTL_DIRS:%=-Icontroller/%) -Ikube \
	  -Icri $(BASELAYER_INC) lib base agent controller kube cri
	@# Public functions carry their module's prefix; no static function or label is another's namesake.
	python3 scripts/check-names.py

# --- benchmarks, fuzzing, end-to-end ----------------------------------------------------------
# preemptd's loop without a server: the stages up to act, a counting sink in place of the API.
$(B)/bench/bench-preemptd: tests/bench/bench-preemptd.c $(call ctl_archives,shadow) $(call ctl_archives,act) $(call ctl_archives,watch) $(KUBE_A) $(BASELAYER_A) $(LIB_A)
	@mkdir -p $(@D)
	$(CC) $(BASE_CFLAGS) $(CFLAGS) $(PREEMPTD_CFLAGS) $(CTL_INC_act) -Icontroller/watch -Icontroller/shadow $(BASELAYER_INC) -Itests -MMD -MP -o $@ $< $(call ctl_archives,shadow) $(call ctl_archives,act) $(call ctl_archives,watch) $(KUBE_A) $(BASELAYER_A) $(LIB_A) $(LDFLAGS) $(PREEMPTD_LIBS) -lm

$(B)/bench/%: tests/bench/%.c $(LIB_A) $(AGENT_A) $(CRI_A) $(BASELAYER_A)
	@mkdir -p $(@D)
	$(CC) $(BASE_CFLAGS) $(CFLAGS) $(AGENT_CFLAGS) -Ilib $(AGENT_INC_evictd) $(BASELAYER_INC) -Itests -MMD -MP -o $@ $< $(AGENT_A) $(CRI_A) $(BASELAYER_A) $(LIB_A) $(LDFLAGS) $(CRI_LIBS) $(AGENT_LIBS) -lm

bench: all $(BENCHES) $(BENCH_TOOLS)
	@set -e; for b in $(BENCH_PLAIN); do echo "== $$b"; ./$$b; done; \
	for s in tests/bench/bench-*.sh; do echo "== $$s"; BUILD=$(B) $$s; done

# Two preemptd replicas under kills and API faults at random moments, the request log checked
# (tests/chaos/chaos.sh): CHAOS_RUNS seeds of CHAOS_SECONDS each, a seed replayed with CHAOS_SEED.
chaos: all
	@BUILD=$(B) CHAOS_RUNS=$${CHAOS_RUNS:-3} CHAOS_SECONDS=$${CHAOS_SECONDS:-60} tests/chaos/chaos.sh

fuzz:
	@scripts/fuzz.sh

e2e: all
	@tests/e2e/run.sh

# The README's two commands on a bare Debian 12 (minbase chroot), as root and as a user; see
# tests/fresh/run.sh. Needs root, mmdebstrap and the apt mirror; tests the committed HEAD.
fresh:
	@tests/fresh/run.sh

# Debian packages (debian/) of the committed HEAD, built from a copy in build/deb/src so that the
# .debs, .changes and .buildinfo land in build/deb/, never beside the source tree; lintian must
# report no error and no warning. tests/pkg/run.sh installs, upgrades and purges them on a bare
# Debian 12.
deb:
	@scripts/build-deb.sh build/deb

# preemptd's OCI image from Debian packages only (scripts/build-image.sh): the layout
# build/image/preemptd-oci/ (tag VERSION), the oci-archive build/image/preemptd-VERSION.oci.tar
# and the listing build/image/preemptd-image.txt. The preemptd .deb is build/deb's when it is of
# HEAD, else built there first. Needs root, mmdebstrap, umoci and the apt mirror;
# tests/image/run.sh builds it and runs it.
image:
	@scripts/build-image.sh build/image --debs build/deb

# --- run and install --------------------------------------------------------------------------
run: $(EVICTD) $(PREEMPTD)
	@scripts/run.sh $(EVICTD) $(RUN_ARGS)

PC_SED := sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' \
              -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' -e 's|@VERSION@|$(VERSION)|'

install-lib: $(LIB_SO) $(LIB_A)
	install -d $(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCLUDEDIR) $(DESTDIR)$(PKGCONFIGDIR)
	install -m 0755 $(LIB_SO) $(DESTDIR)$(LIBDIR)/
	ln -sf libpreempt.so.$(VERSION) $(DESTDIR)$(LIBDIR)/libpreempt.so.$(SOVERSION)
	ln -sf libpreempt.so.$(SOVERSION) $(DESTDIR)$(LIBDIR)/libpreempt.so
	install -m 0644 $(LIB_A) $(DESTDIR)$(LIBDIR)/
	install -m 0644 lib/include/preempt.h $(DESTDIR)$(INCLUDEDIR)/
	$(PC_SED) lib/libpreempt.pc.in > $(DESTDIR)$(PKGCONFIGDIR)/libpreempt.pc

# The unit as installed, also for `systemd-analyze verify|security` on the build tree.
$(B)/evictd.service: systemd/evictd.service Makefile
	@mkdir -p $(@D)
	sed -e 's|@SBINDIR@|$(SBINDIR)|g' systemd/evictd.service > $@

MANPAGES := man/evictd.8 man/evictd-kube.8 man/evictd.conf.5 man/preemptctl.1 man/preemptd.8

install: all install-lib
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(SBINDIR) $(DESTDIR)$(SYSCONFDIR)/evictd/evictd.conf.d \
	  $(DESTDIR)$(UNITDIR) $(DESTDIR)$(CATALOGDIR) $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man5 \
	  $(DESTDIR)$(MANDIR)/man8
	install -m 0755 $(EVICTD) $(DESTDIR)$(SBINDIR)/evictd
	install -m 0755 $(EVICTD_KUBE) $(DESTDIR)$(SBINDIR)/evictd-kube
	install -m 0755 $(PREEMPTD) $(DESTDIR)$(SBINDIR)/preemptd
	$(CC) $(LDFLAGS) -o $(B)/preemptctl.installed $(B)/controller/preemptctl/preemptctl.o $(CTL_A) $(KUBE_A) \
	  $(BASELAYER_A) -L$(B) -lpreempt $(CTL_LIBS) -lm $(if $(filter /usr /usr/,$(PREFIX)),,-Wl,-rpath,$(LIBDIR))
	install -m 0755 $(B)/preemptctl.installed $(DESTDIR)$(BINDIR)/preemptctl
	@# An operator's edited configuration is never overwritten (a package leaves that to dpkg).
	if [ -z "$(PACKAGE_BUILD)" ] && [ -e $(DESTDIR)$(SYSCONFDIR)/evictd/evictd.conf ]; then \
	  install -m 0644 conf/evictd.conf $(DESTDIR)$(SYSCONFDIR)/evictd/evictd.conf.dist; \
	else install -m 0644 conf/evictd.conf $(DESTDIR)$(SYSCONFDIR)/evictd/evictd.conf; fi
	sed -e 's|@SBINDIR@|$(SBINDIR)|g' systemd/evictd.service > $(DESTDIR)$(UNITDIR)/evictd.service
	chmod 0644 $(DESTDIR)$(UNITDIR)/evictd.service
	sed -e 's|@SBINDIR@|$(SBINDIR)|g' systemd/evictd-kube.service > $(DESTDIR)$(UNITDIR)/evictd-kube.service
	chmod 0644 $(DESTDIR)$(UNITDIR)/evictd-kube.service
	@# preemptd's unit is installed, not enabled: it needs /etc/evictd/preemptd.kubeconfig first.
	sed -e 's|@SBINDIR@|$(SBINDIR)|g' systemd/preemptd.service > $(DESTDIR)$(UNITDIR)/preemptd.service
	chmod 0644 $(DESTDIR)$(UNITDIR)/preemptd.service
	@# Enabled: it exits at once while [kubernetes] enable = no, so this costs nothing off Kubernetes.
	@# A package enables it in its maintainer scripts instead (debian/rules).
ifeq ($(PACKAGE_BUILD),)
	install -d $(DESTDIR)$(SYSCONFDIR)/systemd/system/multi-user.target.wants
	ln -sf $(UNITDIR)/evictd-kube.service $(DESTDIR)$(SYSCONFDIR)/systemd/system/multi-user.target.wants/evictd-kube.service
endif
	install -m 0644 systemd/evictd.catalog $(DESTDIR)$(CATALOGDIR)/evictd.catalog
	install -m 0644 systemd/preemptd.catalog $(DESTDIR)$(CATALOGDIR)/preemptd.catalog
	@# preemptd's configuration: an edited one is kept, as evictd.conf is
	if [ -z "$(PACKAGE_BUILD)" ] && [ -e $(DESTDIR)$(SYSCONFDIR)/evictd/preemptd.conf ]; then \
	  install -m 0644 conf/preemptd.conf $(DESTDIR)$(SYSCONFDIR)/evictd/preemptd.conf.dist; \
	else install -m 0644 conf/preemptd.conf $(DESTDIR)$(SYSCONFDIR)/evictd/preemptd.conf; fi
	install -m 0644 man/preemptctl.1 $(DESTDIR)$(MANDIR)/man1/
	install -m 0644 man/evictd.conf.5 $(DESTDIR)$(MANDIR)/man5/
	install -m 0644 man/evictd.8 $(DESTDIR)$(MANDIR)/man8/
	install -m 0644 man/evictd-kube.8 $(DESTDIR)$(MANDIR)/man8/
	install -m 0644 man/preemptd.8 $(DESTDIR)$(MANDIR)/man8/

clean:
	rm -rf build build-san build-fuzz

# One line per target; `make help` needs no build dependencies.
help:
	@echo 'make              build libpreempt, evictd, evictd-kube, preemptctl and preemptd into $(B)/'
	@echo 'make check        build everything and run every test ("N passed, N failed, N skipped")'
	@echo 'make run          evictd in the foreground until Ctrl-C: monitoring, or the demonstration on a machine without pods (RUN_ARGS=--demo or --monitor)'
	@echo 'make tests        build the test programs without running them'
	@echo 'make lint         cppcheck over the C sources, and their naming rules (scripts/check-names.py)'
	@echo 'make bench        the benchmarks (figures in BENCHMARKS.md)'
	@echo 'make chaos        preemptd under kills and API faults, seeded (CHAOS_SEED replays one)'
	@echo 'make fuzz         libFuzzer targets, FUZZ_SECONDS=60 each'
	@echo 'make fresh        the two README commands on a bare Debian 12 chroot, as root and a user'
	@echo 'make e2e          a Debian 12 VM with systemd: make install and the operator scenarios'
	@echo 'make deb          Debian packages of HEAD (evictd, libpreempt0/-dev, preemptctl, preemptd) in build/deb/, lintian-clean'
	@echo 'make image        preemptd OCI image from Debian packages: build/image/preemptd-oci/ and its oci-archive (needs root)'
	@echo 'make install      binaries, library, unit, catalog, man pages, /etc/evictd (DESTDIR=, PREFIX=)'
	@echo 'make install-lib  only libpreempt: shared and static library, header, pkg-config file'
	@echo 'make clean        remove build/ (with build/deb/), build-san/ and build-fuzz/'
	@echo 'make help         this list'
	@echo 'Variables: SANITIZE=1 (ASan+UBSan+LSan build in build-san/), PREFIX=, DESTDIR=, CC=, CFLAGS='

.PHONY: all tests check lint bench chaos fuzz e2e fresh deb image run install install-lib clean help

-include $(shell find $(B) -name '*.d' -type f 2>/dev/null)
