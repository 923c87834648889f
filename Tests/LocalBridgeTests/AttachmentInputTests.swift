import Foundation
import RelayCore
import RelayKit
import Testing

@testable import LocalBridge

/// What backends make of a turn's attachments: Claude Code's content blocks, a command's files.
@Suite struct AttachmentInputTests {
    @Test func claudeGetsImagesAndPDFsAsBlocksTextFilesAsTextAndANoteForTheRest() throws {
        let directory = NSTemporaryDirectory() + "attachment-input-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try Data("line one\n".utf8).write(to: URL(fileURLWithPath: directory + "/notes"))
        let blocks = ClaudeInput.blocks(for: [
            TurnAttachment(mimeType: "image/png", fileName: "p.png", base64: "iVBORw=="),
            TurnAttachment(mimeType: "application/pdf", base64: "JVBERg=="),
            TurnAttachment(mimeType: "text/plain", fileName: "notes.txt", path: directory + "/notes"),
            TurnAttachment(mimeType: "video/mp4", fileName: "clip.mp4", base64: "AAAA"),
            TurnAttachment(mimeType: "image/png", fileName: "gone.png", path: directory + "/missing"),
        ])
        #expect(blocks[0] == JSONValue.parse(#"{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw=="}}"#))
        #expect(blocks[1]["type"]?.stringValue == "document" && blocks[1]["source"]?["media_type"]?.stringValue == "application/pdf")
        #expect(blocks[2]["text"]?.stringValue == "Attached file notes.txt:\nline one\n")
        #expect(blocks[3]["text"]?.stringValue?.contains("clip.mp4 (video/mp4) was attached; Claude Code takes images") == true)
        #expect(blocks[4]["text"]?.stringValue?.contains("gone.png (image/png) was attached but could not be read") == true)
    }

    @Test func aUserLineIsAStringWithoutAttachmentsAndBlocksWithThem() throws {
        let plain = try #require(JSONValue.parse(ClaudeInput.user("hi", uuid: "u")))
        #expect(plain["message"]?["content"]?.stringValue == "hi")
        let image = JSONValue.object(["type": .string("image")])
        let mixed = try #require(JSONValue.parse(ClaudeInput.user("look", attachments: [image], uuid: "u")))
        #expect(mixed["message"]?["content"] == .array([.object(["type": .string("text"), "text": .string("look")]), image]))
        let alone = try #require(JSONValue.parse(ClaudeInput.user("", attachments: [image], uuid: "u")))
        #expect(alone["message"]?["content"] == .array([image]), "no empty text block")
    }

    @Test func aCommandsFileNamesStayInsideItsDirectory() {
        #expect(TurnFiles.fileName("photo.png", index: 1) == "1-photo.png")
        #expect(TurnFiles.fileName("../../etc/passwd", index: 2) == "2-passwd")
        #expect(TurnFiles.fileName("..", index: 3) == "3-attachment")
        #expect(TurnFiles.fileName(".hidden", index: 4) == "4-hidden")
        #expect(TurnFiles.fileName("a\u{0}b\nc\\d", index: 5) == "5-abcd")
        #expect(TurnFiles.fileName(nil, index: 6) == "6-attachment")
        #expect(TurnFiles.fileName(String(repeating: "x", count: 300), index: 7).count == 102)
    }
}
