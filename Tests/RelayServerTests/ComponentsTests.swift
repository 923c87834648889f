import Dispatch
import Logging
import Synchronization
import Testing

@testable import RelayServer

@Suite struct ComponentsTests {
    @Test func partsStopInTheReverseOrderOfTheirStart() {
        let components = Components(logger: Logger(label: "test"))
        let stopped = Mutex<[String]>([])
        for name in ["store", "audit", "loop", "mDNS"] { components.started(name) { stopped.withLock { $0.append(name) } } }
        #expect(components.names == ["store", "audit", "loop", "mDNS"])
        #expect(components.stopAll().isEmpty)
        #expect(stopped.withLock { $0 } == ["mDNS", "loop", "audit", "store"])
        #expect(components.names.isEmpty, "a second stop stops nothing twice")
    }

    @Test func aPartThatHangsIsLeftBehindAndTheOthersStillStop() {
        let components = Components(logger: Logger(label: "test"), stopBoundSeconds: 0.2)
        let release = DispatchSemaphore(value: 0)
        let stopped = Mutex<[String]>([])
        components.started("store") { stopped.withLock { $0.append("store") } }
        components.started("stuck") { release.wait() }
        components.started("mDNS") { stopped.withLock { $0.append("mDNS") } }
        #expect(components.stopAll() == ["stuck"])
        #expect(stopped.withLock { $0 } == ["mDNS", "store"])
        release.signal()
    }
}

@Suite struct MetricsTextTests {
    @Test func labelValuesAndHelpAreEscapedAsTheTextFormatAsks() {
        var metrics = MetricsText()
        metrics.add("m_total", "counter", "a \\ help\nline", [([("account", "a\"b\\c\nd"), ("state", "ok")], 2)])
        #expect(
            metrics.text == """
                # HELP m_total a \\\\ help\\nline
                # TYPE m_total counter
                m_total{account="a\\"b\\\\c\\nd",state="ok"} 2

                """
        )
    }

    @Test func aSummaryNamesItsQuantilesAfterItsOwnLabels() {
        var metrics = MetricsText()
        metrics.addSummary("s_seconds", "help", [([("stage", "x")], [(0.5, 0.25)], 1.5, 3)])
        #expect(metrics.text.contains("s_seconds{stage=\"x\",quantile=\"0.5\"} 0.25\n"))
        #expect(metrics.text.contains("s_seconds_sum{stage=\"x\"} 1.5\ns_seconds_count{stage=\"x\"} 3\n"))
    }
}
