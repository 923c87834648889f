import DiscoClawWire
import RelayCore
import Testing

@testable import DiscoClawBridge

@Suite struct DiscoClawTurnBookTests {
    typealias Book = DiscoClawTurnBook
    typealias Action = DiscoClawTurnBook.Action

    func delta(_ id: String, _ text: String, seq: Int64? = nil) -> DiscoClawEvent { .delta(id, text, seq: seq) }

    /// A book with turn `t1` posted, its answer `a1`, its user message at seq 10.
    func posted() -> Book {
        var book = Book()
        let admitted = book.admit("t1")
        #expect(admitted)
        #expect(book.posted("t1", answerID: "a1", userSeq: 10, now: 0).isEmpty)
        return book
    }

    @Test func fragmentsConcatenateIntoWholeProgressThenTheCompleteIsTheAnswer() {
        var book = posted()
        book.socketOpened()
        #expect(book.receive(delta("a1", "Hel", seq: 11), now: 0) == [Action(turnID: "t1", event: .progress("Hel"))])
        #expect(book.receive(delta("a1", "lo", seq: 12), now: 0) == [Action(turnID: "t1", event: .progress("Hello"))])
        #expect(book.receive(delta("a1", "", seq: 13), now: 0).isEmpty, "nothing new, no progress")
        #expect(book.receive(.complete("a1", "Hello!", seq: 14), now: 0) == [Action(turnID: "t1", event: .final("Hello!"))])
        #expect(book.count == 0)
        #expect(book.receive(delta("a1", "late"), now: 0).isEmpty && book.heldCount == 0, "a finished answer's late events are dropped, not held")
        #expect(book.cursor == 14)
    }

    @Test func anErrorFailsTheTurn() {
        var book = posted()
        #expect(book.receive(.error("a1", "backend crashed"), now: 0) == [Action(turnID: "t1", event: .failed("backend crashed"))])
        #expect(book.count == 0)
    }

    @Test func theFirstDeltaOnANewSocketIsTheWholeTextSoFar() {
        var book = posted()
        book.socketOpened()
        _ = book.receive(delta("a1", "Hello"), now: 0)
        book.socketOpened()
        #expect(book.receive(delta("a1", "Hello wor"), now: 0) == [Action(turnID: "t1", event: .progress("Hello wor"))], "replaces, not appends")
        #expect(book.receive(delta("a1", "ld"), now: 0) == [Action(turnID: "t1", event: .progress("Hello world"))])
    }

    @Test func eventsBeforeThePostReplyWaitForIt() {
        var book = Book()
        let admitted = book.admit("t1")
        #expect(admitted)
        book.socketOpened()
        #expect(book.receive(delta("a1", "Hi"), now: 0).isEmpty)
        #expect(book.receive(delta("a1", " there"), now: 1).isEmpty)
        #expect(book.receive(delta("zz", "someone else's"), now: 1).isEmpty)
        #expect(book.heldCount == 3)
        #expect(
            book.posted("t1", answerID: "a1", userSeq: 5, now: 2) == [
                Action(turnID: "t1", event: .progress("Hi")), Action(turnID: "t1", event: .progress("Hi there")),
            ]
        )
        #expect(book.heldCount == 1, "only the unclaimed answer's event stays")
    }

    @Test func aCompleteBeforeThePostReplyEndsTheTurnAtTheReply() {
        var book = Book()
        let admitted = book.admit("t1")
        #expect(admitted)
        _ = book.receive(.complete("a1", "done", seq: 9), now: 0)
        #expect(book.posted("t1", answerID: "a1", userSeq: 8, now: 0) == [Action(turnID: "t1", event: .final("done"))])
        #expect(book.count == 0 && book.catchUpSince == nil)
    }

    @Test func heldEventsAreBoundedAndExpire() {
        var limits = Book.Limits()
        limits.maxBufferedEvents = 3
        limits.bufferMillis = 1_000
        var book = Book(limits: limits)
        for index in 0..<5 { _ = book.receive(delta("a\(index)", "x"), now: 0) }
        #expect(book.heldCount == 3, "the oldest are dropped past the bound")
        _ = book.receive(delta("b", "y"), now: 1_500)
        #expect(book.heldCount == 1, "the stale ones expired")
        book.expire(now: 3_000)
        #expect(book.heldCount == 0)
    }

    @Test func turnsInFlightAreCapped() {
        var limits = Book.Limits()
        limits.maxTurns = 2
        var book = Book(limits: limits)
        let admitted = book.admit("t1") && book.admit("t2")
        #expect(admitted)
        let refused = !book.admit("t3")
        #expect(refused)
        book.forget("t1")
        let readmitted = book.admit("t3")
        #expect(readmitted)
    }

    @Test func anAnswerStopsGrowingPastItsBoundButItsFinalComesWhole() {
        var limits = Book.Limits()
        limits.maxAnswerBytes = 8
        var book = Book(limits: limits)
        let admitted = book.admit("t1")
        #expect(admitted)
        _ = book.posted("t1", answerID: "a1", userSeq: nil, now: 0)
        #expect(book.receive(delta("a1", "12345"), now: 0) == [Action(turnID: "t1", event: .progress("12345"))])
        #expect(book.receive(delta("a1", "6789"), now: 0).isEmpty)
        #expect(
            book.receive(.complete("a1", "123456789", seq: nil), now: 0) == [Action(turnID: "t1", event: .final("123456789"))]
        )
    }

    @Test func aForgottenTurnHearsNothingMore() {
        var book = posted()
        book.forget("t1")
        #expect(book.receive(delta("a1", "x"), now: 0).isEmpty)
        #expect(book.receive(.complete("a1", "x", seq: 3), now: 0).isEmpty)
        #expect(book.heldCount == 0)
    }

    // MARK: Catch-up

    @Test func catchUpStartsAtTheOldestWaitingTurnsMessage() {
        var book = Book()
        #expect(book.catchUpSince == nil, "nothing waits: no sync")
        let admitted = book.admit("t1") && book.admit("t2")
        #expect(admitted)
        #expect(book.catchUpSince == nil, "turns whose POST has no reply yet wait for that reply, not a sync")
        _ = book.posted("t1", answerID: "a1", userSeq: 40, now: 0)
        _ = book.posted("t2", answerID: "a2", userSeq: 20, now: 0)
        #expect(book.catchUpSince == 20)
        _ = book.receive(delta("other", "x", seq: 15), now: 0)
        #expect(book.cursor == 40 && book.catchUpSince == 20, "the cursor only ever lowers the start")
        var fresh = Book()
        let freshAdmitted = fresh.admit("t")
        #expect(freshAdmitted)
        _ = fresh.posted("t", answerID: "a", userSeq: nil, now: 0)
        #expect(fresh.catchUpSince == 0, "no seq known: from the start")
    }

    @Test func syncCompletesAndFailsFinishedAnswersAndLeavesRunningOnesToTheSocket() {
        var book = Book()
        for id in ["t1", "t2", "t3"] { _ = book.admit(id) }
        _ = book.posted("t1", answerID: "a1", userSeq: 10, now: 0)
        _ = book.posted("t2", answerID: "a2", userSeq: 11, now: 0)
        _ = book.posted("t3", answerID: "a3", userSeq: 12, now: 0)
        book.socketOpened()
        _ = book.receive(delta("a3", "par", seq: 13), now: 0)
        let page = DiscoClawSyncPage(
            conversations: [],
            messages: [
                .row("u1", "complete", content: "question", error: nil, seq: 10),
                .row("a1", "complete", content: "the answer", error: nil, seq: 20),
                .row("a2", "error", content: "", error: "cut by a restart", seq: 21),
                .row("a3", "streaming", content: "partial", error: nil, seq: 13),
            ],
            cursor: 21
        )
        #expect(
            book.caughtUp(page) == [
                Action(turnID: "t1", event: .final("the answer")), Action(turnID: "t2", event: .failed("cut by a restart")),
            ]
        )
        #expect(book.count == 1 && book.cursor == 21)
        #expect(book.receive(delta("a3", "tial"), now: 0) == [Action(turnID: "t3", event: .progress("partial"))], "the socket goes on where it was")
        #expect(book.caughtUp(page).isEmpty, "a page read twice ends nothing twice")
    }
}
