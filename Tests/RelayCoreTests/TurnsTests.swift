import RelayCore
import RelayTesting
import Testing

@Suite struct TurnsTests {
    @Test func aTurnStreamsStoresAndEndsWithTypingOff() {
        let core = CoreFixture()
        let (phone, _) = core.connect("phone")
        let (laptop, _) = core.connect("laptop")
        #expect(core.submit(core.message("hi", device: "phone")).isAccepted)
        #expect(core.backend.runs.count == 1)
        #expect(core.backend.runs[0].request.text == "hi")
        core.emit(.progress("echo"), run: 0)
        core.emit(.progress("echo: hi"), run: 0)
        core.emit(.final("echo: hi"), run: 0)
        for device in [phone, laptop] {
            #expect(device.messages.map(\.content) == ["hi", "echo: hi"])
            #expect(device.streamed == ["echo", "echo: hi"])
            #expect(device.typing == [true, false])
            #expect(device.messages[1].turn?.clientID == "c_hi")
        }
        // Seq 1 went to the conversation's creation and seq 3 was the answer's placeholder slot
        // while it ran; the stored answer gets a fresh one.
        #expect(core.journal.events.map(\.seq) == [2, 4])
        let progress = phone.events.compactMap { if case .streaming(let progress) = $0 { progress } else { nil } }
        #expect(progress.map(\.seq) == [3, 3] && progress.allSatisfy { $0.eventID == core.journal.events[1].id })
        #expect(core.hub.turns.completedCount == 1)
    }

    @Test func oneTurnPerConversationWithAFIFOBehindItAndConversationsRunInParallel() {
        let core = CoreFixture()
        core.connect("phone")
        let other = core.resolve(.session("other"))
        core.submit(core.message("one", device: "phone"))
        core.submit(core.message("two", device: "phone"))
        core.submit(core.message("elsewhere", device: "phone", conversation: other))
        #expect(core.backend.runs.map(\.request.text) == ["one", "elsewhere"])
        core.emit(.final("1"), run: 0)
        #expect(core.backend.runs.map(\.request.text) == ["one", "elsewhere", "two"])
        #expect(core.hub.turns.activeCount == 2)
    }

    @Test func retriesAreIdempotentPerDeviceAndClientID() {
        let core = CoreFixture()
        core.connect("phone")
        let first = core.submit(core.message("hi", device: "phone", clientID: "c_1"))
        guard case .accepted(_, let runID, _) = first else {
            Issue.record("not accepted: \(first)")
            return
        }
        let retry = core.submit(core.message("hi", device: "phone", clientID: "c_1"))
        guard case .duplicate(.active, runID, running: true) = retry else {
            Issue.record("expected a running duplicate: \(retry)")
            return
        }
        core.emit(.final("done"), run: 0)
        guard case .duplicate(.finalized, _, running: false) = core.submit(core.message("hi", device: "phone", clientID: "c_1")) else {
            Issue.record("expected a finalized duplicate")
            return
        }
        guard case .mismatch = core.submit(core.message("changed", device: "phone", clientID: "c_1")) else {
            Issue.record("expected mismatch")
            return
        }
        #expect(core.submit(core.message("hi", device: "tablet", clientID: "c_1")).isAccepted, "client ids are per device")
        #expect(core.backend.runs.count == 2)
        #expect(core.journal.events.filter { $0.role == .user }.count == 2)
    }

    @Test func theQueueCapCountsTurnsWaitingBehindTheActiveOne() {
        let core = CoreFixture()
        core.connect("phone")
        var outcomes: [SubmitOutcome] = []
        for index in 0..<22 {
            core.hub.turns.submit(core.message("m\(index)", device: "phone"), policy: TurnPolicy(maxQueuedPerDevice: 20)) { outcomes.append($0) }
        }
        core.loop.runUntilIdle()
        #expect(outcomes.count { $0.isAccepted } == 21, "one active and twenty queued")
        #expect(outcomes.count { $0.isQueueFull } == 1, "the 22nd is refused at once")
        #expect(core.hub.turns.queuedCount == 20)
    }

    @Test func abortByRunOrByConversationStopsActiveAndQueuedTurns() {
        let core = CoreFixture()
        let (phone, _) = core.connect("phone")
        core.submit(core.message("a", device: "phone"))
        core.submit(core.message("b", device: "phone"))
        core.submit(core.message("c", device: "phone"))
        let runs = core.journal.records.values.map(\.runID)
        #expect(runs.count == 3)
        let activeRun = core.backend.runs[0].request.runID
        #expect(core.hub.turns.abort(conversationID: core.conversation.id, runID: activeRun) == [activeRun])
        core.loop.runUntilIdle()
        #expect(core.backend.runs[0].isCancelled)
        #expect(core.backend.runs.count == 2, "the next queued turn starts")
        let rest = core.hub.turns.abort(conversationID: core.conversation.id)
        core.loop.runUntilIdle()
        #expect(rest.count == 2)
        #expect(phone.failures.map(\.cause) == [.aborted, .aborted, .aborted])
        #expect(phone.typing == [true, false, true, false])
        #expect(core.journal.records.values.allSatisfy { $0.state == .aborted })
        core.emit(.final("too late"), run: 1)
        #expect(phone.messages.count == 3, "an aborted turn's late answer is dropped")
    }

    @Test func aSilentBackendTimesOut() {
        let core = CoreFixture()
        let (phone, _) = core.connect("phone")
        core.submit(core.message("hi", device: "phone"), policy: TurnPolicy(inactivityMillis: 1_000))
        core.loop.advance(millis: 600)
        core.emit(.progress("still here"), run: 0)
        core.loop.advance(millis: 600)
        #expect(phone.failures.isEmpty, "progress re-arms the timer")
        core.loop.advance(millis: 500)
        #expect(phone.failures.map(\.cause) == [.failed])
        #expect(phone.typing == [true, false])
        #expect(core.backend.runs[0].isCancelled)
    }

    @Test func aTurnOutlivesItsSocketUnlessItsProtocolAbandonsIt() {
        let core = CoreFixture()
        let (phone, phoneSocket) = core.connect("phone")
        let (laptop, _) = core.connect("laptop")
        core.submit(core.message("keep going", device: "phone"))
        core.hub.detach(phone, socket: phoneSocket, userID: core.user)
        core.emit(.final("answered"), run: 0)
        #expect(laptop.messages.map(\.content) == ["keep going", "answered"], "the answer lands for the devices still there")
        #expect(core.journal.events.count == 2, "and is stored for the device that left")

        let (phone2, phone2Socket) = core.connect("phone")
        core.submit(core.message("active", device: "phone"))
        core.submit(core.message("queued", device: "phone"))
        core.hub.detach(phone2, socket: phone2Socket, userID: core.user)
        core.hub.turns.abandon(deviceID: "phone")
        core.loop.runUntilIdle()
        #expect(laptop.failures.map(\.cause) == [.abandoned])
        #expect(laptop.typing.last == false, "siblings see typing off when a stream is cut")
        #expect(core.backend.runs.count == 2, "the queued turn is dropped")

        core.connect("phone")
        guard case .duplicate(.active, _, running: true) = core.submit(core.message("queued", device: "phone")) else {
            Issue.record("a retry of the dropped message runs it")
            return
        }
        #expect(core.backend.runs.count == 3)
    }

    @Test func aMessageInFlightWhenItsDeviceIsAbandonedStartsNoTurn() {
        let core = CoreFixture()
        core.connect("phone")
        var outcome: SubmitOutcome?
        core.hub.turns.submit(core.message("late", device: "phone"), policy: TurnPolicy()) { outcome = $0 }
        core.hub.turns.abandon(deviceID: "phone")
        core.loop.runUntilIdle()
        #expect(outcome?.isAccepted == true, "it is stored and acknowledged")
        #expect(core.backend.runs.isEmpty)
        var ended = false
        core.hub.turns.submit(core.message("later", device: "phone"), policy: TurnPolicy()) { outcome in
            guard case .accepted(_, let runID, _) = outcome else { return }
            core.hub.turns.whenEnded(runID: runID) { _ in ended = true }
        }
        core.hub.turns.abandon(deviceID: "phone")
        core.loop.runUntilIdle()
        #expect(ended, "a watcher of a run that never starts is not left waiting")
    }

    @Test func aFailedStoreAcknowledgesNothing() {
        let core = CoreFixture()
        core.connect("phone")
        core.journal.failWrites = StoreDown()
        guard case .storeFailed = core.submit(core.message("hi", device: "phone")) else {
            Issue.record("expected storeFailed")
            return
        }
        #expect(core.backend.runs.isEmpty)
    }

    @Test func aFinalThatCannotBeStoredFailsTheTurn() {
        let core = CoreFixture()
        let (phone, _) = core.connect("phone")
        core.submit(core.message("hi", device: "phone"))
        core.journal.failWrites = StoreDown()
        core.emit(.final("lost"), run: 0)
        #expect(phone.failures.map(\.cause) == [.failed])
        #expect(phone.typing == [true, false])
    }

    @Test func anUnknownBackendFailsTheTurnAtOnce() {
        let core = CoreFixture()
        let (phone, _) = core.connect("phone")
        core.submit(core.message("hi", device: "phone"), policy: TurnPolicy(backend: "nowhere"))
        #expect(phone.failures.first?.reason.contains("nowhere") == true)
        #expect(phone.typing == [true, false])
    }

    @Test func theBackendGetsTheConversationsWorkingDirectory() {
        let core = CoreFixture()
        core.connect("phone")
        var resolved: Conversation?
        core.hub.conversations.resolve(
            ConversationKey("companion.dir", "/srv/app"),
            userID: core.user,
            draft: ConversationDraft(workingDirectory: "/srv/app")
        ) {
            resolved = try? $0.get()
        }
        core.loop.runUntilIdle()
        core.submit(core.message("ls", device: "phone", conversation: resolved))
        #expect(core.backend.runs.first?.request.workingDirectory == "/srv/app")
    }
}

struct StoreDown: Error {}

@Suite struct TurnWatcherTests {
    @Test func aWatcherHearsHowItsRunEndedOnce() {
        let core = CoreFixture()
        core.connect("phone")
        var ends: [String] = []
        var runs: [String] = []
        for text in ["ok", "bad"] {
            core.hub.turns.submit(core.message(text, device: "phone"), policy: TurnPolicy()) { outcome in
                guard case .accepted(_, let runID, _) = outcome else { return }
                runs.append(runID)
                core.hub.turns.whenEnded(runID: runID) { end in
                    switch end {
                    case .answered(let event): ends.append("answered \(event.content)")
                    case .failed(let failure): ends.append("failed \(failure.reason)")
                    }
                }
            }
        }
        core.loop.runUntilIdle()
        #expect(core.hub.turns.isBusy(core.conversation.id))
        core.emit(.final("yes"), run: 0)
        core.emit(.failed("no"), run: 1)
        #expect(ends == ["answered yes", "failed no"])
        #expect(!core.hub.turns.isBusy(core.conversation.id))
    }
}

@Suite struct TurnAttachmentsTests {
    @Test func aMessagesAttachmentsReachItsBackendInOrderWithUploadsLookedUp() {
        let core = CoreFixture()
        core.connect("phone")
        core.journal.saveAsset(
            AssetRecord(id: "a_1", userID: core.user, mimeType: "application/pdf", size: 3, path: "/data/assets/a_1", createdAt: 1)
        ) { _ in }
        var message = core.message("see these", device: "phone")
        message.attachmentsJSON = """
            [{"type":"image","mimeType":"image/png","data":"iVBORw==","fileName":"p.png"},\
            {"type":"asset","assetId":"a_1"},{"type":"asset","assetId":"a_gone"},{"type":"video"}]
            """
        message.assetIDs = ["a_1"]
        #expect(core.submit(message).isAccepted)
        #expect(
            core.backend.runs.map(\.request.attachments) == [
                [
                    TurnAttachment(mimeType: "image/png", fileName: "p.png", base64: "iVBORw=="),
                    TurnAttachment(mimeType: "application/pdf", path: "/data/assets/a_1"),
                ]
            ],
            "an asset whose record is gone and a kind no backend takes are left out"
        )
        #expect(core.submit(core.message("no files", device: "phone")).isAccepted)
        core.emit(.final("done"), run: 0)
        #expect(core.backend.runs[1].request.attachments.isEmpty)
    }
}

@Suite struct ReadOnlyTurnsTests {
    @Test func aBackendThatCannotRunReadOnlyIsToldFirst() {
        let core = CoreFixture()
        core.connect("phone")
        var message = core.message("refactor it", device: "phone")
        message.readOnly = true
        #expect(core.submit(message).isAccepted)
        let request = core.backend.runs[0].request
        #expect(request.readOnly && request.text == TurnRequest.readOnlyInstruction + "refactor it")
        #expect(core.journal.events.first?.content == "refactor it", "the history keeps what the user wrote")
    }
}
