import ChatModel
import Foundation
import GatewayWire
import RelayKit

/// The chat model's effects as gateway requests (loop thread); results come back through `post`.
enum ChatRequests {
    static func perform(_ effect: ChatEffect, on client: OperatorClient, post: @escaping @Sendable (ServerEvent) -> Void) {
        switch effect {
        case .send(let key, let text, let clientID):
            client.send(text, to: key, runID: clientID) { event in
                switch event {
                case .failed(let reason): post(.error(key: key, message: reason))
                // The gateway sends no event for the user's own message: the history after the
                // answer confirms it (with its seq) in place of the local echo.
                case .final: fetchHistory(key: key, limit: 20, on: client, post: post)
                case .progress: break
                }
            }
        case .createConversation(let backend, let title):
            // A `backend:NAME:` key opens a conversation on that backend with its first message.
            let key = "backend:\(backend):\(title.map(slug) ?? String(Identifiers.newUUID().prefix(8)))"
            post(
                .sessionCreated(
                    SessionSummary(key: key, displayName: title ?? backend, backend: backend, unreadCount: 0, updatedAt: SystemClock().nowMillis())
                )
            )
        case .markRead(let key, let seq):
            client.call("sessions.markRead", MarkReadParams(key: key, seq: seq)) { _ in }
        case .fetchHistory(let key, let limit):
            fetchHistory(key: key, limit: limit, on: client, post: post)
        case .abort(let key):
            client.call("chat.abort", ChatAbortParams(sessionKey: key)) { _ in }
        case .rename(let key, let title):
            client.call("sessions.patch", JSONValue.object(["key": .string(key), "label": .string(title)])) { result in
                switch result {
                case .success(let payload):
                    if let entry = payload["entry"], let update = GatewayEvents.update(entry) { post(.sessionChanged(update)) }
                case .failure(let error):
                    post(.error(key: key, message: "rename failed: \(error.description)"))
                }
            }
        case .listSessions:
            client.call("sessions.list") { result in
                guard case .success(let payload) = result else { return }
                post(.sessionsListed((payload["sessions"]?.arrayValue ?? []).compactMap { GatewayEvents.summary($0) }))
            }
        case .listBackends:
            client.call("backends.list") { result in
                guard case .success(let payload) = result else { return }
                let list = GatewayJSON.decode(BackendsList.self, from: payload)
                post(.backendsListed(names: list?.backends.map(\.name) ?? [], defaultBackend: list?.default))
            }
        case .listApprovals:
            // Both lists, or nothing (a gateway without approvals, or without the scope, keeps what is shown).
            client.call("exec.approval.list") { execs in
                client.call("plugin.approval.list") { plugins in
                    guard case .success(let execs) = execs, case .success(let plugins) = plugins else { return }
                    post(.approvalsListed(GatewayApprovals.list(execs, kind: .exec) + GatewayApprovals.list(plugins, kind: .plugin)))
                }
            }
        case .resolveApproval(let id, let kind, let choice):
            client.call("\(kind.rawValue).approval.resolve", ApprovalResolveParams(id: id, decision: choice.rawValue)) { result in
                if case .failure(let error) = result { post(.approvalAnswerFailed(id: id, message: error.message)) }
            }
        case .redraw, .bell, .quit:
            break
        }
    }

    static func fetchHistory(key: String, limit: Int, on client: OperatorClient, post: @escaping @Sendable (ServerEvent) -> Void) {
        client.call("chat.history", ChatHistoryParams(sessionKey: key, limit: Int64(limit))) { result in
            switch result {
            case .success(let payload):
                let now = SystemClock().nowMillis()
                let messages = (payload["messages"]?.arrayValue ?? []).enumerated().map { index, value in
                    GatewayEvents.message(GatewayJSON.decode(GatewayWire.ChatMessage.self, from: value), fallbackID: "h\(index)", now: now)
                }
                post(.history(key: key, messages: messages))
            case .failure(let error):
                post(.error(key: key, message: error.description))
            }
        }
    }

    /// A title as a session-key part: letters, digits and dashes.
    private static func slug(_ title: String) -> String {
        let kept = title.lowercased().map { $0.isLetter || $0.isNumber ? $0 : "-" }
        return String(String(kept).prefix(32))
    }
}
