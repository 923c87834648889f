import RelayServer
import Testing

@Suite struct ListenEndpointTests {
    @Test func parsesAndPrints() {
        #expect(ListenEndpoint("127.0.0.1:8787") == ListenEndpoint(host: "127.0.0.1", port: 8787))
        #expect(ListenEndpoint("[::1]:0") == ListenEndpoint(host: "::1", port: 0))
        #expect(ListenEndpoint("example.org:443")?.description == "example.org:443")
        #expect(ListenEndpoint(host: "::", port: 80).description == "[::]:80")
        #expect(ListenEndpoint("::1:80") == nil)
        #expect(ListenEndpoint("127.0.0.1:-1") == nil)
        #expect(ListenEndpoint("127.0.0.1:65536") == nil)
    }

    @Test func loopback() {
        for host in ["127.0.0.1", "127.255.0.9", "::1", "localhost", "LOCALHOST"] {
            #expect(ListenEndpoint(host: host, port: 1).isLoopback, "\(host)")
        }
        for host in ["0.0.0.0", "::", "10.0.0.1", "128.0.0.1", "127.0.0.1.5", "127.0.0.256", "example.org", "127.0.0"] {
            #expect(!ListenEndpoint(host: host, port: 1).isLoopback, "\(host)")
        }
    }
}
