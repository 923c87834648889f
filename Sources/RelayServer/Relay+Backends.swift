import ClawlineBridge
import CompanionBridge
import DiscoClawBridge
import Foundation
import GatewayBridge
import LocalBridge
import Logging
import RelayCore
import RelayHTTP
import RelayTransport

extension Relay {
    /// The configured backends, built, with what opens each upstream account's link.
    struct BuiltBackends {
        var backends: [any Backend] = []
        /// Accounts whose gateway mirrors this relay's nodes (`expose_nodes`).
        var exposed: [NodePassthrough.Account] = []
        /// Opens each upstream account's link (loop thread), by account name.
        var connects: [(account: String, connect: () -> Void)] = []
        /// The Claude Code backends, whose processes stop off the loop.
        var claudeCode: [ClaudeCodeBackend] = []
    }

    /// Builds `config`'s `[[backends]]` on this relay's loop, its accounts in the data directory's
    /// `accounts` (a reload, an account taken over in a cluster). Loop thread.
    func makeBackends(_ config: RelayConfig) throws -> BuiltBackends {
        try Self.makeBackends(
            config,
            accountsDirectory: (self.config.dataDirectory as NSString).appendingPathComponent("accounts"),
            loop: loop,
            logger: logger,
            http: { [unowned self] in upstreamClient() },
            onState: reportAccountState
        )
    }

    /// Builds every `[[backends]]` entry; upstream accounts report their link through
    /// `onState(name, kind, state, detail)` on the loop.
    static func makeBackends(
        _ config: RelayConfig,
        accountsDirectory: String,
        loop: ServiceLoop,
        logger: Logger,
        http: () -> HTTPClient,
        onState: @escaping (String, String, LinkState, String) -> Void
    ) throws -> BuiltBackends {
        var built = BuiltBackends()
        for settings in config.backends {
            let name = settings.name
            let kind = settings.kindName
            let report: (LinkState, String) -> Void = { state, detail in onState(name, kind, state, detail) }
            switch settings.kind {
            case .echo(let delay):
                built.backends.append(EchoBackend(name: name, delayMillis: delay))
            case .command(let command, let timeout, let maxSeconds, let environment):
                built.backends.append(
                    CommandBackend(
                        name: name,
                        command: command,
                        timeoutSeconds: timeout,
                        maxSeconds: maxSeconds,
                        environment: environment,
                        logger: logger
                    )
                )
            case .claudeCode(let claude):
                let backend = ClaudeCodeBackend(name: name, options: claude, logger: logger)
                backend.probeVersion()
                built.claudeCode.append(backend)
                built.backends.append(backend)
            case .openclaw(let url, let sessionKey, let allowSelfSigned, let exposeNodes):
                let target = ServiceLoop.ClientTarget(host: url.host, port: url.port, path: url.path, tls: url.tls, allowSelfSigned: allowSelfSigned)
                if exposeNodes { built.exposed.append(NodePassthrough.Account(name: name, target: target)) }
                let upstream = try GatewayAccount(
                    name: name,
                    target: target,
                    sessionKey: sessionKey,
                    accountsDirectory: accountsDirectory,
                    loop: loop,
                    logger: logger,
                    onState: report
                )
                built.connects.append((name, { upstream.connect() }))
                built.backends.append(upstream)
            case .companion(let url, let token, let workingDirectory, let allowSelfSigned):
                let target = ServiceLoop.ClientTarget(host: url.host, port: url.port, path: url.path, tls: url.tls, allowSelfSigned: allowSelfSigned)
                let upstream = CompanionAccount(
                    name: name,
                    target: target,
                    token: token,
                    workingDirectory: workingDirectory,
                    loop: loop,
                    logger: logger,
                    onState: report
                )
                built.connects.append((name, { upstream.connect() }))
                built.backends.append(upstream)
            case .clawline(let url, let deviceName, let allowSelfSigned):
                // A provider's frames are single events; 8 MiB leaves room for long answers and bounds the rest.
                let target = ServiceLoop.ClientTarget(
                    host: url.host,
                    port: url.port,
                    path: url.path,
                    tls: url.tls,
                    allowSelfSigned: allowSelfSigned,
                    maxMessageBytes: 8 << 20
                )
                let upstream: ClawlineAccount
                do {
                    upstream = try ClawlineAccount(
                        name: name,
                        target: target,
                        deviceName: deviceName,
                        accountsDirectory: accountsDirectory,
                        loop: loop,
                        logger: logger,
                        onState: report
                    )
                } catch {
                    throw StartupFailure(description: "[[backends]] \(name): \(error)")
                }
                built.connects.append((name, { upstream.connect() }))
                built.backends.append(upstream)
            case .discoclaw(let url, let credential, let allowSelfSigned, let titlePrefix):
                let target = ServiceLoop.ClientTarget(
                    host: url.host,
                    port: url.port,
                    path: url.prefix + "/ws",
                    tls: url.tls,
                    allowSelfSigned: allowSelfSigned,
                    maxMessageBytes: 4 << 20
                )
                let upstream = DiscoClawAccount(
                    name: name,
                    baseURL: url.description,
                    target: target,
                    credential: credential,
                    titlePrefix: titlePrefix,
                    accountsDirectory: accountsDirectory,
                    client: http(),
                    loop: loop,
                    logger: logger,
                    onState: report
                )
                built.connects.append((name, { upstream.connect() }))
                built.backends.append(upstream)
            }
        }
        return built
    }
}
