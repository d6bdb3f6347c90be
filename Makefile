# MockServer: `make run` serves the bundled Fixtures/, `make test` runs every test.
SWIFT ?= swift
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
HOST ?= 127.0.0.1
PORT ?= 8080
FIXTURES ?= Fixtures

.PHONY: all run test test-browser test-install install install-files build build-release deps lint format bench fuzz soak clean check-portable

all: build

# System headers for the COpenSSL, CZlib and CYAML targets (Debian packages), installed only when missing;
# libssl and libcrypto are loaded at run time by COpenSSL's trampolines on the first TLS or digest use, and
# libxml2 (loaded at run time by CLibXML2 on the first XML matcher, which declares what it uses) comes
# with libxml2-dev. libcurl4-openssl-dev: FoundationNetworking (used by ClientKit and its tests) links libcurl; the
# mockserver binary itself no longer does (`verify` uses the server's own upstream client).
deps:
	@if [ ! -f /usr/include/openssl/ssl.h ] || [ ! -f /usr/include/zlib.h ] || [ ! -f /usr/include/yaml.h ] \
	  || [ ! -f /usr/include/libxml2/libxml/parser.h ] || [ ! -f /usr/include/hiredis/hiredis.h ] \
	  || ! ls /usr/lib/*/libcurl.so >/dev/null 2>&1; then \
	  echo "make: installing libssl-dev zlib1g-dev libyaml-dev libxml2-dev libhiredis-dev libcurl4-openssl-dev"; \
	  $(SUDO) apt-get update -qq >/dev/null 2>&1 || true; \
	  $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libssl-dev zlib1g-dev libyaml-dev libxml2-dev \
	    libhiredis-dev libcurl4-openssl-dev >/dev/null; \
	fi

build: deps
	$(SWIFT) build

# The Swift runtime and Foundation are linked statically and the executable is not position-independent:
# no shared-library loading and no start-up relocation of Swift metadata, so it starts faster and keeps
# fewer pages resident (measured: 16.6 -> 14.8 MiB idle). Benchmarks/bench.sh builds with the same flags.
RELEASE_FLAGS ?= -c release --static-swift-stdlib -Xlinker -no-pie
build-release: deps
	$(SWIFT) build $(RELEASE_FLAGS) --product mockserver

# Installs the release binary as $(PREFIX)/bin/mockserver and its man page, generated from --help, as
# $(PREFIX)/share/man/man1/mockserver.1 (DESTDIR is honoured for packaging). `install-files` installs an
# already built MOCKSERVER_BIN without building (make test-install uses it with the debug binary).
PREFIX ?= /usr/local
MOCKSERVER_BIN ?= .build/release/mockserver
install: build-release
	@$(MAKE) --no-print-directory install-files PREFIX="$(PREFIX)" MOCKSERVER_BIN="$(MOCKSERVER_BIN)"

install-files:
	install -d "$(DESTDIR)$(PREFIX)/bin" "$(DESTDIR)$(PREFIX)/share/man/man1"
	install -m 755 "$(MOCKSERVER_BIN)" "$(DESTDIR)$(PREFIX)/bin/mockserver"
	sh Scripts/manpage.sh "$(MOCKSERVER_BIN)" > "$(DESTDIR)$(PREFIX)/share/man/man1/mockserver.1"
	@echo "installed $(DESTDIR)$(PREFIX)/bin/mockserver and $(DESTDIR)$(PREFIX)/share/man/man1/mockserver.1"

# What a newcomer does (README "Install"): install-files into a scratch prefix (the installed binary and
# man page work), and a scratch SwiftPM package with a `path:` dependency on this clone resolves the whole
# product graph and builds a tiny target against one of its libraries. Needs the debug build (make test
# does it first).
test-install:
	SWIFT=$(SWIFT) sh Tests/install-check.sh

# Build in release mode and serve the bundled fixtures on http://$(HOST):$(PORT).
run: build-release
	.build/release/mockserver --host $(HOST) --port $(PORT) --fixtures $(FIXTURES)

# Build everything (including the mockserver binary the contract tests launch) and run every test.
# ClientKit's unit tests (deadlines and retries measured on Swift concurrency's pool) run in a pass of their
# own: server tests that block a pool thread on socket reads must not starve them on a 2-core machine.
# Unit and server tests run in parallel; the contract suites (ClientKit against the server, with timing
# assertions such as "a 1 s deadline fails after about 1 s") run one at a time, so that other tests'
# blocking socket I/O cannot delay their tasks on a 2-core machine. The headless-Chromium CORS test runs
# with them (skipped when Chromium is missing): beside the parallel server tests, a browser takes the CPU
# their bounds assume (seen once: a back-pressure test's 30 s bound missed). Last, make test-install.
# Every pass runs with MOCKSERVER_VALIDATE_ADMIN_RESPONSES=1: each server the tests start (in-process or the
# binary) checks every admin answer it sends against its own /__admin/openapi.json and answers 500 naming
# the operation and the violation instead of one that does not fit (docs/admin-api.md).
# The server suites (sockets in process and the binary) and the contract suites run a second time on the
# portable platform backend, MOCKSERVER_EVENT_LOOP=poll (about 5 minutes more on 2 cores): poll(2) event
# loops with a pipe for wake-ups, and fixture folders compared every 250 ms instead of watched with
# inotify (what a build for a system without epoll uses; docs/architecture.md, "Platform").
# Tests/setup.sh installs redis-server and Python's websockets: their suites must run, never skip.
VALIDATE_ADMIN := MOCKSERVER_VALIDATE_ADMIN_RESPONSES=1 MOCKSERVER_REQUIRE_REDIS=1 MOCKSERVER_REQUIRE_WEBSOCKETS=1
SERVER_SUITES := MockServerTests|RobustnessTests|ProxyTests|CompatibilityTests|ContractsTests
test: deps
	@sh Tests/setup.sh
	$(SWIFT) build --build-tests
	SWIFT=$(SWIFT) sh Tests/check-portable.sh
	$(VALIDATE_ADMIN) $(SWIFT) test --skip-build --skip 'ClientKitEndToEndTests|FriendsAPITests|ClientKitTests|CORSBrowserTests|StreamingBrowserTests'
	MOCKSERVER_EVENT_LOOP=poll $(VALIDATE_ADMIN) $(SWIFT) test --skip-build --filter '$(SERVER_SUITES)'
	$(VALIDATE_ADMIN) $(SWIFT) test --skip-build --filter 'ClientKitTests'
	$(VALIDATE_ADMIN) $(SWIFT) test --skip-build --filter 'ClientKitEndToEndTests|FriendsAPITests|CORSBrowserTests|StreamingBrowserTests' --no-parallel
	MOCKSERVER_EVENT_LOOP=poll $(VALIDATE_ADMIN) $(SWIFT) test --skip-build --filter 'ClientKitEndToEndTests|FriendsAPITests' --no-parallel
	@if command -v chromium >/dev/null 2>&1 && command -v chromedriver >/dev/null 2>&1; then \
	  $(VALIDATE_ADMIN) python3 Tests/Browser/dashboard_test.py "$$($(SWIFT) build --show-bin-path)/mockserver"; \
	else echo "make: dashboard browser test skipped: chromium or chromedriver missing (Tests/setup.sh installs them)"; fi
	SWIFT=$(SWIFT) sh Tests/install-check.sh

# The browser tests in headless Chromium, always (Chromium and chromedriver are installed when missing, and a
# missing browser fails the run instead of skipping it): CORS (a page on one mockserver fetches from another)
# and the dashboard (docs/dashboard.md: live log, near-miss diff, no console error, no outside request;
# screenshots to .build/dashboard.png and .build/dashboard-dark.png).
test-browser: deps
	@sh Tests/setup.sh
	$(SWIFT) build --build-tests
	$(VALIDATE_ADMIN) MOCKSERVER_REQUIRE_BROWSER=1 $(SWIFT) test --skip-build --filter 'CORSBrowserTests|StreamingBrowserTests'
	$(VALIDATE_ADMIN) python3 Tests/Browser/dashboard_test.py "$$($(SWIFT) build --show-bin-path)/mockserver"

# Compiles ClientKit's portable core (what iOS/macOS apps get) on Linux without Sources/ClientKit/Linux,
# and fails when it imports a Linux-only module or calls a C library function itself (docs/clientkit.md).
check-portable:
	SWIFT=$(SWIFT) sh Tests/check-portable.sh

lint:
	$(SWIFT) format lint --strict -r Sources Tests Examples Fuzz Package.swift
	python3 Scripts/check-structure.py

format:
	$(SWIFT) format -i -r Sources Tests Examples Fuzz Package.swift

# libFuzzer + AddressSanitizer, FUZZ_SECONDS each (default 60): HTTPCore's parser (requests and
# responses, whole and split), the fixture JSON parser (parse, serialize, parse again), stub mappings
# (parse and lint, then match requests built from the input), the admin API's JSON handlers (create,
# replace, import, find, count, near misses, settings, scenarios, paged reads, then requests matched
# against what was created), the XML reader (libxml2 through XMLSupport: equalToXml against itself,
# matchesXPath, the formatXml and xPath helpers; entities nested, external ones never loaded) and the
# OpenAPI loader (OpenAPI 3.x and Swagger 2.0, JSON or YAML, loaded from a private temporary folder as
# --openapi does, then stubs generated, linted, example requests validated and answered, generated
# examples checked with JSONSchemaValidator). The SwiftPM targets are built once with coverage
# instrumentation into .build/fuzz (MockServer with -enable-testing, for the admin fuzzer; its dependency
# closure includes XMLSupport, Contracts and JSONSchema); each Fuzz/*.swift entry point is linked against
# their objects. New inputs go to .build/fuzz/*corpus, crashes to .build/fuzz/.
# UndefinedBehaviorSanitizer: the HTTP parser is fuzzed under it too where swiftc accepts
# -sanitize=undefined (Swift 6.3 on Linux does not: "unsupported option"; the rule says so and goes on).
# Swift's own overflow, bounds and unwrap checks stay on in these -O builds, so libFuzzer reports their
# traps as crashes either way.
FUZZ_SECONDS ?= 60
FUZZ_BUILD := .build/fuzz
FUZZ_FLAGS := -sanitize=fuzzer,address -parse-as-library -O
FUZZ_INCLUDES := -I Sources/CLinuxShims -I Sources/COpenSSL/include -I Sources/CZlib -I Sources/CLibXML2/include \
  -I Sources/CYAML
FUZZ_LINK = swiftc $(FUZZ_FLAGS) -package-name "$$(basename "$(CURDIR)" | tr A-Z a-z)" -I $(FUZZ_BUILD)/release/Modules
FUZZ_OBJECTS = $(FUZZ_BUILD)/release/$(1).build/*.o
# Every object of MockServer's dependency closure (the only thing built into FUZZ_BUILD), and the C libraries
# its system-library targets name: the stub and admin fuzzers need whatever Mappings and MockServer import.
FUZZ_ALL_OBJECTS = $(FUZZ_BUILD)/release/*.build/*.o
FUZZ_LIBS = -l_FoundationICU -lz $$(pkg-config --libs yaml-0.1 2>/dev/null)
fuzz: deps
	$(SWIFT) build -c release --build-path $(FUZZ_BUILD) --target MockServer \
	  -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library -Xswiftc -enable-testing
	@# Objects of source files since moved or removed stay in the build folder; they would be linked twice.
	@for o in $(FUZZ_BUILD)/release/*.build/*.swift.o; do \
	  t=$$(basename "$$(dirname "$$o")" .build); s=$$(basename "$$o" .o); \
	  [ -n "$$(find "Sources/$$t" -name "$$s" 2>/dev/null)" ] || rm -f "$$o"; \
	done
	$(FUZZ_LINK) Fuzz/HTTPParserFuzzer.swift $(call FUZZ_OBJECTS,HTTPCore) -o $(FUZZ_BUILD)/http-parser
	$(FUZZ_LINK) Fuzz/JSONParserFuzzer.swift $(call FUZZ_OBJECTS,MockJSON) \
	  $(call FUZZ_OBJECTS,RegularExpressions) -l_FoundationICU -o $(FUZZ_BUILD)/json-parser
	$(FUZZ_LINK) $(FUZZ_INCLUDES) Fuzz/StubFuzzer.swift $(FUZZ_ALL_OBJECTS) $(FUZZ_LIBS) -o $(FUZZ_BUILD)/stubs
	$(FUZZ_LINK) $(FUZZ_INCLUDES) Fuzz/AdminFuzzer.swift $(FUZZ_ALL_OBJECTS) $(FUZZ_LIBS) -o $(FUZZ_BUILD)/admin
	$(FUZZ_LINK) $(FUZZ_INCLUDES) Fuzz/XMLFuzzer.swift $(FUZZ_ALL_OBJECTS) $(FUZZ_LIBS) -o $(FUZZ_BUILD)/xml
	$(FUZZ_LINK) $(FUZZ_INCLUDES) Fuzz/OpenAPIFuzzer.swift $(FUZZ_ALL_OBJECTS) $(FUZZ_LIBS) -o $(FUZZ_BUILD)/openapi
	mkdir -p $(FUZZ_BUILD)/corpus $(FUZZ_BUILD)/json-corpus $(FUZZ_BUILD)/stub-corpus $(FUZZ_BUILD)/admin-corpus \
	  $(FUZZ_BUILD)/xml-corpus $(FUZZ_BUILD)/openapi-corpus
	cd $(FUZZ_BUILD) && ./http-parser -max_total_time=$(FUZZ_SECONDS) -max_len=4096 corpus ../../Fuzz/corpus
	cd $(FUZZ_BUILD) && ./json-parser -max_total_time=$(FUZZ_SECONDS) -max_len=4096 json-corpus ../../Fuzz/json-corpus
	cd $(FUZZ_BUILD) && ./stubs -max_total_time=$(FUZZ_SECONDS) -max_len=2048 stub-corpus ../../Fuzz/stub-corpus
	@if echo 'print(1)' > $(FUZZ_BUILD)/ubsan-probe.swift && \
	  swiftc -sanitize=undefined $(FUZZ_BUILD)/ubsan-probe.swift -o $(FUZZ_BUILD)/ubsan-probe >/dev/null 2>&1; then \
	  $(SWIFT) build -c release --build-path $(FUZZ_BUILD)-ubsan --target HTTPCore \
	    -Xswiftc -sanitize=fuzzer,undefined -Xswiftc -parse-as-library && \
	  swiftc -sanitize=fuzzer,undefined -parse-as-library -O -I $(FUZZ_BUILD)-ubsan/release/Modules \
	    -package-name "$$(basename "$(CURDIR)" | tr A-Z a-z)" Fuzz/HTTPParserFuzzer.swift \
	    $(FUZZ_BUILD)-ubsan/release/HTTPCore.build/*.o -o $(FUZZ_BUILD)/http-parser-ubsan && \
	  (cd $(FUZZ_BUILD) && ./http-parser-ubsan -max_total_time=$(FUZZ_SECONDS) -max_len=4096 corpus); \
	else echo "fuzz: swiftc does not support -sanitize=undefined on this platform; HTTP parser under UBSan skipped"; fi
	cd $(FUZZ_BUILD) && ./admin -max_total_time=$(FUZZ_SECONDS) -max_len=2048 -rss_limit_mb=4096 \
	  admin-corpus ../../Fuzz/admin-corpus
	cd $(FUZZ_BUILD) && ./xml -max_total_time=$(FUZZ_SECONDS) -max_len=4096 xml-corpus ../../Fuzz/xml-corpus
	cd $(FUZZ_BUILD) && ./openapi -max_total_time=$(FUZZ_SECONDS) -max_len=8192 -rss_limit_mb=4096 \
	  openapi-corpus ../../Fuzz/openapi-corpus

bench: deps
	@sh Benchmarks/bench.sh

# 10 minutes (SOAK_SECONDS) of mixed traffic against one release server: keep-alive, new connections,
# pipelining, slow readers and never-readers, admin reads, hot reloads, delayed and faulted stubs. Prints
# requests, errors, RSS and open descriptors at start and end; fails on an error, a descriptor not given
# back, or RSS growth above SOAK_RSS_BOUND_MB (96). SOAK_BINARY=PATH tests another build. Not in `make test`.
soak: build-release
	python3 Benchmarks/soak.py

clean:
	rm -rf .build
