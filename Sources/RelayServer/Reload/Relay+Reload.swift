import Foundation
import Logging
import RelayCore

extension Relay {
    /// SIGHUP: reads the configuration again (`load`), checks it as start-up would, and applies on
    /// the loop what can change live (`ConfigDiff`): the log level and format, backends (a turn
    /// running on a replaced or removed backend finishes there; turns that start later use the
    /// new one), the listeners' backends, routes and limits, and `[push]`. Each change is logged;
    /// what needs a restart is logged as a warning and keeps running as it was. A file that
    /// fails to load or to check changes nothing: the error is logged with its `FILE:LINE`.
    ///
    /// - Important: call it from one thread at a time, after `start` and before `stop`.
    public func reload(_ load: () throws -> RelayConfig) {
        let file = config.sourcePath ?? "the embedded default"
        logger.info("reloading the configuration", metadata: ["file": "\(file)"])
        let next: RelayConfig
        do {
            next = try load()
        } catch {
            return logger.error("reload failed, still running on the previous configuration: \(error)")
        }
        let problems = ConfigCheck.problems(in: next)
        guard problems.isEmpty else {
            for problem in problems { logger.error("reload failed, still running on the previous configuration: \(problem)") }
            return
        }
        let changes = ConfigDiff.changes(from: config, to: next) + (tlsFiles?.changedOnDisk(in: next) ?? [])
        guard !changes.isEmpty else { return logger.info("reloaded: nothing changed", metadata: ["file": "\(file)"]) }
        let applicable = ConfigDiff.applicable(from: config, to: next)
        do {
            let pushChanged = applicable.push != config.push
            let push = pushChanged ? try PushWiring.make(applicable, loop: loop, logger: logger) : self.push
            let done = DispatchSemaphore(value: 0)
            let failure = ReloadFailure()
            loop.execute(with: self) { relay in
                do {
                    try relay.apply(applicable, push: push, pushChanged: pushChanged)
                } catch {
                    failure.error = error
                }
                done.signal()
            }
            guard done.wait(timeout: .now() + 10) == .success else {
                return logger.error("reload: the relay did not apply the configuration within 10 s")
            }
            if let error = failure.error {
                if pushChanged { push?.client.shutdown() }
                throw error
            }
        } catch {
            return logger.error("reload failed, still running on the previous configuration: \(error)")
        }
        for change in changes {
            if change.needsRestart {
                logger.warning("\(change)")
            } else {
                logger.notice("reloaded: \(change)")
            }
        }
        if let pinned = logging?.pinnedLevel, changes.contains(where: { $0.subject == "log_level of [server]" }) {
            logger.notice("the log level stays \(pinned): --log-level or CLAWRELAY_LOG_LEVEL set it")
        }
    }

    /// Applies `next` (restart-only keys already kept as they run). Builds the added and changed
    /// backends first, so a backend that cannot be built changes nothing. Loop thread.
    private func apply(_ next: RelayConfig, push: PushWiring?, pushChanged: Bool) throws {
        guard let hub else { return }
        let running = Dictionary(config.backends.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        var fresh = next
        fresh.backends = next.backends.filter { running[$0.name] != $0 }
        let built = try makeBackends(fresh)
        if let logging, let level = Logger.Level(rawValue: next.logLevel) { logging.apply(level: level, json: next.logFormat == "json") }
        let made = Dictionary(built.backends.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        let routed = next.backends.compactMap { made[$0.name] ?? hub.router.backends[$0.name] }
        for dropped in hub.router.replace(with: routed) {
            retire(dropped, keepsAccount: next.backends.contains { $0.name == dropped.name && $0.isUpstream })
        }
        for backend in built.claudeCode { localStops.add(backend) { backend.stop() } }
        for settings in fresh.backends where settings.isUpstream { hub.accounts.register(settings.name, kind: settings.kindName) }
        storage?.holdAccounts(next.backends.filter(\.isUpstream).map(\.name))
        upstreams?.add(built.connects)
        if let settings = next.clawline, settings != config.clawline { clawline?.reconfigure(settings) }
        if let settings = next.gateway, settings != config.gateway { gateway?.reconfigure(settings) }
        if let settings = next.companion, settings != config.companion { companion?.reconfigure(settings) }
        if let settings = next.discoClaw, settings != config.discoClaw { discoClaw?.reconfigure(settings) }
        if pushChanged {
            if let push {
                push.stopped(by: pushStops)
                hub.pushes.replace(dispatcher: push.service, settings: push.core)
            } else {
                hub.pushes.disable()
            }
            self.push = push
        }
        config = next
    }

    /// A backend the router no longer routes to lets go of what it holds once no turn runs on it;
    /// an upstream account's entry in `clawrelay accounts` goes unless its name lives on as one.
    private func retire(_ backend: any Backend, keepsAccount: Bool) {
        guard let hub else { return }
        hub.turns.whenIdle(backend) { [localStops, logger] in
            backend.retire()
            localStops.remove(backend)
            if !keepsAccount { hub.accounts.unregister(backend.name) }
            logger.info("a backend a reload replaced or removed is let go", metadata: ["backend": "\(backend.name)"])
        }
    }
}

/// What went wrong on the loop, handed to the thread that waits for it. `@unchecked Sendable`
/// holds because the loop writes it before signalling and the waiter reads it only after.
private final class ReloadFailure: @unchecked Sendable {
    var error: (any Error)?
}
