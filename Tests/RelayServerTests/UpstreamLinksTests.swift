import RelayCore
import Testing

@testable import RelayServer

/// Which upstream links a node opens: on its own all at once; in a cluster those it holds, each
/// built again from the files the cluster shares, and only once they are in place.
@Suite struct UpstreamLinksTests {
    private final class Opened {
        var names: [String] = []
    }

    @Test func aClusterNodeOpensAHeldAccountRebuiltOnceItsFilesAreInPlace() {
        let node = NodeIncarnation(node: "n1")
        let opened = Opened()
        var ready: Set<String> = []
        let links = UpstreamLinks(node: node, ready: { ready.contains($0) }, rebuild: { name in { opened.names.append("rebuilt \(name)") } })
        links.add([("claw", { opened.names.append("first claw") }), ("gw", { opened.names.append("first gw") })])
        let leases = [AccountLease(account: "claw", holder: node), AccountLease(account: "gw", holder: NodeIncarnation(node: "n2"))]
        links.held(leases)
        #expect(opened.names.isEmpty, "the files are not taken yet")
        ready = ["claw", "gw"]
        links.held(leases)
        links.held(leases)
        #expect(opened.names == ["rebuilt claw"], "once, rebuilt; another node's account stays closed")
    }

    @Test func aRelayOnItsOwnOpensEveryLinkAtOnce() {
        let opened = Opened()
        let links = UpstreamLinks(node: nil, ready: { _ in false }, rebuild: { name in { opened.names.append("rebuilt \(name)") } })
        links.add([("claw", { opened.names.append("claw") })])
        #expect(opened.names == ["claw"])
    }
}
