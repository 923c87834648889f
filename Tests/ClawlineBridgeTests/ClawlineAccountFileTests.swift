import Foundation
import Logging
import RelayCore
import Testing

@testable import ClawlineBridge

@Suite final class ClawlineAccountFileTests {
    let directory: String

    init() {
        directory = NSTemporaryDirectory() + "clawline-accounts-\(Identifiers.newUUID())/accounts"
    }

    deinit { try? FileManager.default.removeItem(atPath: (directory as NSString).deletingLastPathComponent) }

    func mode(_ path: String) throws -> Int {
        try #require(FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int)
    }

    func load() throws -> ClawlineAccountFile {
        try ClawlineAccountFile(directory: directory, account: "up", logger: Logger(label: "test"))
    }

    @Test(arguments: ["../up", "a/b", "..", ".hidden", ""])
    func anAccountNameThatLeavesItsFolderIsRefused(account: String) {
        #expect(throws: ClawlineAccountFileError.self) {
            try ClawlineAccountFile(directory: directory, account: account, logger: Logger(label: "test"))
        }
        let parent = (directory as NSString).deletingLastPathComponent
        let written = (try? FileManager.default.contentsOfDirectory(atPath: parent)) ?? []
        #expect(written.allSatisfy { $0 == "accounts" }, "nothing written beside accounts/: \(written)")
    }

    @Test func aNewAccountGetsADeviceIdInAPrivateFile() throws {
        let file = try load()
        #expect(file.path.hasSuffix("/accounts/up.clawline.json"))
        #expect(Identifiers.isUUIDv4(file.contents.deviceId) && !file.contents.isPaired)
        #expect(try mode(file.path) == 0o600 && mode(directory) == 0o700)
        #expect(try load().contents.deviceId == file.contents.deviceId, "the same device on the next start")
    }

    @Test func pairingAndTheCursorSurviveARestart() throws {
        let file = try load()
        file.storePairing(token: "jwt", userID: "user-1")
        file.advanceCursor(to: "s_1")
        file.advanceCursor(to: "s_2")
        file.flush()
        let again = try load().contents
        #expect(again == ClawlineAccountFile.Contents(deviceId: file.contents.deviceId, token: "jwt", userId: "user-1", lastMessageId: "s_2"))
        #expect(try mode(file.path) == 0o600)
        #expect(!FileManager.default.fileExists(atPath: file.path + ".tmp"))
    }

    @Test func aDamagedFileStopsStartUpNamingIt() throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let path = directory + "/up.clawline.json"
        #expect(FileManager.default.createFile(atPath: path, contents: Data(#"{"deviceId":"not-a-uuid"}"#.utf8)))
        let error = #expect(throws: ClawlineAccountFileError.self) { try load() }
        #expect(error?.description.contains(path) == true)
    }
}
