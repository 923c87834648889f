import DiscoClawWire
import RelayCore
import RelayTesting
import Testing

@testable import DiscoClawBridge

/// Conversations over REST, and what the user's sockets hear of them, in memory.
@Suite struct DiscoClawConversationTests {
    @Test func createGetAndList() throws {
        let bed = DiscoClawTestbed()
        let phone = try bed.register()
        let titled = try phone.json("POST", "/conversations", .object(["title": .string("Groceries")]), status: 201)
        #expect(titled["title"] == .string("Groceries") && titled["isProtected"] == .bool(false) && titled["archivedAt"] == nil)
        #expect(titled["createdAt"]?.intValue == bed.bed.clock.nowMillis() && titled["updatedAt"] == titled["createdAt"])
        let untitled = try phone.json("POST", "/conversations", status: 201)
        #expect(untitled["title"] == .null, "written as null")
        let id = try #require(titled["id"]?.stringValue)
        let detail = try phone.json("GET", "/conversations/\(id)")
        #expect(detail["claudeSessionId"] == .null && detail["title"] == titled["title"] && detail["createdAt"] == titled["createdAt"])
        let listed = try #require(phone.json("GET", "/conversations").arrayValue)
        #expect(Set(listed.compactMap { $0["id"]?.stringValue }) == [id, untitled["id"]?.stringValue ?? ""])
        let item = try #require(listed.first { $0["id"]?.stringValue == id })
        #expect(item["lastMessage"] == nil && item["createdAt"] == titled["createdAt"] && item["isProtected"] == .bool(false))
        #expect(try phone.json("GET", "/conversations/cv_nope", status: 404) == DiscoClawTestbed.notFound)
    }

    @Test func listItemsCarryTheLastMessage() throws {
        let bed = DiscoClawTestbed()
        let phone = try bed.register()
        let id = try phone.createConversation()
        _ = try phone.post("what is new", in: id)
        let item = try #require(phone.json("GET", "/conversations").arrayValue?.first)
        #expect(item["lastMessage"]?["role"] == .string("assistant") && item["lastMessage"]?["content"] == .string("echo: what is new"))
        #expect(item["lastMessage"]?["createdAt"]?.intValue == bed.bed.clock.nowMillis())
    }

    @Test func aPatchRenamesArchivesAndTellsEverySocketOfTheUser() throws {
        let bed = DiscoClawTestbed()
        let phone = try bed.register()
        let mac = try phone.addDevice()
        let stranger = try bed.registerStranger()
        let id = try phone.createConversation("Old")
        let sockets = [phone.socket(), phone.socket(), mac.socket()]
        let strangers = stranger.socket()
        let created = try phone.json("GET", "/conversations/\(id)")
        bed.bed.advance(millis: 1_000)

        let renamed = try phone.json("PATCH", "/conversations/\(id)", .object(["title": .string("New")]))
        #expect(renamed["title"] == .string("New") && renamed["createdAt"] == created["createdAt"])
        #expect((renamed["updatedAt"]?.intValue ?? 0) > (created["updatedAt"]?.intValue ?? 0))
        for socket in sockets { #expect(socket.readJSON() == [.object(["type": .string("conversation.updated"), "conversationId": .string(id)])]) }
        #expect(try mac.json("GET", "/conversations/\(id)")["title"] == .string("New"))

        let archived = try mac.json("PATCH", "/conversations/\(id)", .object(["archived": .bool(true)]))
        #expect(archived["archivedAt"]?.intValue != nil && archived["title"] == .string("New"))
        for socket in sockets { #expect(socket.readJSON().map(\.type) == ["conversation.updated"]) }
        #expect(try phone.json("GET", "/conversations") == .array([]), "archived: hidden by default")
        #expect(try phone.json("GET", "/conversations", query: "archived=false") == .array([]))
        #expect(try phone.json("GET", "/conversations", query: "archived=true").arrayValue?.first?["archivedAt"] == archived["archivedAt"])

        let restored = try phone.json("PATCH", "/conversations/\(id)", .object(["archived": .bool(false)]))
        #expect(restored["archivedAt"] == nil)
        for socket in sockets { #expect(socket.readJSON().map(\.type) == ["conversation.updated"]) }
        #expect(strangers.readJSON().isEmpty, "another user hears nothing")
        #expect(try phone.json("PATCH", "/conversations/cv_nope", .object(["title": .string("x")]), status: 404) == DiscoClawTestbed.notFound)
    }

    @Test func aPatchIsCheckedBeforeItChangesAnything() throws {
        let bed = DiscoClawTestbed()
        let phone = try bed.register()
        let id = try phone.createConversation("Kept")
        let cases: [(JSONValue, String)] = [
            (.object(["title": .int(1)]), "title must be a string"),
            (.object(["archived": .string("yes")]), "archived must be a boolean"),
            (
                .object(["title": .string(String(repeating: "t", count: Conversation.maxTitleBytes + 1))]),
                "title is longer than \(Conversation.maxTitleBytes) bytes"
            ),
            (.object(["backend": .string("nope")]), "no backend named nope"),
        ]
        for (body, message) in cases {
            let refused = try phone.json("PATCH", "/conversations/\(id)", body, status: 400)
            #expect(refused == .object(["statusCode": .int(400), "error": .string("Bad Request"), "message": .string(message)]))
        }
        let cleared = try phone.json("PATCH", "/conversations/\(id)", .object(["title": .null]))
        #expect(cleared["title"] == .null, "null clears the title")
    }

    @Test func aNewConversationIsAnnouncedToTheUsersOtherDevicesOnly() throws {
        let bed = DiscoClawTestbed()
        let phone = try bed.register()
        let mac = try phone.addDevice()
        let (phoneSocket, macSocket) = (phone.socket(), mac.socket())
        let id = try phone.createConversation()
        #expect(phoneSocket.readJSON().isEmpty, "the creator has it from its POST")
        #expect(macSocket.readJSON() == [.object(["type": .string("conversation.updated"), "conversationId": .string(id)])])
    }

    @Test func theBackendIsChosenPerConversation() throws {
        let failing = ScriptedBackend(name: "cmd") { _ in [.failed("exit status 1")] }
        let bed = DiscoClawTestbed(backends: [ScriptedBackend.echo(), failing])
        let phone = try bed.register()
        let socket = phone.socket()
        let bad = try phone.json("POST", "/conversations", .object(["title": .string("x"), "backend": .string("nope")]), status: 400)
        #expect(bad["message"] == .string("no backend named nope; configured: cmd, echo"))
        let id = try phone.createConversation("failing", backend: "cmd")
        #expect(try phone.json("GET", "/conversations/\(id)")["backend"] == .string("cmd"))
        let sent = try phone.post("boom", in: id)
        let answerID = try #require(sent["assistantMessageId"]?.stringValue)
        bed.afterHold()
        let error = try #require(socket.readJSON().of("message.error", answerID).first)
        #expect(error["conversationId"] == .string(id) && error["error"]?.stringValue?.isEmpty == false)
        #expect(try phone.json("PATCH", "/conversations/\(id)", .object(["backend": .string("nope")]), status: 400)["statusCode"] == .int(400))
        #expect(try phone.json("PATCH", "/conversations/\(id)", .object(["backend": .string("echo")]))["backend"] == .string("echo"))
        _ = socket.readJSON()
        let again = try phone.post("works now", in: id)
        let answer = try #require(again["assistantMessageId"]?.stringValue)
        bed.afterHold()
        #expect(socket.readJSON().of("message.complete", answer).first?["content"] == .string("echo: works now"))
    }

    @Test func anotherUsersConversationsAre404AndSilent() throws {
        let bed = DiscoClawTestbed()
        let (alice, bob) = (try bed.register(), try bed.registerStranger())
        let bobSocket = bob.socket()
        let id = try alice.createConversation("private")
        _ = try alice.post("secret", in: id)
        let calls: [(String, String, JSONValue?)] = [
            ("GET", "/conversations/\(id)", nil), ("PATCH", "/conversations/\(id)", .object(["title": .string("mine")])),
            ("GET", "/conversations/\(id)/messages", nil), ("POST", "/conversations/\(id)/messages", .object(["content": .string("hi")])),
            ("DELETE", "/conversations/\(id)", nil),
        ]
        for (method, path, body) in calls { #expect(try bob.json(method, path, body, status: 404) == DiscoClawTestbed.notFound, "\(method) \(path)") }
        #expect(try bob.json("GET", "/conversations", query: "archived=true") == .array([]))
        #expect(try bob.sync() == .object(["conversations": .array([]), "messages": .array([]), "cursor": .int(0)]))
        #expect(try alice.json("GET", "/conversations/\(id)")["title"] == .string("private"))
        #expect(try alice.messages(in: id).count == 2)
        _ = try alice.json("PATCH", "/conversations/\(id)", .object(["title": .string("renamed")]))
        _ = try alice.post("more secrets", in: id)
        #expect(bobSocket.readJSON().isEmpty, "Alice's events never reach Bob")
    }

    @Test func deletingAConversationStopsItsTurnAndTakesItsHistory() throws {
        let backend = ScriptedBackend(name: "slow")
        let bed = DiscoClawTestbed(backends: [backend])
        let phone = try bed.register()
        let (gone, kept) = (try phone.createConversation("gone"), try phone.createConversation("kept"))
        _ = try phone.post("to be deleted", in: gone)
        #expect(try phone.call("DELETE", "/conversations/\(gone)").status == 204)
        #expect(backend.runs.first?.isCancelled == true, "its running turn stops")
        for (method, path) in [("GET", "/conversations/\(gone)"), ("GET", "/conversations/\(gone)/messages"), ("DELETE", "/conversations/\(gone)")] {
            #expect(try phone.json(method, path, status: 404) == DiscoClawTestbed.notFound)
        }
        #expect(try phone.sync()["conversations"]?.arrayValue?.map { $0["id"]?.stringValue } == [kept])
    }

    @Test func aSyncReturnsMetadataChangesAndARenameAloneMovesTheCursor() throws {
        let bed = DiscoClawTestbed()
        let phone = try bed.register()
        let (first, old) = (try phone.createConversation("first"), try phone.createConversation("old"))
        _ = try phone.json("PATCH", "/conversations/\(old)", .object(["archived": .bool(true)]))
        let everything = try phone.sync()
        let listed = try #require(everything["conversations"]?.arrayValue)
        #expect(Set(listed.compactMap { $0["id"]?.stringValue }) == [first, old], "since=0 includes archived ones")
        let cursor = try #require(everything["cursor"]?.intValue)
        #expect(try phone.sync(since: cursor) == .object(["conversations": .array([]), "messages": .array([]), "cursor": .int(cursor)]))
        _ = try phone.json("PATCH", "/conversations/\(first)", .object(["title": .string("renamed")]))
        let rename = try phone.sync(since: cursor)
        #expect((rename["cursor"]?.intValue ?? 0) > cursor)
        #expect(rename["conversations"]?.arrayValue?.map { $0["title"] } == [.string("renamed")] && rename["messages"] == .array([]))
    }
}
