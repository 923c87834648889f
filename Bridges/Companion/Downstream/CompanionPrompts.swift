import CompanionWire
import Foundation
import RelayCore

/// Which permission prompt one socket shows, as a value.
///
/// The app has one alert for every session and answers it with the option tapped and a session
/// id only (its open session's, which need not be the prompt's), so a socket shows one prompt at
/// a time, the oldest pending approval of the sessions it holds, and an answer on the socket is
/// the answer to that prompt. A socket that shows none answers the oldest pending approval of the
/// session it names. The app cannot take a prompt down: one answered elsewhere, expired or
/// cancelled stays on its screen until tapped, so the next prompt is sent only after the socket's
/// own answer (refused then, saying who answered first) or when the app resumes (it subscribes,
/// or comes back to the foreground, having heard nothing while away), and a tap never lands on a prompt the person did not see: an
/// answer decides the prompt shown when it arrived (`CompanionSocketMachine.Effect.permission`).
struct CompanionPrompts {
    /// A pending approval and the session id it has for Companion clients.
    struct Pending: Equatable {
        var approval: Approval
        var sessionID: String
    }

    enum Occasion: Equatable {
        /// A backend asked: shown when the socket shows nothing.
        case asked
        /// The socket's answer to the approval `id` was taken or refused: the next one, unless the
        /// socket shows another already (it came back from the background meanwhile).
        case answered(id: String)
        /// The app subscribed (it reconnected or opened a session): the prompt again, or the one
        /// waiting now.
        case resumed
        /// The app came back to the foreground: it heard nothing while away, so the one waiting
        /// now if the prompt it has was resolved meanwhile (it still has one that waits).
        case foregrounded
    }

    /// The approval whose prompt the socket shows (it may have been resolved meanwhile).
    private(set) var shown: Approval?

    /// The prompt to send on `occasion`, given the pending approvals of the socket's sessions,
    /// oldest first; nil when there is none to send.
    mutating func next(_ occasion: Occasion, pending: [Pending]) -> Pending? {
        switch occasion {
        case .asked where shown != nil:
            return nil
        case .answered(let id) where shown != nil && shown?.id != id:
            return nil
        case .resumed:
            if let shown, let again = pending.first(where: { $0.approval.id == shown.id }) { return again }
        case .foregrounded:
            if let shown, pending.contains(where: { $0.approval.id == shown.id }) { return nil }
        case .asked, .answered:
            break
        }
        shown = pending.first?.approval
        return pending.first
    }

    /// Longest summary shown in a prompt, in characters.
    static let summaryLimit = 500

    /// The `permissionRequest` of `pending` at `now`: who wants to do what and where, one option
    /// per decision the approval allows, "Deny" by default, and the seconds left until it is denied.
    static func request(_ pending: Pending, now: Int64) -> PermissionRequest {
        let approval = pending.approval
        let choices: [(ApprovalDecision, PermissionChoice)] = [(.allowOnce, .allowOnce), (.allowAlways, .allowAlways), (.deny, .deny)]
        let options = choices.filter { approval.decisions.contains($0.0) }.map(\.1.option)
        let secondsLeft = (max(0, approval.expiresAt - now) + 999) / 1000
        return PermissionRequest(
            sessionId: pending.sessionID,
            prompt: prompt(approval),
            options: options,
            defaultOption: options.contains(PermissionChoice.deny.option) ? PermissionChoice.deny.option : options.last ?? "",
            timeout: Int(max(1, secondsLeft)),
            approvalId: approval.shortID,
            toolName: approval.toolName
        )
    }

    /// "Claude Code wants to run Bash in app: touch x (4f2a)": plain text (an alert shows no markdown).
    static func prompt(_ approval: Approval) -> String {
        let verb = approval.toolName == "Bash" ? "run" : "use"
        let place = approval.directory.map { " in " + ($0 as NSString).lastPathComponent } ?? ""
        let summary = approval.summary.isEmpty ? "" : ": " + approval.summary.prefix(summaryLimit)
        return "\(approval.agent) wants to \(verb) \(approval.toolName)\(place)\(summary) (\(approval.shortID))"
    }

    /// What a decision is called in a reply.
    static func done(_ decision: ApprovalDecision) -> String {
        switch decision {
        case .allowOnce: "Allowed once"
        case .allowAlways: "Always allowed for this session"
        case .deny: "Denied"
        }
    }

    /// The core's decision for a choice.
    static func decision(_ choice: PermissionChoice) -> ApprovalDecision {
        switch choice {
        case .allowOnce: .allowOnce
        case .allowAlways: .allowAlways
        case .deny: .deny
        }
    }

    /// "Bash touch x: allowed once by Ann's iPhone from clawline (4f2a)", for `progress`.
    static func resolved(_ approval: Approval, _ resolution: ApprovalResolution) -> String {
        let what = approval.summary.isEmpty ? approval.toolName : "\(approval.toolName) \(approval.summary.prefix(summaryLimit))"
        return "\(what): \(resolution.summary) (\(approval.shortID))"
    }
}
