import ArgumentParser
import Foundation
import RelayCore

struct Accounts: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract:
            "Show the upstream accounts' link state (connected, retrying, awaiting approval, bad credentials, failed) and, in a cluster, the node holding each."
    )

    @OptionGroup var options: DataOptions
    @Flag(help: "One JSON array instead of a table.") var json = false

    func run() throws {
        let store = Devices.openStore(options)
        let accounts = try store.accounts()
        if json {
            print(
                JSONValue.array(
                    accounts.map {
                        .object(
                            [
                                "name": .string($0.name), "kind": .string($0.kind), "state": .string($0.state), "detail": .string($0.detail),
                                "updatedAt": .int($0.updatedAt),
                            ].merging($0.node.map { ["node": .string($0)] } ?? [:]) { first, _ in first }
                        )
                    }
                ).encoded()
            )
            return
        }
        if accounts.isEmpty { print("no upstream accounts (or the relay has not started)") }
        for account in accounts {
            let holder = account.node.map { "  (held by node \($0))" } ?? ""
            print("\(account.name)  \(account.kind)  \(account.state)  \(account.detail)\(holder)")
        }
    }
}
