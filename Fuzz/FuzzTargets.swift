import ClawlineWire
import CompanionWire
import DiscoClawWire
import Foundation
import RelayCore
import RelayServer

// libFuzzer entry points for the relay's pure decoders (not part of the normal build; see
// `scripts/fuzz`). One binary, the target chosen by CLAWRELAY_FUZZ_TARGET:
// json, clawline, gateway, companion, discoclaw, multipart, config.
@testable import GatewayBridge
@testable import GatewayWire

enum FuzzTarget: String {
    case json, clawline, gateway, companion, discoclaw, multipart, config

    static let selected: FuzzTarget = {
        let name = ProcessInfo.processInfo.environment["CLAWRELAY_FUZZ_TARGET"] ?? "json"
        guard let target = FuzzTarget(rawValue: name) else { fatalError("unknown CLAWRELAY_FUZZ_TARGET \(name)") }
        return target
    }()

    func run(_ bytes: [UInt8]) {
        switch self {
        case .json:
            // Whatever parses must encode to JSON that parses and encodes to the same text.
            if let value = JSONValue.parse(bytes) {
                let text = value.encoded()
                guard let again = JSONValue.parse(text) else { preconditionFailure("encoded JSON does not parse: \(text.prefix(200))") }
                precondition(again.encoded() == text, "JSON encoding is not stable: \(text.prefix(200))")
            }
        case .clawline:
            if case .success(.message(let message)) = ClientFrame.decode(String(decoding: bytes, as: UTF8.self)) {
                _ = MessageRules.validate(clientID: message.id, content: message.content, attachments: message.attachments ?? [])
                _ = MessageRules.attachmentsHash(message.attachments ?? [])
            }
            // What a provider sends the relay's account, read as the account reads it.
            _ = ServerFrame.decode(bytes)
        case .gateway:
            // The frame decoder and what a socket waiting for `connect` makes of the frame.
            if case .success(let request) = GatewayRequest<JSONValue>.decode(bytes), request.method == "connect" {
                _ = ConnectParams.oversizedField(in: .object(request.fields))
                _ = request.params(as: ConnectParams.self)
            }
            var socket = GatewaySocketMachine(settings: GatewaySettings(), peerAddress: "127.0.0.1", nonce: "n", openedAt: 0)
            _ = socket.received(bytes, now: 0)
        case .companion:
            if case .success(let request) = CompanionRequest.parse(bytes) { _ = CompanionClientFrame.decode(request) }
            _ = CompanionServerEvent.decode(bytes)
        case .discoclaw:
            // A server's event or reply decodes or not, never traps; an event written back reads the same.
            if let event = DiscoClawEvent.decode(bytes) {
                precondition(DiscoClawEvent.decode(DiscoClawJSON.bytes(event)) == event, "an event does not survive its own encoding: \(event)")
            }
            _ = DiscoClawJSON.decode(DiscoClawSyncPage.self, from: bytes)
            _ = DiscoClawJSON.decode(DiscoClawPosted.self, from: bytes)
            _ = DiscoClawJSON.decode(DiscoClawRegistration.self, from: bytes)
            // A client's request body, by the listener's rules.
            if case .object(let object)? = JSONValue.parse(bytes) {
                _ = try? DiscoClawMessageRequest(json: object)
                _ = try? DiscoClawConversationPatch(json: object)
                _ = DiscoClawDeviceRequest(json: object)
            }
        case .multipart:
            let body = Data(bytes)
            if let form = MultipartForm.parse(body, boundary: "XyZ") {
                for part in form.parts { precondition(part.range.upperBound <= body.count, "part outside the body") }
            }
            _ = MultipartForm.boundary(fromContentType: String(decoding: bytes.prefix(200), as: UTF8.self))
        case .config:
            _ = try? RelayConfig.parse(text: String(decoding: bytes, as: UTF8.self), fileName: "fuzz.toml")
        }
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    FuzzTarget.selected.run(Array(UnsafeBufferPointer(start: data, count: size)))
    return 0
}

// SwiftPM links an executable's entry point as `<module>_main` (and points `main` at it), which
// would shadow libFuzzer's `main`; hand control to libFuzzer's driver from there.
@_silgen_name("LLVMFuzzerRunDriver")
func LLVMFuzzerRunDriver(
    _ argc: UnsafeMutablePointer<CInt>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ callback: @convention(c) (UnsafePointer<UInt8>, Int) -> CInt
) -> CInt

@_cdecl("clawrelay_fuzz_main")
public func fuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    var count = argc
    var arguments = argv
    return LLVMFuzzerRunDriver(&count, &arguments) { data, size in fuzzOneInput(data, size) }
}
