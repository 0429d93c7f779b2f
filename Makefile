# skill-sandbox — build, try, test.
#   make demo      build the tool and run it on the bundled example skill
#   make test      vet and run every test (what CI runs), the Python
#                  package's too (make pytest runs only those)
#   make security  attack probes and usability suite, with a score
#   make security-gvisor  the attack probes with every sandboxed run on the
#                  gvisor backend (needs runsc; docs/backends.md)
#   make test-newest-go  the init process's packages on the newest Go
#                  release the module proxy serves (CI runs it)
#   make bench     latency, memory and throughput benchmarks
#   make bench-backends  start and runs/s of the native and gvisor backends
#                  and bubblewrap, in one run
#   make bench-bulk  validate and scan --recursive on realistic skills
#   make bench-proxy  a 100 MB download and small requests by curl: bare,
#                  --allow-network and through the proxy (--allow-host)
#   make serve-sim  serve replicas behind nginx, scraped by Prometheus, under
#                  a load with one replica killed and one stopped midway
#                  (docs/kubernetes.md; needs Debian's nginx and prometheus)
#   make install   install the binary, man page, completions and (Linux) the
#                  AppArmor profile under PREFIX (default /usr/local) and
#                  DESTDIR; make uninstall removes them (docs/install.md)
#   make dist      reproducible release archives, Debian packages, Python
#                  wheels (one per Linux arch, binary inside), an sdist and
#                  SHA256SUMS in DISTDIR (default dist/)
#   make fuzz      fuzz the SKILL.md parser and validator (its reference and tag
#                  matchers against the expressions they replace), the proxy's request, host,
#                  chunked body and TLS ClientHello parsers, the policy parser, the MCP
#                  framing, batches, workspace paths, skill:// URIs and HTTP transport, the macOS profile quoting, the Windows
#                  command-line quoting, the init process's config decoder and
#                  report encoder, the init process's program check, the
#                  /proc stat parser of the run's process sweep, serve's tokens file and
#                  execution requests, the uid_map and /proc mount parsers and the JSON
#                  string writer of the audit record and canonical policy, the
#                  Debian version made of git describe, the CLI test scripts' archives
#                  for FUZZTIME each (default 30s)

GO       ?= go
BUILDDIR ?= bin
BIN      := $(BUILDDIR)/skill-sandbox
EXAMPLE  := testdata/example/word-stats
FUZZTIME ?= 30s
# The version linked into the binary (--version, audit records, MCP
# serverInfo); outside a git checkout the binary falls back to "devel".
VERSION  ?= $(shell git describe --tags --always --dirty 2>/dev/null)
LDFLAGS  := -X main.version=$(VERSION)

# make install: the layout of docs/install.md. The AppArmor profile names
# the installed binary's path; APPARMOR=0 leaves it out.
PREFIX   ?= /usr/local
DESTDIR  ?=
BINDIR   := $(PREFIX)/bin
MANDIR   := $(PREFIX)/share/man/man1
BASHDIR  := $(PREFIX)/share/bash-completion/completions
ZSHDIR   := $(PREFIX)/share/zsh/site-functions
FISHDIR  := $(PREFIX)/share/fish/vendor_completions.d
GOOS     := $(shell $(GO) env GOOS)
APPARMOR ?= $(if $(filter linux,$(GOOS)),1,0)

# make dist: the release's timestamps are the commit's (reproducible
# builds' SOURCE_DATE_EPOCH), the packages' Maintainer field MAINTAINER.
DISTDIR  ?= dist
SOURCE_DATE_EPOCH ?= $(shell git log -1 --format=%ct 2>/dev/null)
COMMIT   ?= $(shell git rev-parse HEAD 2>/dev/null)
MAINTAINER ?= skill-sandbox maintainers <maintainers@skill-sandbox.invalid>

.PHONY: all build install uninstall dist demo test test-newest-go pytest mcpclient security security-gvisor bench bench-backends bench-bulk bench-proxy serve-sim fuzz clean

all: build

# On Linux the binary is linked statically (no cgo): having ld.so load libc
# first cost about 0.8 ms of each start, and without a C library's rseq area
# the init process can unmap all of the supervisor's memory (docs/security.md,
# "The init process"). Go's own DNS resolver and user lookups do for Linux;
# macOS keeps cgo (its users are not in /etc/passwd).
STATIC := $(if $(filter linux,$(shell $(GO) env GOOS)),CGO_ENABLED=0)

# The linker's output is then copied into place with install(1), as an
# installer or package manager writes a file: the linker writes through a
# shared mapping, which leaves the file in the page cache in 4 KiB folios,
# and a written copy is cached in large folios where the file system has
# them (ext4 on Linux 6.18 here), which each start maps and its exit unmaps
# in batches: 0.3-0.4 ms less per call (docs/bench.md). install removes
# the old file first, so a binary that is running is not rewritten.
build:
	$(STATIC) $(GO) build -ldflags '$(LDFLAGS)' -o $(BIN).link ./cmd/skill-sandbox
	install -m 0755 $(BIN).link $(BIN)
	rm -f $(BIN).link

# The man page and the completion scripts are written by the binary just
# built, from its own usage texts and flag definitions.
install: build
ifeq ($(APPARMOR),1)
	@case '$(BINDIR)' in *[!A-Za-z0-9/._+-]*) echo "make install: PREFIX $(PREFIX) holds characters an AppArmor profile path would read as a pattern; use plain characters or APPARMOR=0" >&2; exit 2;; esac
endif
	$(abspath $(BIN)) man > $(BIN).1
	$(abspath $(BIN)) completion bash > $(BIN).bash
	$(abspath $(BIN)) completion zsh > $(BIN).zsh
	$(abspath $(BIN)) completion fish > $(BIN).fish
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR) $(DESTDIR)$(BASHDIR) $(DESTDIR)$(ZSHDIR) $(DESTDIR)$(FISHDIR)
	install -m 0755 $(BIN) $(DESTDIR)$(BINDIR)/skill-sandbox
	install -m 0644 $(BIN).1 $(DESTDIR)$(MANDIR)/skill-sandbox.1
	install -m 0644 $(BIN).bash $(DESTDIR)$(BASHDIR)/skill-sandbox
	install -m 0644 $(BIN).zsh $(DESTDIR)$(ZSHDIR)/_skill-sandbox
	install -m 0644 $(BIN).fish $(DESTDIR)$(FISHDIR)/skill-sandbox.fish
	rm -f $(BIN).1 $(BIN).bash $(BIN).zsh $(BIN).fish
ifeq ($(APPARMOR),1)
	install -d $(DESTDIR)/etc/apparmor.d
	sed 's|^profile skill-sandbox [^ ]*|profile skill-sandbox $(BINDIR)/skill-sandbox|' packaging/apparmor/skill-sandbox > $(BIN).apparmor
	install -m 0644 $(BIN).apparmor $(DESTDIR)/etc/apparmor.d/skill-sandbox
	rm -f $(BIN).apparmor
	@echo "AppArmor 4 (Ubuntu 23.10+): load the profile with sudo apparmor_parser -r /etc/apparmor.d/skill-sandbox"
endif

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/skill-sandbox $(DESTDIR)$(MANDIR)/skill-sandbox.1
	rm -f $(DESTDIR)$(BASHDIR)/skill-sandbox $(DESTDIR)$(ZSHDIR)/_skill-sandbox $(DESTDIR)$(FISHDIR)/skill-sandbox.fish
ifeq ($(APPARMOR),1)
	rm -f $(DESTDIR)/etc/apparmor.d/skill-sandbox
endif

# Archives for five platforms, .deb packages for linux/amd64 and arm64 and
# SHA256SUMS; two runs of the same commit write the same bytes
# (scripts/dist, docs/install.md).
dist:
	$(GO) run ./scripts/dist -out $(DISTDIR) -version '$(VERSION)' -commit '$(COMMIT)' -epoch '$(SOURCE_DATE_EPOCH)' -maintainer '$(MAINTAINER)'

demo: build
	./$(BIN) validate $(EXAMPLE)
	./$(BIN) list $(EXAMPLE)
	./$(BIN) run $(EXAMPLE) stats.py -- references/sample.txt
	./$(BIN) audit --workdir $(EXAMPLE) stats.py -- references/sample.txt

# The vet runs for darwin, windows, freebsd (no sandbox: runs are refused
# at run time) and the other Linux architectures (no
# seccomp filter on riscv64; 32-bit ints on 386) keep the platform split
# compiling (tests included) where it cannot run here. The init process's tests run
# a second time linked with a C library (cgotest), as a library user's
# program may be.
test: mcpclient build
	$(GO) vet ./...
	GOOS=darwin $(GO) vet ./...
	GOOS=windows $(GO) vet ./...
	GOOS=freebsd $(GO) vet ./...
	GOARCH=arm64 $(GO) vet ./...
	GOARCH=riscv64 $(GO) vet ./...
	GOARCH=386 $(GO) vet ./...
	$(GO) test -count=1 ./...
	$(GO) test -count=1 -tags cgotest ./run/internal/initproc
	$(MAKE) --no-print-directory pytest

# The Python package's tests (python/tests, docs/python.md) with the binary
# just built and the dist tool that writes its wheels; no bytecode or cache
# is left in the tree. The first of python3 and /usr/bin/python3 (where
# Debian's python3-pytest goes) that has pytest runs them; without one
# they are skipped, except under CI.
pytest: build
	$(GO) build -o $(BUILDDIR)/dist ./scripts/dist
	@py=; for p in python3 /usr/bin/python3; do \
		if $$p -c 'import pytest' 2>/dev/null; then py=$$p; break; fi; \
	done; \
	if [ -n "$$py" ]; then \
		echo "$$py -m pytest -q python/tests"; \
		SKILL_SANDBOX_BIN=$(abspath $(BIN)) SKILL_SANDBOX_DIST=$(abspath $(BUILDDIR)/dist) PYTHONDONTWRITEBYTECODE=1 \
			$$py -m pytest -q python/tests; \
	elif [ "$$CI" = true ]; then \
		echo "make pytest: python3 has no pytest (Debian: python3-pytest)" >&2; exit 1; \
	else \
		echo "make pytest: python3 has no pytest (Debian: python3-pytest): the Python package's tests are skipped" >&2; \
	fi

# The real MCP clients of TestMCPNodeClient (one release of the TypeScript
# SDK per protocol era, pinned by the lock file), installed when npm is
# there and node_modules is missing or older than the lock file. Without
# npm the test skips, and fails under CI=true.
MCPCLIENT := scripts/mcpclient
mcpclient:
	@if command -v npm >/dev/null 2>&1 && { [ ! -e $(MCPCLIENT)/node_modules/.package-lock.json ] || \
		[ $(MCPCLIENT)/package-lock.json -nt $(MCPCLIENT)/node_modules/.package-lock.json ]; }; then \
		echo "npm ci --prefix $(MCPCLIENT)"; \
		npm ci --prefix $(MCPCLIENT) --no-audit --no-fund --loglevel=error; \
	fi

# The init process runs without the Go runtime
# (run/internal/initproc/README.md): a new Go release may compile its code
# to calls it must not make, so its packages' tests, the disassembly
# check among them, also run on the newest release (a toolchain fetched
# through the module proxy), before go.mod moves to it. Without the proxy
# they are skipped with the reason.
NEWEST_GO = $(shell $(GO) list -m -versions golang.org/toolchain 2>/dev/null | tr ' ' '\n' | \
	sed -n 's/^v0\.0\.1-go\([0-9.]*\)\.linux-$(shell $(GO) env GOARCH)$$/\1/p' | sort -V | tail -1)
test-newest-go:
	@v="$(NEWEST_GO)"; if [ -z "$$v" ]; then \
		echo "make test-newest-go: the module proxy lists no Go toolchain: skipped" >&2; \
	else \
		echo "GOTOOLCHAIN=go$$v $(GO) test ./run/internal/initproc ./run/internal/initplan ./run/internal/seccomp"; \
		GOTOOLCHAIN=go$$v $(GO) test -count=1 ./run/internal/initproc ./run/internal/initplan ./run/internal/seccomp; \
	fi

security: build
	$(GO) run ./scripts/security -bin ./$(BIN)

# The probes with --backend gvisor: the kernel-surface probe (41) must
# meet gVisor's kernel; probes the gvisor backend refuses (the network,
# a root caller's grants) are listed as skipped with the reason.
security-gvisor: build
	$(GO) run ./scripts/security -bin ./$(BIN) -suite security -backend gvisor

bench: build
	$(GO) run ./scripts/bench -bin ./$(BIN)

# A bash script's start and runs/s: bare, --backend native, --backend gvisor
# and bubblewrap, in one loop (docs/bench.md, docs/backends.md).
bench-backends: build
	$(GO) run ./scripts/bench -bin ./$(BIN) -backends -n 40 -conc 4

# validate and scan --recursive on 2,000 generated realistic skills
# (2-8 KB SKILL.md, 1-3 scripts): skills/s and peak memory
# (scripts/bulkbench, docs/bench.md).
bench-bulk: build
	$(GO) run ./scripts/bulkbench -bin ./$(BIN)

# A 100 MB plain HTTP download and small requests from a server on
# 127.0.0.1, by curl bare, in the sandbox with --allow-network and through
# the filtering proxy (--allow-host), interleaved (docs/bench.md).
bench-proxy: build
	$(GO) run ./scripts/bench -bin ./$(BIN) -download 9

# skill-sandbox serve on several replicas behind a real nginx, scraped by
# a real Prometheus server, a bounded loopback load with one replica
# killed (SIGKILL) and one stopped (SIGTERM) midway; every run a client saw
# complete must have its audit record (scripts/servesim, docs/kubernetes.md).
serve-sim: build
	$(GO) run ./scripts/servesim -bin ./$(BIN)

fuzz:
	$(GO) test -run '^$$' -fuzz FuzzParseFrontmatter -fuzztime $(FUZZTIME) ./validate
	$(GO) test -run '^$$' -fuzz FuzzSkill -fuzztime $(FUZZTIME) ./validate
	$(GO) test -run '^$$' -fuzz FuzzPatterns -fuzztime $(FUZZTIME) ./validate
	$(GO) test -run '^$$' -fuzz FuzzLenient -fuzztime $(FUZZTIME) ./validate
	$(GO) test -run '^$$' -fuzz FuzzResolveScript -fuzztime $(FUZZTIME) ./validate
	$(GO) test -run '^$$' -fuzz FuzzRecoverFrontmatter -fuzztime $(FUZZTIME) ./validate
	$(GO) test -run '^$$' -fuzz FuzzAppendString -fuzztime $(FUZZTIME) ./internal/jsonenc
	$(GO) test -run '^$$' -fuzz FuzzReadHead -fuzztime $(FUZZTIME) ./netproxy
	$(GO) test -run '^$$' -fuzz FuzzPattern -fuzztime $(FUZZTIME) ./netproxy
	$(GO) test -run '^$$' -fuzz FuzzClientHello -fuzztime $(FUZZTIME) ./netproxy
	$(GO) test -run '^$$' -fuzz FuzzParseTokens -fuzztime $(FUZZTIME) ./serve
	$(GO) test -run '^$$' -fuzz FuzzParseMetricsToken -fuzztime $(FUZZTIME) ./serve
	$(GO) test -run '^$$' -fuzz FuzzParseRequest -fuzztime $(FUZZTIME) ./serve
	$(GO) test -run '^$$' -fuzz FuzzChunkedBody -fuzztime $(FUZZTIME) ./netproxy
	$(GO) test -run '^$$' -fuzz FuzzParseSecret -fuzztime $(FUZZTIME) ./netproxy
	$(GO) test -run '^$$' -fuzz FuzzInnerRequest -fuzztime $(FUZZTIME) ./netproxy
	$(GO) test -run '^$$' -fuzz FuzzScrubConn -fuzztime $(FUZZTIME) ./netproxy
	$(GO) test -run '^$$' -fuzz FuzzRequestRules -fuzztime $(FUZZTIME) ./netproxy
	$(GO) test -run '^$$' -fuzz FuzzSOCKS5 -fuzztime $(FUZZTIME) ./netproxy
	$(GO) test -run '^$$' -fuzz FuzzParseLocalPort -fuzztime $(FUZZTIME) ./netproxy
	$(GO) test -run '^$$' -fuzz FuzzParseSignature -fuzztime $(FUZZTIME) ./sign
	$(GO) test -run '^$$' -fuzz FuzzParseAllowedSigners -fuzztime $(FUZZTIME) ./sign
	$(GO) test -run '^$$' -fuzz FuzzParseRequirements -fuzztime $(FUZZTIME) ./prepare
	$(GO) test -run '^$$' -fuzz FuzzParsePyproject -fuzztime $(FUZZTIME) ./prepare
	$(GO) test -run '^$$' -fuzz FuzzParseNodeLock -fuzztime $(FUZZTIME) ./prepare
	$(GO) test -run '^$$' -fuzz FuzzText -fuzztime $(FUZZTIME) ./scan
	$(GO) test -run '^$$' -fuzz FuzzParseTOML -fuzztime $(FUZZTIME) ./policy
	$(GO) test -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME) ./policy
	$(GO) test -run '^$$' -fuzz FuzzFraming -fuzztime $(FUZZTIME) ./mcp
	$(GO) test -run '^$$' -fuzz FuzzBatch -fuzztime $(FUZZTIME) ./mcp
	$(GO) test -run '^$$' -fuzz FuzzWorkspacePath -fuzztime $(FUZZTIME) ./mcp
	$(GO) test -run '^$$' -fuzz FuzzSkillURI -fuzztime $(FUZZTIME) ./mcp
	$(GO) test -run '^$$' -fuzz FuzzHTTPPost -fuzztime $(FUZZTIME) ./mcp
	$(GO) test -run '^$$' -fuzz FuzzCheck -fuzztime $(FUZZTIME) ./internal/jsonkeys
	$(GO) test -run '^$$' -fuzz FuzzParseStatFields -fuzztime $(FUZZTIME) ./internal/proc
	$(GO) test -run '^$$' -fuzz FuzzLogMessage -fuzztime $(FUZZTIME) ./run/internal/backend/gvisor
	$(GO) test -run '^$$' -fuzz FuzzPoolConfig -fuzztime $(FUZZTIME) ./run/internal/backend/gvisor
	$(GO) test -run '^$$' -fuzz FuzzSBPLString -fuzztime $(FUZZTIME) ./run/internal/seatbelt
	$(GO) test -run '^$$' -fuzz FuzzSeatbeltProfile -fuzztime $(FUZZTIME) ./run/internal/seatbelt
	$(GO) test -run '^$$' -fuzz FuzzDecodeConfig -fuzztime $(FUZZTIME) ./run/internal/stageconfig
	$(GO) test -run '^$$' -fuzz FuzzReportJSON -fuzztime $(FUZZTIME) ./run/internal/stageconfig
	$(GO) test -run '^$$' -fuzz FuzzVerify -fuzztime $(FUZZTIME) ./run/internal/initproc
	$(GO) test -run '^$$' -fuzz FuzzParseDirents -fuzztime $(FUZZTIME) ./run/internal/initplan
	$(GO) test -run '^$$' -fuzz FuzzMSVCRTQuote -fuzztime $(FUZZTIME) ./run/internal/winproc
	$(GO) test -run '^$$' -fuzz FuzzBatchCommandLine -fuzztime $(FUZZTIME) ./run/internal/winproc
	$(GO) test -run '^$$' -fuzz FuzzParseIDMap -fuzztime $(FUZZTIME) ./internal/identity
	$(GO) test -run '^$$' -fuzz FuzzProcOvermounts -fuzztime $(FUZZTIME) ./run/internal/backend/posix
	$(GO) test -run '^$$' -fuzz FuzzDebVersion -fuzztime $(FUZZTIME) ./scripts/dist
	$(GO) test -run '^$$' -fuzz FuzzParseArchive -fuzztime $(FUZZTIME) ./cmd/skill-sandbox

clean:
	rm -rf bin dist
