import CompanionWire
import RelayCore
import Testing

@testable import CompanionBridge

/// Which prompt a socket shows, and how an answer reads, as values.
@Suite struct CompanionPromptsTests {
    static func pending(
        _ id: String,
        decisions: [ApprovalDecision] = ApprovalDecision.allCases,
        expiresAt: Int64 = 600_000
    ) -> CompanionPrompts.Pending {
        let ask = ApprovalAsk(
            requestID: id,
            agent: "Claude Code",
            toolName: "Edit",
            summary: "/src/\(id).swift",
            input: .object([:]),
            decisions: decisions
        )
        let approval = Approval(
            id: id + String(repeating: "0", count: 32 - id.count),
            shortID: id,
            userID: "u",
            conversationID: "cv_" + id,
            runID: "run",
            backend: "claude",
            ask: ask,
            createdAt: 0,
            expiresAt: expiresAt
        )
        return CompanionPrompts.Pending(approval: approval, sessionID: "s-" + id)
    }

    @Test func oneAtATimeTheNextOnlyAfterTheSocketsAnswerOrASubscribe() {
        let (a, b) = (Self.pending("aaaa"), Self.pending("bbbb"))
        var prompts = CompanionPrompts()
        #expect(prompts.next(.asked, pending: [a]) == a)
        #expect(prompts.next(.asked, pending: [a, b]) == nil, "a second question waits behind the shown one")
        #expect(prompts.next(.resumed, pending: [a, b]) == a, "a resume shows the same prompt again")
        #expect(prompts.next(.asked, pending: [b]) == nil, "resolved elsewhere, the prompt stays on the app until it is answered")
        #expect(prompts.next(.resumed, pending: [b]) == b, "a resume shows what is still waiting")
        #expect(prompts.next(.answered(id: b.approval.id), pending: []) == nil && prompts.shown == nil)
        #expect(prompts.next(.asked, pending: [a]) == a)
    }

    @Test func backInTheForegroundTheAppGetsWhatWaitsUnlessItHasIt() {
        let (a, b) = (Self.pending("aaaa"), Self.pending("bbbb"))
        var prompts = CompanionPrompts()
        #expect(prompts.next(.foregrounded, pending: [a]) == a, "asked while it was away")
        #expect(prompts.next(.foregrounded, pending: [a, b]) == nil, "it has the prompt")
        #expect(prompts.next(.foregrounded, pending: [b]) == b, "its prompt was resolved while it was away")
        #expect(prompts.next(.answered(id: a.approval.id), pending: [b]) == nil, "a late answer to the old prompt leaves the new one")
        #expect(prompts.next(.answered(id: b.approval.id), pending: []) == nil && prompts.shown == nil)
    }

    @Test func theRequestOffersTheApprovalsDecisionsAndTheSecondsLeft() {
        let request = CompanionPrompts.request(Self.pending("cafe", decisions: [.allowOnce, .deny], expiresAt: 90_001), now: 30_000)
        #expect(request.options == ["Allow once", "Deny"] && request.defaultOption == "Deny" && request.timeout == 61)
        #expect(request.prompt == "Claude Code wants to use Edit: /src/cafe.swift (cafe)" && request.sessionId == "s-cafe")
        let late = CompanionPrompts.request(Self.pending("beef"), now: 700_000)
        #expect(late.timeout == 1, "never 0: the app counts down from it")
    }

    @Test(arguments: [
        ("Allow once", PermissionChoice.allowOnce), ("ALLOW", .allowOnce), ("yes!", .allowOnce), ("y", .allowOnce), ("allow-once", .allowOnce),
        ("Always allow", .allowAlways), ("allow always", .allowAlways), ("always", .allowAlways), ("allow-always", .allowAlways),
        ("Deny", .deny), ("n", .deny), ("No.", .deny), ("don\u{2019}t  allow", .deny), ("deny", .deny),
    ])
    func theAppsAndTheServersSpellings(response: String, choice: PermissionChoice) {
        #expect(PermissionChoice(response: response, remember: false) == choice)
    }

    @Test func rememberMakesAnAllowanceAlwaysAndUnknownWordsNameNothing() {
        #expect(PermissionChoice(response: "y", remember: true) == .allowAlways)
        #expect(PermissionChoice(response: "n", remember: true) == .deny)
        for response in ["", "yes please", "sounds good", "maybe", "allow once now"] {
            #expect(PermissionChoice(response: response, remember: false) == nil, "\(response)")
        }
    }
}
