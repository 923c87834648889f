import Foundation
import RelayCore
import Testing

@testable import GatewayWire

@Suite final class AccountIdentityTests {
    let directory = NSTemporaryDirectory() + "gateway-accounts-\(Identifiers.newUUID())/accounts"

    deinit { try? FileManager.default.removeItem(atPath: (directory as NSString).deletingLastPathComponent) }

    @Test func anAccountKeepsItsKeyInItsFolder() throws {
        let identity = try AccountIdentity(directory: directory, account: "home")
        #expect(FileManager.default.fileExists(atPath: directory + "/home.key"))
        #expect(try AccountIdentity(directory: directory, account: "home").deviceID == identity.deviceID)
    }

    @Test(arguments: ["../home", "a/b", "..", ".hidden", ""])
    func anAccountNameThatLeavesItsFolderIsRefused(account: String) {
        #expect(throws: AccountError.self) { try AccountIdentity(directory: directory, account: account) }
        let parent = (directory as NSString).deletingLastPathComponent
        let written = (try? FileManager.default.contentsOfDirectory(atPath: parent)) ?? []
        #expect(written.allSatisfy { $0 == "accounts" }, "nothing written beside accounts/: \(written)")
    }
}
