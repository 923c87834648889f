import CompanionWire
import Testing

@testable import CompanionBridge

@Suite struct CompanionTranscriptTests {
    @Test func textChunksJoinWithABlankLine() {
        var transcript = CompanionTranscript()
        #expect(transcript.append(type: "text", content: "First paragraph.") == "First paragraph.")
        #expect(transcript.append(type: "text", content: "Second.") == "First paragraph.\n\nSecond.")
        #expect(transcript.text == "First paragraph.\n\nSecond.")
    }

    @Test func completeToolAndEmptyChunksAreIgnored() {
        var transcript = CompanionTranscript()
        #expect(transcript.append(type: "complete", content: "") == nil)
        #expect(transcript.append(type: "tool_use", content: "") == nil)
        #expect(transcript.append(type: "text", content: "") == nil)
        #expect(transcript.append(type: "text", content: " \n ") == nil)
        #expect(transcript.append(type: "divider", content: "") == nil)
        #expect(transcript.isEmpty)
        #expect(transcript.append(type: "text", content: "kept") == "kept")
    }

    @Test func growthStopsAtTheBound() {
        var transcript = CompanionTranscript(maxBytes: 10)
        #expect(transcript.append(type: "text", content: "12345") == "12345")
        #expect(transcript.append(type: "text", content: "1234") == nil, "5 + 2 + 4 > 10")
        #expect(transcript.isTruncated)
        #expect(transcript.append(type: "text", content: "123") == "12345\n\n123")
        #expect(transcript.byteCount == 10)
    }
}

@Suite struct CompanionSessionCacheTests {
    @Test func oneSessionPerDirectory() {
        var cache = CompanionSessionCache()
        cache.store("s1", for: "/p/app", now: 0)
        cache.store("s2", for: nil, now: 0)
        #expect(cache.sessionID(for: "/p/app", now: 1) == "s1")
        #expect(cache.sessionID(for: nil, now: 1) == "s2")
        #expect(cache.sessionID(for: "/p/other", now: 1) == nil)
        cache.remove("stale", for: "/p/app")
        #expect(cache.sessionID(for: "/p/app", now: 2) == "s1", "only the named session is dropped")
        cache.remove("s1", for: "/p/app")
        #expect(cache.sessionID(for: "/p/app", now: 2) == nil)
    }

    @Test func idleEntriesExpireAndUseKeepsThemFresh() {
        var cache = CompanionSessionCache(idleMillis: 100)
        cache.store("s1", for: "/a", now: 0)
        #expect(cache.sessionID(for: "/a", now: 90) == "s1")
        #expect(cache.sessionID(for: "/a", now: 180) == "s1")
        #expect(cache.sessionID(for: "/a", now: 280) == nil)
        #expect(cache.count == 0)
    }

    @Test func leastRecentlyUsedGoesPastCapacity() {
        var cache = CompanionSessionCache(capacity: 2)
        cache.store("s1", for: "/a", now: 0)
        cache.store("s2", for: "/b", now: 1)
        _ = cache.sessionID(for: "/a", now: 2)
        cache.store("s3", for: "/c", now: 2)
        #expect(cache.count == 2)
        #expect(cache.sessionID(for: "/b", now: 3) == nil)
        #expect(cache.sessionID(for: "/a", now: 3) == "s1")
        #expect(cache.sessionID(for: "/c", now: 3) == "s3")
    }
}
