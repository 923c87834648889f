import Testing

@testable import CompanionBridge

@Suite struct ParagraphChunkerTests {
    @Test func wholeParagraphsGoOutOnceAndTheRestAtTheEnd() {
        var chunker = ParagraphChunker()
        #expect(chunker.take("Hel", final: false).isEmpty, "an unfinished paragraph waits")
        #expect(chunker.take("Hello\n\nWor", final: false).map(\.content) == ["Hello"])
        #expect(chunker.take("Hello\n\nWorld\n\n\n\nBye", final: false).map(\.content) == ["World"], "empty paragraphs are never sent")
        let last = chunker.take("Hello\n\nWorld\n\n\n\nBye", final: true)
        #expect(last.map(\.content) == ["Bye"])
        #expect(last.map(\.id) == ["chunk-2"])
        #expect(chunker.nextChunkID() == "chunk-3")
    }

    @Test func anAnswerWithoutBreaksIsOneChunkAtTheEnd() {
        var chunker = ParagraphChunker()
        #expect(chunker.take("echo: a b", final: false).isEmpty)
        #expect(chunker.take("echo: a b c", final: true).map(\.content) == ["echo: a b c"])
        #expect(chunker.take("   \n\n", final: true).isEmpty)
    }
}
