// swift-tools-version: 6.0
import Foundation
import PackageDescription

let swiftSettings: [SwiftSetting] = [.swiftLanguageMode(.v6)]

let package = Package(
    name: "clawrelay",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "clawrelay", targets: ["clawrelay"])
    ],
    dependencies: [
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/LebJe/TOMLKit", from: "0.6.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.0"),
        .package(url: "https://github.com/apple/swift-crypto", from: "4.1.0"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
    ],
    targets: [
        .systemLibrary(
            name: "CLibWebSockets",
            path: "Sources/CLibWebSockets",
            pkgConfig: "libwebsockets",
            providers: [.apt(["libwebsockets-dev"])]
        ),
        // The epoll event loop: lws's libev glue (libwebsockets-evlib-ev) on a loop the relay owns.
        .systemLibrary(
            name: "CLibEv",
            path: "Sources/CLibEv",
            providers: [.apt(["libev-dev"])]
        ),
        .systemLibrary(
            name: "CQREncode",
            path: "Sources/CQREncode",
            pkgConfig: "libqrencode",
            providers: [.apt(["libqrencode-dev"])]
        ),
        .systemLibrary(
            name: "CCurl",
            path: "Sources/CCurl",
            pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev"])]
        ),
        .systemLibrary(
            name: "CNcurses",
            path: "Sources/CNcurses",
            pkgConfig: "ncursesw",
            providers: [.apt(["libncurses-dev"])]
        ),
        .systemLibrary(
            name: "CAvahi",
            path: "Sources/CAvahi",
            pkgConfig: "avahi-client",
            providers: [.apt(["libavahi-client-dev"])]
        ),
        .target(
            name: "RelayDiscovery",
            dependencies: ["CAvahi", .product(name: "Logging", package: "swift-log")],
            swiftSettings: swiftSettings
        ),
        .target(name: "CSpawn", path: "Sources/CSpawn"),
        .target(name: "CAffinity", path: "Sources/CAffinity"),
        .target(
            name: "RelayTesting",
            dependencies: ["RelayCore", "RelayTransport", .product(name: "Logging", package: "swift-log")],
            swiftSettings: swiftSettings
        ),
        .target(name: "ChatModel", swiftSettings: swiftSettings),
        .target(name: "TerminalQR", dependencies: ["CQREncode"], swiftSettings: swiftSettings),
        .target(
            name: "RelayTransport",
            dependencies: ["CLibEv", "CLibWebSockets", "RelayKit", .product(name: "Logging", package: "swift-log")],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "RelayKit",
            dependencies: [.product(name: "Crypto", package: "swift-crypto")],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "RelayCore",
            dependencies: ["RelayKit", .product(name: "Crypto", package: "swift-crypto"), .product(name: "Logging", package: "swift-log")],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "RelayStore",
            dependencies: [
                "RelayCore", .product(name: "GRDB", package: "GRDB.swift"), .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: swiftSettings
        ),
        // A PostgreSQL server of a test's or a benchmark's own (initdb + postgres on loopback).
        .target(name: "PostgresHarness", swiftSettings: swiftSettings),
        // The PostgreSQL store (several nodes on one database): its own target, so SQLite-only work never builds postgres-nio.
        .target(
            name: "RelayStorePostgres",
            dependencies: [
                "RelayCore", "RelayStore", .product(name: "GRDB", package: "GRDB.swift"), .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(name: "ClawlineWire", dependencies: ["RelayKit"], path: "Bridges/Clawline/Wire", swiftSettings: swiftSettings),
        .target(
            name: "ClawlineBridge",
            dependencies: ["ClawlineWire", "RelayCore", "RelayTransport", .product(name: "Logging", package: "swift-log")],
            path: "Bridges/Clawline",
            exclude: ["Wire"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "GatewayWire",
            dependencies: ["RelayKit", .product(name: "Crypto", package: "swift-crypto")],
            path: "Bridges/Gateway/Wire",
            swiftSettings: swiftSettings
        ),
        .target(
            name: "GatewayClient",
            dependencies: ["GatewayWire", "RelayKit", "RelayTransport", .product(name: "Logging", package: "swift-log")],
            path: "Bridges/Gateway/Client",
            swiftSettings: swiftSettings
        ),
        .target(
            name: "GatewayBridge",
            dependencies: ["RelayCore", "RelayTransport", "GatewayWire", "GatewayClient", .product(name: "Logging", package: "swift-log")],
            path: "Bridges/Gateway",
            exclude: ["Wire", "Client"],
            swiftSettings: swiftSettings
        ),
        .target(name: "CompanionWire", dependencies: ["RelayKit"], path: "Bridges/Companion/Wire", swiftSettings: swiftSettings),
        .target(
            name: "CompanionBridge",
            dependencies: ["CompanionWire", "RelayCore", "RelayTransport", .product(name: "Logging", package: "swift-log")],
            path: "Bridges/Companion",
            exclude: ["Wire"],
            swiftSettings: swiftSettings
        ),
        .target(name: "DiscoClawWire", dependencies: ["RelayKit"], path: "Bridges/DiscoClaw/Wire", swiftSettings: swiftSettings),
        .target(
            name: "DiscoClawBridge",
            dependencies: ["DiscoClawWire", "RelayCore", "RelayTransport", "RelayHTTP", .product(name: "Logging", package: "swift-log")],
            path: "Bridges/DiscoClaw",
            exclude: ["Wire"],
            swiftSettings: swiftSettings
        ),
        .target(name: "RelayProcess", dependencies: ["CSpawn"], swiftSettings: swiftSettings),
        .target(
            name: "LocalBridge",
            dependencies: ["RelayCore", "RelayProcess", .product(name: "Logging", package: "swift-log")],
            path: "Bridges/Local",
            swiftSettings: swiftSettings
        ),
        .target(
            name: "RelayServer",
            dependencies: [
                "RelayCore", "RelayStore", "RelayStorePostgres", "RelayTransport", "ClawlineBridge", "CompanionBridge", "DiscoClawBridge",
                "GatewayBridge", "LocalBridge", "RelayDiscovery",
                "RelayHTTP",
                "RelayPush",
                .product(name: "TOMLKit", package: "TOMLKit"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "RelayHTTP",
            dependencies: ["CCurl", "RelayCore", .product(name: "Logging", package: "swift-log")],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "RelayPush",
            dependencies: [
                "RelayHTTP", "RelayCore", .product(name: "Crypto", package: "swift-crypto"), .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "RelayChat",
            dependencies: [
                "CNcurses", "ChatModel", "RelayKit", "RelayTransport", "GatewayWire", "GatewayClient",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "RelayBench",
            dependencies: [
                "CAffinity", "PostgresHarness", "RelayCore", "RelayTransport", "GatewayWire", .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "clawrelay",
            dependencies: [
                "RelayServer", "RelayStore", "RelayStorePostgres", "RelayCore", "RelayBench", "RelayChat", "GatewayWire", "TerminalQR",
                "CompanionBridge",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "RelayCoreTests",
            dependencies: ["RelayCore", "RelayTesting", .product(name: "Logging", package: "swift-log")],
            swiftSettings: swiftSettings
        ),
        .testTarget(name: "RelayKitTests", dependencies: ["RelayKit", "RelayTesting"], swiftSettings: swiftSettings),
        .testTarget(name: "RelayTransportTests", dependencies: ["RelayTransport", "RelayTesting", "RelayCore"], swiftSettings: swiftSettings),
        .testTarget(
            name: "RelayStorePostgresTests",
            dependencies: [
                "PostgresHarness", "RelayStorePostgres", "RelayStore", "RelayCore", .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(name: "RelayStoreTests", dependencies: ["RelayStore", "RelayCore"], swiftSettings: swiftSettings),
        .testTarget(
            name: "ClawlineBridgeTests",
            dependencies: [
                "ClawlineBridge", "ClawlineWire", "RelayCore", "RelayTesting", "RelayTransport", .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "GatewayBridgeTests",
            dependencies: [
                "GatewayBridge", "GatewayWire", "GatewayClient", "RelayCore", "RelayTesting", "RelayTransport",
                .product(name: "Crypto", package: "swift-crypto"), .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(name: "RelayServerTests", dependencies: ["RelayServer", "CompanionBridge", "DiscoClawBridge"], swiftSettings: swiftSettings),
        .testTarget(
            name: "CompanionBridgeTests",
            dependencies: ["CompanionBridge", "CompanionWire", "RelayCore", "RelayTesting", "RelayTransport"],
            swiftSettings: swiftSettings
        ),
        .testTarget(name: "LocalBridgeTests", dependencies: ["LocalBridge", "RelayCore", "RelayProcess"], swiftSettings: swiftSettings),
        .testTarget(name: "ChatModelTests", dependencies: ["ChatModel"], swiftSettings: swiftSettings),
        .testTarget(name: "RelayBenchTests", dependencies: ["RelayBench", "RelayCore"], swiftSettings: swiftSettings),
        .testTarget(
            name: "DiscoClawBridgeTests",
            dependencies: [
                "DiscoClawBridge", "DiscoClawWire", "RelayCore", "RelayTesting", "RelayTransport", .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "RelayPushTests",
            dependencies: [
                "RelayPush", "RelayCore", .product(name: "Crypto", package: "swift-crypto"), .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
    ]
)

// libFuzzer targets for the pure decoders, only when asked for (`scripts/fuzz` sets this and
// builds with -sanitize=fuzzer, whose runtime brings `main`).
if ProcessInfo.processInfo.environment["CLAWRELAY_FUZZ"] != nil {
    package.targets.append(
        .executableTarget(
            name: "clawrelay-fuzz",
            dependencies: ["RelayCore", "ClawlineWire", "GatewayBridge", "GatewayWire", "CompanionWire", "DiscoClawWire", "RelayServer"],
            path: "Fuzz",
            swiftSettings: swiftSettings + [.unsafeFlags(["-parse-as-library"])]
        )
    )
    package.products.append(.executable(name: "clawrelay-fuzz", targets: ["clawrelay-fuzz"]))
}
