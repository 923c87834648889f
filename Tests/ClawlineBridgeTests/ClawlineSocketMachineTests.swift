import ClawlineWire
import Foundation
import RelayCore
import Testing

@testable import ClawlineBridge

/// The protocol logic of one socket, on its own: no socket, no core, no clock.
@Suite struct ClawlineSocketMachineTests {
    typealias Machine = ClawlineSocketMachine
    static let device = "0f0e8a3c-6a6b-4c1d-9e2f-1a2b3c4d5e6f"
    static let user = "7c1d2e3f-4a5b-4c6d-8e7f-9a0b1c2d3e4f"

    static func allow(_ limit: Machine.RateLimit) -> Bool { true }
    static func refuse(_ limit: Machine.RateLimit) -> Bool { false }

    static let auth = ClientFrame.auth(.init(token: "t", deviceId: device, lastMessageId: nil))

    static func record(isAdmin: Bool) -> DeviceRecord {
        DeviceRecord(
            id: device,
            userID: user,
            claimedName: "phone",
            deviceInfoJSON: "{}",
            isAdmin: isAdmin,
            status: .approved,
            tokenHash: nil,
            tokenDelivered: true,
            createdAt: 0,
            lastSeenAt: nil
        )
    }

    static func event(_ seq: Int64, owner: String = user, role: ChatRole = .user, content: String = "hi") -> ChatEvent {
        ChatEvent(
            id: "s_\(seq)",
            seq: seq,
            userID: owner,
            conversationID: "cv",
            role: role,
            content: content,
            timestampMillis: seq,
            deviceID: device,
            attachmentsJSON: nil
        )
    }

    static func failure(_ cause: TurnFailure.Cause, device deviceID: String = device) -> BusEvent {
        .turnFailed(
            TurnFailure(
                turn: TurnRef(runID: "r", deviceID: deviceID, clientID: "c_1"),
                conversationID: "cv",
                userID: user,
                cause: cause,
                reason: "x",
                timestampMillis: 0
            )
        )
    }

    static func grant(isAdmin: Bool = false, events: [ChatEvent] = [], highWater: Int64 = 0) -> Machine.Grant {
        let window = ReplayWindow(events: events, truncated: false, historyReset: false, highWater: [user: highWater])
        return Machine.Grant(device: record(isAdmin: isAdmin), conversationID: "cv", window: window)
    }

    /// A machine whose `auth` went through, as the downstream drives it.
    func authenticating(claimsAdmin: Bool = false) -> Machine {
        var machine = Machine(sessionID: "sess_1")
        #expect(machine.received(Self.auth, limits: Self.allow) == .authenticate(.init(token: "t", deviceId: Self.device, lastMessageId: nil)))
        let verified = machine.tokenVerified(deviceID: Self.device, userID: Self.user, isAdmin: claimsAdmin)
        #expect(verified == [.attach(userID: Self.user)] + (claimsAdmin ? [.joinAdmins] : []))
        return machine
    }

    func live(isAdmin: Bool = false, highWater: Int64 = 0) -> Machine {
        var machine = authenticating(claimsAdmin: isAdmin)
        _ = machine.authenticated(Self.grant(isAdmin: isAdmin, highWater: highWater), maxReplayBytes: 1 << 20)
        return machine
    }

    @Test func aFreshSocketMayOnlyPairOrAuthenticate() {
        var machine = Machine()
        #expect(machine.received(.message(.init(id: "c_1", content: "hi")), limits: Self.allow) == .fail(.authenticateFirst))
        #expect(machine.received(.typing(.init(active: true)), limits: Self.allow) == .fail(.authenticateFirst))
        #expect(ClawlineError.authenticateFirst.closes && ClawlineError.authenticateFirst.code.closeCode == 1008)
        #expect(
            machine.received(.pairDecision(.init(deviceId: Self.device, approve: false, userId: nil)), limits: Self.allow) == .fail(.onlyAdminsDecide)
        )
        let pair = ClientFrame.PairRequest(deviceId: Self.device, claimedName: nil, deviceInfo: .null)
        #expect(machine.received(.pairRequest(pair), limits: Self.allow) == .pair(pair))
        #expect(machine.received(.pairRequest(pair), limits: Self.refuse) == .fail(.tooManyPairRequests))
        #expect(machine.received(Self.auth, limits: Self.refuse) == .fail(.tooManyAuthAttempts))
        var asked: [Machine.RateLimit] = []
        _ = machine.received(Self.auth) {
            asked.append($0)
            return true
        }
        #expect(asked == [.authAttempts(deviceID: Self.device)], "the device the frame names")
    }

    @Test func refusedFramesAndOversizedOnes() {
        var machine = Machine()
        #expect(machine.refused(.malformed, limits: Self.allow) == .close(code: 1002, reason: "malformed JSON"))
        let big = ClawlineError.tooLarge("content is larger than 64 KB", messageId: "c_1")
        #expect(machine.refused(.refused(big), limits: Self.allow) == .fail(big))
        let second = machine.refused(.refused(big), limits: Self.refuse)
        #expect(second == .fail(big.repeatedTooOften) && big.repeatedTooOften.closes)
        var asked: [Machine.RateLimit] = []
        _ = machine.refused(.refused(.invalid("x"))) {
            asked.append($0)
            return true
        }
        #expect(asked.isEmpty, "only oversized messages count")
    }

    @Test func liveEventsWaitWhileTheReplayIsReadThenFollowIt() throws {
        var machine = authenticating(claimsAdmin: true)
        #expect(machine.phase == .authenticating && machine.received(Self.auth, limits: Self.allow) == .fail(.alreadyAuthenticated))
        let old = BusEvent.message(Self.event(2))
        let new = BusEvent.message(Self.event(4))
        let typing = BusEvent.assistantTyping(conversationID: "cv", active: true)
        for event in [old, new, typing] { #expect(machine.deliver(event) == .hold) }
        let progress = TurnProgress(
            turn: TurnRef(runID: "r", deviceID: Self.device, clientID: "c_9"),
            eventID: "s_9",
            conversationID: "cv",
            content: "so far",
            startedAt: 1
        )
        var grant = Self.grant(isAdmin: false, events: [Self.event(1), Self.event(2, role: .assistant)], highWater: 3)
        grant.streams = [progress, TurnProgress(turn: progress.turn, eventID: "s_10", conversationID: "cv", content: "", startedAt: 1)]
        grant.pendingPairings = [PairingRequests.Request(deviceID: "d2", protocolName: "clawline", claimedName: "x", info: .null, remoteAddress: "")]
        let actions = machine.authenticated(grant, maxReplayBytes: 1 << 20)
        let result = ServerFrame.AuthResult(
            success: true,
            userId: Self.user,
            sessionId: "sess_1",
            isAdmin: false,
            replayCount: 2,
            replayTruncated: false,
            historyReset: false
        )
        #expect(
            actions == [
                .admit(deviceID: Self.device, userID: Self.user), .leaveAdmins, .send(.authResult(result)),
                .send(.userInfo(.init(userId: Self.user, isAdmin: false))), .write(FastFrames.message(Self.event(1))),
                .write(FastFrames.message(Self.event(2, role: .assistant))), .shown(conversationID: "cv", seq: 2), .event(new), .event(typing),
                .event(.streaming(progress)),
            ],
            "the token said admin, the record says not: it leaves the admin channel and hears no pairing requests"
        )
        #expect(machine.phase == .live && machine.held.isEmpty)
        #expect(machine.deliver(old) == .drop && machine.deliver(new) == .write, "what the replay had is not sent again")
    }

    @Test func aReplayKeepsTheNewestEventsThatFitItsBytes() {
        var machine = authenticating()
        let events = (1...5).map { Self.event(Int64($0), content: String(repeating: "x", count: 100)) }
        let size = FastFrames.message(events[0]).count
        let actions = machine.authenticated(Self.grant(events: events), maxReplayBytes: size * 3 + 1)
        let writes = actions.filter { if case .write = $0 { true } else { false } }
        #expect(writes == events.suffix(3).map { .write(FastFrames.message($0)) })
        guard case .send(.authResult(let result)) = actions[1] else {
            Issue.record("no auth_result: \(actions)")
            return
        }
        #expect(result.replayCount == 3 && result.replayTruncated == true && result.historyReset == false)
    }

    @Test func anAdminHearsPendingRequestsAfterItsReplay() {
        var machine = authenticating(claimsAdmin: true)
        var grant = Self.grant(isAdmin: true)
        let request = PairingRequests.Request(deviceID: "d2", protocolName: "clawline", claimedName: "laptop", info: .null, remoteAddress: "")
        grant.pendingPairings = [request]
        let actions = machine.authenticated(grant, maxReplayBytes: 1 << 20)
        #expect(actions.last == .send(.pairApprovalRequest(.init(deviceId: "d2", claimedName: "laptop", deviceInfo: .null))))
        #expect(machine.hearsPairingRequests && !live().hearsPairingRequests && !authenticating(claimsAdmin: true).hearsPairingRequests)
        #expect(
            machine.isAdmin
                && machine.received(.pairDecision(.init(deviceId: "d2", approve: false, userId: nil)), limits: Self.allow) != .fail(.onlyAdminsDecide)
        )
    }

    @Test func aRefusedAuthSaysWhyAndCloses() {
        var fresh = Machine()
        #expect(
            fresh.authRefused(.deviceNotApproved) == [
                .send(.authResult(.refused(.deviceNotApproved))), .close(code: 1008, reason: "device_not_approved"),
            ]
        )
        var machine = authenticating(claimsAdmin: true)
        #expect(
            machine.authRefused(.tokenRevoked) == [
                .leaveAdmins, .detach(userID: Self.user), .send(.authResult(.refused(.tokenRevoked))), .close(code: 1008, reason: "token_revoked"),
            ]
        )
        #expect(machine.phase == .closed && machine.deliver(.assistantTyping(conversationID: "cv", active: true)) == .drop)
        #expect(machine.received(Self.auth, limits: Self.allow) == .none)
        var broken = authenticating()
        #expect(broken.authBroke(.deviceNotRead) == [.detach(userID: Self.user), .fail(.deviceNotRead)])
    }

    @Test func whatALiveSocketWritesOfTheBus() {
        var machine = live(highWater: 5)
        #expect(machine.deliver(.message(Self.event(5))) == .drop)
        #expect(machine.deliver(.message(Self.event(6))) == .write)
        #expect(machine.deliver(.message(Self.event(1, owner: ClawlineChannel.adminAudience))) == .write, "another audience's seq")
        #expect(machine.deliver(Self.failure(.failed)) == .fail(ClawlineError.answerFailed("the assistant failed to answer: x").about("c_1")))
        #expect(machine.deliver(Self.failure(.aborted)) == .fail(ClawlineError.answerAborted.about("c_1")))
        #expect(machine.deliver(Self.failure(.abandoned)) == .drop)
        #expect(machine.deliver(Self.failure(.failed, device: "another")) == .drop, "only the device that asked hears why")
        let tool = ToolProgress(
            turn: TurnRef(runID: "r", deviceID: Self.device, clientID: "c_1"),
            eventID: "s_1",
            conversationID: "cv",
            phase: .started,
            activity: ToolActivity(id: "t", name: "bash")
        )
        #expect(machine.deliver(.tool(tool)) == .drop, "Clawline has no tool frames")
    }

    @Test func messagesAndTypingOfALiveSocket() {
        var member = live()
        let personal = ClientFrame.Message(id: "c_1", content: "hi")
        let admin = ClientFrame.Message(id: "c_2", content: "hi", channelType: .admin)
        #expect(member.received(.message(personal), limits: Self.allow) == .submit(personal))
        #expect(member.received(.message(admin), limits: Self.allow) == .fail(ClawlineError.adminChannelOnly.about("c_2")))
        #expect(member.received(.message(personal), limits: Self.refuse) == .fail(ClawlineError.tooManyMessages(perSecond: 5).about("c_1")))
        #expect(member.received(.typing(.init(active: true)), limits: Self.allow) == .typing(active: true))
        #expect(member.received(.typing(.init(active: true)), limits: Self.refuse) == .fail(.tooManyTypingEvents(perSecond: 2)))
        var adminMachine = live(isAdmin: true)
        #expect(adminMachine.received(.message(admin), limits: Self.allow) == .submit(admin))
    }

    @Test func whatTheCoreMadeOfAMessage() {
        var machine = live()
        let slot = AnswerSlot(id: "s_2", seq: 2)
        #expect(
            machine.submitted(.accepted(Self.event(1), runID: "r", answer: slot), clientID: "c_1", limits: Self.allow) == .ack("c_1", firstTime: true)
        )
        #expect(
            machine.submitted(.duplicate(.active, runID: "r", running: true), clientID: "c_1", limits: Self.allow) == .ack("c_1", firstTime: false)
        )
        #expect(
            machine.submitted(.duplicate(.failed, runID: "r", running: false), clientID: "c_1", limits: Self.allow)
                == .fail(ClawlineError.failedBefore.about("c_1"))
        )
        #expect(machine.submitted(.mismatch, clientID: "c_1", limits: Self.allow) == .fail(ClawlineError.idReused.about("c_1")))
        #expect(
            machine.submitted(.missingAsset("a_1"), clientID: "c_1", limits: Self.allow) == .fail(ClawlineError.assetNotFound("a_1").about("c_1"))
        )
        #expect(machine.submitted(.queueFull, clientID: "c_1", limits: Self.allow) == .fail(ClawlineError.queueFull.about("c_1")))
        let big = ClawlineError.tooLarge("too big", messageId: "c_1")
        #expect(machine.submitted(.rejected(big), clientID: "c_1", limits: Self.refuse) == .fail(big.repeatedTooOften))
        _ = machine.replaced()
        #expect(machine.submitted(.accepted(Self.event(1), runID: "r", answer: slot), clientID: "c_1", limits: Self.allow) == .none, "closed")
    }

    @Test func replacedRevokedAndClosed() {
        var replaced = live(isAdmin: true)
        #expect(replaced.replaced() == [.fail(.sessionReplaced), .leaveAdmins, .detach(userID: Self.user)])
        #expect(replaced.replaced().isEmpty && replaced.revoked().isEmpty && replaced.closed().isEmpty)
        var revoked = live()
        #expect(revoked.revoked() == [.fail(.revoked), .detach(userID: Self.user)])
        var fresh = Machine()
        #expect(fresh.revoked().isEmpty, "nothing to revoke before auth")
        var closed = live()
        #expect(closed.closed() == [.detach(userID: Self.user)] && closed.phase == .closed)
    }

    @Test func anOperatorChangesTheAdminFlag() {
        var machine = live()
        #expect(machine.adminChanged(to: false).isEmpty)
        #expect(machine.adminChanged(to: true) == [.joinAdmins, .send(.userInfo(.init(userId: Self.user, isAdmin: true)))])
        #expect(machine.adminChanged(to: false) == [.leaveAdmins, .send(.userInfo(.init(userId: Self.user, isAdmin: false)))])
        var authenticating = authenticating()
        #expect(authenticating.adminChanged(to: true).isEmpty, "the record read at auth decides")
    }

    @Test func howAPairingEnds() {
        var waiting = Machine()
        waiting.waitForDecision(on: Self.device)
        #expect(waiting.pairingDeviceID == Self.device)
        #expect(
            waiting.paired(.issued(token: "jwt", userID: Self.user, deviceID: Self.device)) == [
                .sendToken(.init(success: true, token: "jwt", userId: Self.user), deviceID: Self.device)
            ]
        )
        #expect(waiting.pairingDeviceID == nil)
        var denied = Machine()
        #expect(denied.paired(.refused(.pairDenied)) == [.send(.pairResult(.refused(.pairDenied))), .close(code: 1000, reason: "pair_denied")])
        var failed = Machine()
        #expect(failed.paired(.failed(.alreadyPaired)) == [.fail(.alreadyPaired)])
        var gone = Machine()
        _ = gone.closed()
        #expect(gone.paired(.refused(.pairTimeout)).isEmpty)
    }
}
