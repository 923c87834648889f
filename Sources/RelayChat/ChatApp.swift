import ChatModel
import Foundation
import GatewayWire
import Logging
import RelayKit
import RelayTransport
import Synchronization

/// The full-screen client: the terminal and the chat model on the calling thread, the gateway
/// connection on the service loop, server events handed over through a locked inbox.
public final class ChatApp {
    private let terminal = Terminal()
    private var state: ChatState
    private var decoder = KeyDecoder()
    private let loop: ServiceLoop
    private let inbox = Inbox()
    private let client: LoopBound<OperatorClient>

    public init(target: ServiceLoop.ClientTarget, identity: AccountIdentity, bell: Bool, loop: ServiceLoop, logger: Logger) {
        self.loop = loop
        state = ChatState(
            configuration: ChatConfiguration(
                utcOffsetSeconds: TimeZone.current.secondsFromGMT(),
                // The run ids (idempotency keys) of one start: an earlier start's `tui-1` is a
                // finished run, and the relay would answer a new message sent with it as that run.
                clientIDPrefix: "tui-\(Identifiers.newUUID())",
                bellOnActivity: bell,
                now: { SystemClock().nowMillis() }
            )
        )
        let post = inbox.post
        let deviceID = identity.deviceID
        let explainer = ConnectExplainer(target: target, loop: loop)
        let made = OperatorClient(target: target, identity: identity, loop: loop, logger: logger) { linkState, detail in
            switch linkState {
            case .connected: post(.connection(.connected))
            case .connecting: post(.connection(.connecting))
            case .awaitingApproval:
                post(
                    .connection(
                        .disconnected(
                            reason: "not paired yet: run  clawrelay devices approve \(deviceID)",
                            retryInMillis: OperatorClient.maxRetryMillis
                        )
                    )
                )
            case .failed: post(.connection(.refused(reason: detail)))  // revoked: the link tries no more
            default:
                // The link's detail ends with when it tries next.
                explainer.explain(linkState, detail) { post(.connection(.disconnected(reason: $0.detail, retryInMillis: nil))) }
            }
        }
        made.onEvent = { event in
            let (now, payload) = (SystemClock().nowMillis(), event.payload ?? .null)
            switch event.event {
            case "chat": if let event = GatewayEvents.chat(payload, now: now) { post(event) }
            case "sessions.changed": if let row = payload["session"], let update = GatewayEvents.update(row) { post(.sessionChanged(update)) }
            case "exec.approval.requested", "plugin.approval.requested":
                if let approval = GatewayApprovals.approval(payload, kind: GatewayApprovals.kind(of: event.event)) {
                    post(.approvalRequested(approval))
                }
            case "exec.approval.resolved", "plugin.approval.resolved":
                if let approval = GatewayApprovals.approval(payload, kind: GatewayApprovals.kind(of: event.event)) {
                    post(.approvalResolved(approval, outcome: GatewayApprovals.outcome(payload)))
                }
            default: break
            }
        }
        client = LoopBound(made, loop: loop)
    }

    /// Runs until the user quits; the terminal is restored on the way out.
    public func run() {
        terminal.open()
        defer { terminal.close() }
        let client = self.client
        loop.execute { client.value.connect() }
        var effects = state.handle(.resize(columns: terminal.columns, rows: terminal.rows))
        while perform(effects) {
            effects = []
            switch terminal.read(timeoutMillis: decoder.hasPendingInput ? KeyDecoder.escapeTimeoutMillis : 50) {
            case .byte(let byte):
                for key in decoder.decode([byte]) { effects += state.handle(.key(key)) }
            case .resized:
                effects += state.handle(.resize(columns: terminal.columns, rows: terminal.rows))
            case .idle:
                for key in decoder.flush() { effects += state.handle(.key(key)) }
            }
            for event in inbox.take() { effects += state.handle(.server(event)) }
        }
        loop.execute { client.value.stop() }
    }

    /// Performs effects in order; false once the user quit.
    private func perform(_ effects: [ChatEffect]) -> Bool {
        for effect in effects {
            switch effect {
            case .quit: return false
            case .redraw: ChatPainter.paint(state.screen(), on: terminal)
            case .bell: terminal.ring()
            default: forward(effect)
            }
        }
        return true
    }

    /// Requests for the gateway, made on the loop; answers come back as server events.
    private func forward(_ effect: ChatEffect) {
        let (client, post) = (self.client, inbox.post)
        loop.execute { ChatRequests.perform(effect, on: client.value, post: post) }
    }
}

/// Server events from the loop thread, waiting for the screen's thread.
final class Inbox: Sendable {
    private let events = Mutex<[ServerEvent]>([])

    var post: @Sendable (ServerEvent) -> Void { { [self] event in events.withLock { $0.append(event) } } }

    func take() -> [ServerEvent] {
        events.withLock { events in
            defer { events.removeAll() }
            return events
        }
    }
}
