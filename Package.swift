// swift-tools-version:6.0
import PackageDescription

let package = Package(
  name: "MockServer",
  platforms: [.macOS(.v15)],
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
    .systemLibrary(
      name: "COpenSSL", path: "Sources/COpenSSL", pkgConfig: "openssl",
      providers: [.apt(["libssl-dev"]), .brew(["openssl@3"])]),
    .target(name: "HTTPCore"),
    .target(
      name: "MockServer",
      dependencies: ["HTTPCore", "CLinuxShims", "CZlib", "COpenSSL"],
      // CompiledRegex calls ICU's regex C API in the toolchain's _FoundationICU (the ICU Foundation uses).
      linkerSettings: [.linkedLibrary("_FoundationICU", .when(platforms: [.linux]))]),
    .executableTarget(name: "mockserver", dependencies: ["MockServer"]),
    .target(name: "ClientKit", dependencies: ["HTTPCore", "COpenSSL", "CZlib"]),
    .target(name: "MockServerTesting", dependencies: ["MockServer", "HTTPCore"]),
    .testTarget(name: "HTTPCoreTests", dependencies: ["HTTPCore"]),
    .testTarget(name: "MockServerTests", dependencies: ["MockServer", "HTTPCore"]),
    .testTarget(name: "ClientKitTests", dependencies: ["ClientKit", "HTTPCore"]),
    .testTarget(
      name: "ContractTests",
      dependencies: ["ClientKit", "MockServerTesting", "MockServer", "HTTPCore"]),
    // The sample app module of Examples/FriendsApp and its contract tests (see its README).
    .target(name: "FriendsAPI", dependencies: ["ClientKit"], path: "Examples/FriendsApp/Sources/FriendsAPI"),
    .testTarget(
      name: "FriendsAPITests", dependencies: ["FriendsAPI", "ClientKit", "MockServerTesting"],
      path: "Examples/FriendsApp/Tests/FriendsAPITests"),
  ],
  swiftLanguageModes: [.v6]
)
