import Foundation
import RelayCore

extension Relay {
    /// In a cluster, the account `name` as built again from the files now in this node's
    /// accounts folder, in the router in place of the one built at start (whose link never
    /// opened): the files may have just been replaced by the cluster's copy (`AccountFileSync`),
    /// and a bridge reads its account's files when it is built. Returns what opens the new link;
    /// nil (the start's account is kept) when it cannot be built, which is logged. Loop thread.
    func rebuiltAccount(_ name: String) -> (() -> Void)? {
        guard let hub, let settings = config.backends.first(where: { $0.name == name && $0.isUpstream }) else { return nil }
        var one = config
        one.backends = [settings]
        let built: BuiltBackends
        do {
            built = try makeBackends(one)
        } catch {
            logger.error(
                "cluster: cannot build the account again from its shared files; keeping this node's",
                metadata: ["account": "\(name)", "error": "\(error)"]
            )
            return nil
        }
        guard let fresh = built.backends.first, let connect = built.connects.first?.connect else { return nil }
        let routed = config.backends.compactMap { $0.name == name ? fresh : hub.router.backends[$0.name] }
        for dropped in hub.router.replace(with: routed) {
            hub.turns.whenIdle(dropped) { dropped.retire() }
        }
        return connect
    }
}
