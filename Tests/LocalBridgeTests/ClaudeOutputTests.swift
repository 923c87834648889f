import RelayCore
import Testing

@testable import LocalBridge

/// Cutting Claude Code's stdout into lines, whatever sizes the reads come in.
@Suite struct ClaudeOutputTests {
    static let session =
        [Stream.initLine, Stream.text("Looking."), Stream.bash, Stream.toolResult("toolu_1", isError: false), Stream.result("Looking.")]
        .joined(separator: "\n") + "\n"

    private func read(_ text: String, chunk: Int) throws -> (ClaudeOutput, [ChildOutput]) {
        var output = ClaudeOutput(resumed: nil)
        var found: [ChildOutput] = []
        let bytes = Array(text.utf8)
        var start = 0
        while start < bytes.count {
            found += try output.read(bytes[start..<min(start + chunk, bytes.count)])
            start += chunk
        }
        return (output, found)
    }

    @Test func linesCutAcrossReadsParseAsWholeOnes() throws {
        let (whole, expected) = try read(Self.session, chunk: 1 << 16)
        for chunk in [1, 7, 100] {
            let (output, found) = try read(Self.session, chunk: chunk)
            #expect(found == expected, "reads of \(chunk) bytes")
            #expect(output.isComplete)
            #expect(output.ending(.exited(0), stderr: "") == whole.ending(.exited(0), stderr: ""))
        }
        #expect(expected.contains(.event(.toolStarted(ClaudeStreamParserTests.bashStarted))))
        #expect(whole.ending(.exited(0), stderr: "") == [.final("Looking.")])
    }

    @Test func aLastLineWithoutABreakStillCounts() throws {
        let (output, _) = try read(Stream.text("Hi.") + "\n" + Stream.result("Hi."), chunk: 1 << 16)
        #expect(!output.isComplete, "the result line has not ended yet")
        #expect(output.ending(.exited(0), stderr: "") == [.final("Hi.")])
    }

    @Test func anOverlongLineFailsInOneReadOrAcrossMany() throws {
        let long = String(repeating: "x", count: ClaudeOutput.lineLimit + 1)
        #expect(throws: ChildOutputError.self) { _ = try read(long + "\n", chunk: ClaudeOutput.lineLimit + 2) }
        #expect(throws: ChildOutputError.self) { _ = try read(long, chunk: 1 << 16) }
        let (_, found) = try read(Stream.text(String(repeating: "x", count: 1_000)) + "\n", chunk: 10)
        #expect(found == [.grew], "long lines below the limit are fine")
    }
}
