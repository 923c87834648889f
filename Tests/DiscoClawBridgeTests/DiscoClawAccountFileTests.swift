import Foundation
import Logging
import Testing

@testable import DiscoClawBridge

@Suite final class DiscoClawAccountFileTests {
    let directory: String

    init() throws {
        directory = NSTemporaryDirectory() + "discoclaw-account-\(UUID().uuidString)/accounts"
    }

    deinit { try? FileManager.default.removeItem(atPath: (directory as NSString).deletingLastPathComponent) }

    func mode(_ path: String) throws -> Int {
        try #require(FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int)
    }

    @Test func aSavedStateLoadsBackPrivately() throws {
        let path = DiscoClawAccountFile.path(directory: directory, account: "disco")
        #expect(path.hasSuffix("/accounts/disco.discoclaw.json"))
        var file = DiscoClawAccountFile(server: "http://127.0.0.1:4242")
        file.token = "secret"
        file.deviceId = "d1"
        file.userId = "u1"
        file.conversations = ["cv_relay": "up-1"]
        try DiscoClawAccountFile.write(file.encoded(), to: path)
        #expect(try mode(path) == 0o600)
        #expect(try mode(directory) == 0o700)
        let (loaded, note) = DiscoClawAccountFile.load(path: path, server: "http://127.0.0.1:4242")
        #expect(loaded == file && note == nil)
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasSuffix(".tmp") }
        #expect(leftovers.isEmpty)
    }

    @Test func anotherServersOrAnUnreadableStateIsNotReused() throws {
        let path = DiscoClawAccountFile.path(directory: directory, account: "disco")
        var file = DiscoClawAccountFile(server: "http://a:1")
        file.token = "secret"
        try DiscoClawAccountFile.write(file.encoded(), to: path)
        let (other, why) = DiscoClawAccountFile.load(path: path, server: "http://b:2")
        #expect(other == DiscoClawAccountFile(server: "http://b:2"))
        #expect(why?.contains("another server") == true)
        try DiscoClawAccountFile.write(Data("{not json".utf8), to: path)
        let (fresh, broken) = DiscoClawAccountFile.load(path: path, server: "http://a:1")
        #expect(fresh.token == nil && broken != nil)
        #expect(DiscoClawAccountFile.load(path: path + ".missing", server: "http://a:1").note == nil)
    }

    @Test func anAccountNameCannotLeaveTheDirectory() {
        #expect(DiscoClawAccountFile.path(directory: "/d", account: "../x/y") == "/d/.._x_y.discoclaw.json")
    }

    @Test func theWriterKeepsTheLatestState() throws {
        let path = DiscoClawAccountFile.path(directory: directory, account: "w")
        let writer = DiscoClawAccountWriter(path: path, logger: Logger(label: "test"))
        for index in 0..<20 {
            var file = DiscoClawAccountFile(server: "http://a:1")
            file.conversations = ["c": "up-\(index)"]
            writer.save(file)
        }
        writer.flush()
        #expect(DiscoClawAccountFile.load(path: path, server: "http://a:1").file.conversations == ["c": "up-19"])
        #expect(try mode(path) == 0o600)
    }
}
