import Foundation
import RelayServer
import Testing

@Suite struct ClusterConfigTests {
    static let postgres = "[store]\nkind = \"postgres\"\nurl = \"postgres://relay@db:5432/clawrelay\"\n"

    @Test func aRelayIsOnItsOwnUnlessItSaysCluster() throws {
        #expect(try RelayConfig.parse(text: Self.postgres, fileName: "relay.toml").cluster == nil)
        let config = try RelayConfig.parse(text: Self.postgres + "[cluster]\n", fileName: "relay.toml")
        #expect(config.cluster == ClusterSettings())
        #expect(config.cluster?.heartbeatSeconds == 2 && config.cluster?.leaseSeconds == 10 && config.cluster?.nodeID == nil)
    }

    @Test func takesItsSettings() throws {
        let text = Self.postgres + "[cluster]\nnode_id = \"eu-1\"\nheartbeat_seconds = 1\nlease_seconds = 5\n"
        let cluster = try RelayConfig.parse(text: text, fileName: "relay.toml").cluster
        #expect(cluster?.nodeID == "eu-1" && cluster?.heartbeatSeconds == 1 && cluster?.leaseSeconds == 5)
    }

    @Test func refusesWhatCannotWork() {
        expectRejection("[cluster]\nnode_id = \"a\"\n", .invalidValue, "relay.toml:1: [cluster]: needs [store] kind = \"postgres\"")
        expectRejection(
            Self.postgres + "[cluster]\nnode_id = \"\"\n",
            .invalidValue,
            "relay.toml:5: [cluster] node_id: expected 1 to 200 printable bytes"
        )
        expectRejection(Self.postgres + "[cluster]\nnode_id = \"a\\u0007b\"\n", .invalidValue, "relay.toml:5: [cluster] node_id:")
        expectRejection(Self.postgres + "[cluster]\nheartbeat_seconds = 0\n", .invalidValue, "relay.toml:5: [cluster] heartbeat_seconds:")
        expectRejection(
            Self.postgres + "[cluster]\nheartbeat_seconds = 61\n",
            .invalidValue,
            "relay.toml:5: [cluster] heartbeat_seconds: expected 1 to 60"
        )
        expectRejection(
            Self.postgres + "[cluster]\nlease_seconds = 601\n",
            .invalidValue,
            "relay.toml:5: [cluster] lease_seconds: expected at most 600"
        )
        expectRejection(
            Self.postgres + "[cluster]\nheartbeat_seconds = 5\nlease_seconds = 10\n",
            .invalidValue,
            "relay.toml:6: [cluster] lease_seconds: must be more than two heartbeats (10 s)"
        )
        expectRejection(Self.postgres + "[cluster]\nnodes = 3\n", .unknownKey, "relay.toml")
    }

    /// Joining or leaving a cluster, or another node id, takes a restart.
    @Test func aReloadDoesNotChangeTheCluster() throws {
        let old = try RelayConfig.parse(text: Self.postgres, fileName: "relay.toml")
        let new = try RelayConfig.parse(text: Self.postgres + "[cluster]\nnode_id = \"b\"\n", fileName: "relay.toml")
        let changes = ConfigDiff.changes(from: old, to: new)
        #expect(changes.contains { $0.needsRestart && $0.description.contains("[cluster]") })
        #expect(ConfigDiff.applicable(from: old, to: new).cluster == nil)
    }
}
