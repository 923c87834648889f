import ClawlineWire
import RelayCore

extension ClawlineSocketMachine {
    /// What the downstream does for the socket.
    enum Action: Equatable {
        case none
        case send(ServerFrame)
        /// Bytes already encoded (a replayed event).
        case write([UInt8])
        /// A live event, encoded once for every socket that takes it.
        case event(BusEvent)
        /// `ack` the client message; `firstTime` when it was just stored (not a retry).
        case ack(String, firstTime: Bool)
        /// `pair_result` with the token; the device's `tokenDelivered` flips once it is written.
        case sendToken(ServerFrame.PairResult, deviceID: String)
        /// Sends `error`, then closes with the code's close code when `closes`.
        case fail(ClawlineError)
        case close(code: UInt16, reason: String)

        // What the downstream carries out with the core.
        case pair(ClientFrame.PairRequest)
        case decide(ClientFrame.PairDecision)
        case authenticate(ClientFrame.Auth)
        case submit(ClientFrame.Message)
        case typing(active: Bool)

        /// Onto the core's bus and the device's presence, as `userID`.
        case attach(userID: String)
        /// Off them again (after leaving the admins' audience).
        case detach(userID: String)
        case joinAdmins
        case leaveAdmins
        /// Authenticated: the socket takes the listener's frame limit and is named for the audit.
        case admit(deviceID: String, userID: String)
        /// The device has shown the user's events up to `seq` in the conversation.
        case shown(conversationID: String, seq: Int64)
    }

    /// The per-device limits the downstream keeps across sockets.
    enum RateLimit: Equatable {
        case pairRequests(deviceID: String)
        case authAttempts(deviceID: String)
        case messages
        case typing
        /// A `payload_too_large` refusal (the second within a minute closes the socket).
        case oversized
    }

    /// What happens to a live event on this socket.
    enum Delivery: Equatable {
        /// Encode and write it.
        case write
        /// Kept until the replay is written.
        case hold
        case drop
        /// The device that asked hears why no answer comes.
        case fail(ClawlineError)
    }

    /// What the core answered for an authenticated device.
    struct Grant {
        var device: DeviceRecord
        /// The user's timeline.
        var conversationID: String
        var window: ReplayWindow
        /// A stream already running on the personal channel, and on the admin channel.
        var streams: [TurnProgress] = []
        var adminStreams: [TurnProgress] = []
        /// The requests waiting for an admin.
        var pendingPairings: [PairingRequests.Request] = []
    }

    /// How the pairing this socket asked for ended.
    enum PairingOutcome: Equatable {
        case issued(token: String, userID: String, deviceID: String)
        case refused(PairRefusal)
        case failed(ClawlineError)
    }
}
