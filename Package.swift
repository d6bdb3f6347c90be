// swift-tools-version:6.0
import PackageDescription

// Modules and their arrows (docs/architecture.md):
//   HTTPCore ← MockJSON ← Templating ← Mappings ← MockServer ← MockServerCLI ← mockserver
//   NativeSupport (zlib, OpenSSL) ← MockServer, ClientKit;  MockServerTesting → MockServer, Mappings
//   MockJSON ← JSONSchema ← Mappings (matchesJsonSchema), Contracts (+ Mappings, CYAML) ← MockServerCLI
//   (admin answers are checked against the admin API's own OpenAPI document by MockServerCLI, injected into
//   MockServer's configuration: MockServer does not import Contracts)
//   (`verify` sends its requests with MockServer's own upstream client, the one proxy stubs use; neither
//   imports ClientKit)
// MockServer and ClientKit never import each other.
let package = Package(
  name: "MockServer",
  // ClientKit uses Mutex (Synchronization) and typed throws: iOS 18, macOS 15, tvOS 18, watchOS 11.
  platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11)],
  products: [
    .executable(name: "mockserver", targets: ["mockserver"]),
    .library(name: "MockServer", targets: ["MockServer"]),
    .library(name: "MockServerTesting", targets: ["MockServerTesting"]),
    .library(name: "ClientKit", targets: ["ClientKit"]),
    .library(name: "HTTPCore", targets: ["HTTPCore"]),
  ],
  targets: [
    .systemLibrary(name: "CLinuxShims", path: "Sources/CLinuxShims"),
    .systemLibrary(
      name: "CZlib", path: "Sources/CZlib", pkgConfig: "zlib",
      providers: [.apt(["zlib1g-dev"]), .brew(["zlib"])]),
    // OpenSSL 3's headers and trampolines that load libssl.so.3 and libcrypto with dlopen on first use
    // (TLS, proxying to https, digests), not linked: they are about 1.7 MiB resident in every process
    // otherwise. The headers come with libssl-dev (`make deps`).
    .target(name: "COpenSSL", linkerSettings: [.linkedLibrary("dl", .when(platforms: [.linux]))]),
    // libxml2 loaded with dlopen on the first XML matcher or XPath use, not linked: it brings ICU and liblzma
    // (about 0.9 MiB resident) into every process otherwise. Its declarations are in the target's header.
    .target(name: "CLibXML2", linkerSettings: [.linkedLibrary("dl", .when(platforms: [.linux]))]),
    .systemLibrary(
      name: "CYAML", path: "Sources/CYAML", pkgConfig: "yaml-0.1",
      providers: [.apt(["libyaml-dev"]), .brew(["libyaml"])]),
    // hiredis, the Redis project's own C client: the shared state store of replicas (docs/scaling.md).
    .systemLibrary(
      name: "CHiredis", path: "Sources/CHiredis", pkgConfig: "hiredis",
      providers: [.apt(["libhiredis-dev"]), .brew(["hiredis"])]),
    // Values, parser, serializer and HTTP dates: no I/O, shared by server and client.
    // libm linked explicitly: an executable that uses HTTPCore alone (and not Foundation) failed to link on
    // Linux without it (`round`, `floor` from HTTPDate; found by make test-install).
    .target(name: "HTTPCore", linkerSettings: [.linkedLibrary("m", .when(platforms: [.linux]))]),
    // zlib, OpenSSL errors and BIOs, digests: the C libraries both sides use, wrapped once.
    .target(name: "NativeSupport", dependencies: ["CZlib", "COpenSSL"]),
    // The one regex engine: ICU's C API in the toolchain's _FoundationICU (the ICU Foundation uses) on
    // Linux, NSRegularExpression on Apple platforms.
    .target(
      name: "RegularExpressions",
      linkerSettings: [.linkedLibrary("_FoundationICU", .when(platforms: [.linux]))]),
    // JSON values with exact numbers, parser, serializer, JSONPath.
    .target(name: "MockJSON", dependencies: ["RegularExpressions"]),
    // JSON Schema validation as OpenAPI 3.0/3.1 and `matchesJsonSchema` use it.
    .target(name: "JSONSchema", dependencies: ["MockJSON", "RegularExpressions"]),
    // libxml2 wrapped once: XXE-safe parsing of bounded input and XPath 1.0 (`equalToXml`, `matchesXPath`,
    // the `xPath` and `soapXPath` helpers).
    .target(name: "XMLSupport", dependencies: ["CLibXML2"]),
    // Pact's request-matching model (specifications V2–V4), as Pact's reference implementation applies it:
    // matching rules, path expressions, JSON, XML, form, multipart, text and binary bodies.
    .target(
      name: "PactMatching", dependencies: ["HTTPCore", "MockJSON", "RegularExpressions", "XMLSupport"]),
    // Response templates: WireMock's Handlebars dialect, its helpers and the request model.
    .target(name: "Templating", dependencies: ["HTTPCore", "MockJSON", "RegularExpressions", "XMLSupport"]),
    // The stub model, its parser and diagnostics, matching and the stub table.
    .target(
      name: "Mappings",
      dependencies: [
        "HTTPCore", "MockJSON", "JSONSchema", "Templating", "RegularExpressions", "XMLSupport",
        "PactMatching",
      ]),
    // The server: event loop, connections, responses and faults, the mock responder, journal, admin API.
    .target(
      name: "MockServer",
      dependencies: [
        "HTTPCore", "MockJSON", "Mappings", "Templating", "RegularExpressions", "NativeSupport",
        "CLinuxShims", "COpenSSL", "CHiredis",
      ]),
    // Contracts: YAML and OpenAPI documents, stubs generated from them, lint against them, Pact files in
    // and out, drift between fixtures and a running provider.
    .target(
      name: "Contracts",
      dependencies: [
        "HTTPCore", "MockJSON", "JSONSchema", "Mappings", "CYAML", "RegularExpressions", "PactMatching",
      ]),
    // The command line: options, main, TLS set-up, and the admin answers' check against the admin API's
    // own OpenAPI document (MOCKSERVER_VALIDATE_ADMIN_RESPONSES=1, docs/admin-api.md).
    .target(
      name: "MockServerCLI",
      dependencies: [
        "MockServer", "Mappings", "MockJSON", "HTTPCore", "Templating", "Contracts", "JSONSchema",
        "XMLSupport",
      ]),
    .executableTarget(name: "mockserver", dependencies: ["MockServerCLI"]),
    // ClientKit: a portable core (requests, client, decoding, cache, interceptors, URLSession transport;
    // CryptoKit digests and Security trust on Apple platforms) and, on Linux only, Sources/ClientKit/Linux
    // (socket transport, OpenSSL TLS, libcrypto digests), compiled under CLIENTKIT_NATIVE.
    // `make check-portable` compiles the core without them (docs/clientkit.md).
    .target(
      name: "ClientKit",
      dependencies: [
        "HTTPCore",
        .target(name: "NativeSupport", condition: .when(platforms: [.linux])),
        .target(name: "COpenSSL", condition: .when(platforms: [.linux])),
      ],
      swiftSettings: [.define("CLIENTKIT_NATIVE", .when(platforms: [.linux]))]),
    .target(
      name: "MockServerTesting",
      dependencies: ["MockServer", "MockServerCLI", "Mappings", "MockJSON", "HTTPCore"]),
    // The test suites' shared helpers, not a product: waiting with a deadline (`eventually`), the one raw
    // socket client (`RawClient`), the process runner (`runProcess`), temporary folders and fixtures, and
    // parsing stubs for unit tests.
    .target(
      name: "TestSupport", dependencies: ["HTTPCore", "Mappings", "MockJSON"], path: "Tests/TestSupport"),
    // One unit test target per library.
    .testTarget(name: "HTTPCoreTests", dependencies: ["HTTPCore"]),
    .testTarget(name: "MockJSONTests", dependencies: ["MockJSON"]),
    .testTarget(name: "TemplatingTests", dependencies: ["Templating", "HTTPCore", "MockJSON"]),
    .testTarget(
      name: "MappingsTests",
      dependencies: [
        "Mappings", "MockJSON", "HTTPCore", "RegularExpressions", "XMLSupport", "CLibXML2", "TestSupport",
      ]),
    // The server in process: connections, responses and faults, the responder, journal, admin API, reloads.
    .testTarget(
      name: "MockServerTests",
      dependencies: [
        "MockServer", "MockServerCLI", "Mappings", "MockJSON", "Templating", "NativeSupport", "HTTPCore",
        "TestSupport",
      ]),
    .testTarget(name: "ClientKitTests", dependencies: ["ClientKit", "HTTPCore"]),
    // Contracts: OpenAPI and Pact documents, stubs served from them, runtime validation, drift checks.
    .testTarget(
      name: "ContractsTests",
      dependencies: [
        "Contracts", "JSONSchema", "MockJSON", "Mappings", "HTTPCore", "MockServer", "MockServerCLI",
        "MockServerTesting", "TestSupport",
      ],
      exclude: [
        "Pact/consumer.py", "Pact/verify.py", "Pact/reference_match.py", "Pact/compatibility-cases.json",
        "Pact/rule-cases.json",
        "Documents/users.yaml", "Documents/keywords.yaml", "PrismHarness/cases.json",
        "PrismHarness/README.md",
      ]),
    // Against the real binary: WireMock compatibility, the mapping cases of Tests/Compatibility/cases
    // against the binary and WireMock, body matchers (XML, form, multipart, charsets), the journal's shape,
    // fixture folders and the template helpers as WireMock documents them.
    .testTarget(name: "CompatibilityTests", dependencies: ["MockServerTesting", "MockJSON", "TestSupport"]),
    // Against the real binary: no crash from any input, bounded memory and descriptors (read from
    // /proc/PID), back pressure, stalls, shutdown, logging that never blocks, the admin API's guards.
    .testTarget(
      name: "RobustnessTests",
      dependencies: [
        "MockServer", "MockServerTesting", "Mappings", "MockJSON", "HTTPCore", "NativeSupport", "TestSupport",
      ]),
    // Proxy stubs and recording against the real binary, a Python http.server upstream and a second
    // mockserver.
    .testTarget(
      name: "ProxyTests",
      dependencies: [
        "MockServer", "MockServerTesting", "Mappings", "MockJSON", "HTTPCore", "NativeSupport", "TestSupport",
      ],
      exclude: ["upstream.py", "authoring_upstream.py"]),
    // ClientKit end to end: its transports and features against a mock server (in process and the binary).
    .testTarget(
      name: "ClientKitEndToEndTests",
      dependencies: [
        "ClientKit", "MockServerTesting", "MockServer", "Mappings", "MockJSON", "HTTPCore", "TestSupport",
      ]),
    // The sample app module of Examples/FriendsApp and its contract tests (see its README).
    .target(name: "FriendsAPI", dependencies: ["ClientKit"], path: "Examples/FriendsApp/Sources/FriendsAPI"),
    .testTarget(
      name: "FriendsAPITests", dependencies: ["FriendsAPI", "ClientKit", "MockServerTesting"],
      path: "Examples/FriendsApp/Tests/FriendsAPITests"),
  ],
  swiftLanguageModes: [.v6]
)
