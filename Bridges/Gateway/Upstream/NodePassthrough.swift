import Foundation
import GatewayClient
import GatewayWire
import Logging
import RelayCore
import RelayTransport

/// Node passthrough: for each node connected downstream and each gateway account marked
/// `expose_nodes`, the relay connects upstream as a node with a relay-held identity for that
/// (device, account) pair, declares the device's caps and commands, and forwards invokes and
/// results both ways. A device going away closes its upstream node links.
///
/// - Important: loop thread only.
public final class NodePassthrough {
    public struct Account: Sendable {
        public var name: String
        public var target: ServiceLoop.ClientTarget
        public init(name: String, target: ServiceLoop.ClientTarget) {
            self.name = name
            self.target = target
        }
    }

    private let accounts: [Account]
    private let accountsDirectory: String
    private let loop: ServiceLoop
    private let logger: Logger
    private let onState: (String, LinkState, String) -> Void
    private var links: [String: [GatewayLink]] = [:]
    weak var downstream: GatewayDownstream?

    public init(
        accounts: [Account],
        accountsDirectory: String,
        loop: ServiceLoop,
        logger: Logger,
        onState: @escaping (String, LinkState, String) -> Void
    ) {
        self.accounts = accounts
        self.accountsDirectory = accountsDirectory
        self.loop = loop
        self.logger = logger
        self.onState = onState
    }

    func nodeConnected(_ node: GatewayPeer) {
        nodeDisconnected(deviceID: node.deviceID)
        let deviceID = node.deviceID
        for account in accounts {
            let linkName = "\(account.name)/node-\(deviceID.prefix(12))"
            let identity: AccountIdentity
            do {
                identity = try AccountIdentity(directory: accountsDirectory, account: "\(account.name)-node-\(deviceID.prefix(32))")
            } catch {
                logger.error("node passthrough: no identity", metadata: ["account": "\(account.name)", "error": "\(error)"])
                continue
            }
            let hello = LinkHello.node(
                displayName: "\(node.displayName ?? String(deviceID.prefix(8))) via clawrelay",
                caps: node.caps,
                commands: node.commands,
                permissions: node.permissions
            )
            let link = GatewayLink(
                name: linkName,
                target: account.target,
                identity: identity,
                connector: loop,
                logger: logger,
                hello: hello
            ) { [weak self] state, detail in self?.onState(linkName, state, detail) }
            link.onEvent = { [weak self, weak link] event in
                guard event.event == "node.invoke.request", let self, let link,
                    let request = event.payload.flatMap({ GatewayJSON.decode(NodeInvokeRequest.self, from: $0) })
                else { return }
                forward(request, from: link, to: deviceID)
            }
            links[deviceID, default: []].append(link)
            link.connect()
        }
    }

    func nodeDisconnected(deviceID: String) {
        for link in links.removeValue(forKey: deviceID) ?? [] { link.stop() }
    }

    /// An upstream gateway invoked the node: run it on the local node and send the result back up.
    private func forward(_ request: NodeInvokeRequest, from link: GatewayLink, to deviceID: String) {
        guard let downstream else { return }
        downstream.invokeLocal(
            nodeID: deviceID,
            command: request.command,
            paramsJSON: request.paramsJSON ?? "null",
            timeoutMillis: Int(request.timeoutMs ?? 30_000),
            idempotencyKey: request.idempotencyKey
        ) { [weak link] outcome in
            guard let link else { return }
            let result: NodeInvokeResult
            switch outcome {
            case .success(let payload, let payloadJSON):
                result = NodeInvokeResult(id: request.id, nodeId: link.deviceID, ok: true, payloadJSON: payloadJSON ?? payload.encoded())
            case .failure(let error):
                let nodeError = error.details?.nodeError ?? NodeError(code: error.details?.code ?? error.code.rawValue, message: error.message).json
                result = NodeInvokeResult(id: request.id, nodeId: link.deviceID, ok: false, error: nodeError)
            }
            link.request("node.invoke.result", result) { _ in }
        }
    }
}
