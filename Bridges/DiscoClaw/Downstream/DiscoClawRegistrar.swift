import RelayCore

/// Which user a `POST /auth/register` joins. The listener's setup token joins one user, as the
/// real (single-user) server does: `user_id`, or else the user of the oldest DiscoClaw device
/// that is no configured person's (revoked devices count, so a history outlives its devices),
/// which the first registration makes. A person's own setup token joins that person's user.
///
/// - Important: loop thread only.
final class DiscoClawRegistrar {
    enum Joins: Equatable {
        case user(String)
        /// The listener's one user, found among the stored devices or made now.
        case listenersUser
    }

    private enum State {
        case unknown
        case reading([(Result<String, any Error>) -> Void])
        case known(String)
    }

    private let settings: DiscoClawSettings
    private let devices: Devices
    private var state = State.unknown

    init(settings: DiscoClawSettings, devices: Devices) {
        self.settings = settings
        self.devices = devices
    }

    /// Whether any setup token is configured (none: registration is disabled).
    static func isOpen(_ settings: DiscoClawSettings) -> Bool { settings.setupToken != nil || !settings.users.isEmpty }

    /// Whom a presented setup token registers; nil when it is none of the configured ones. Tokens
    /// are compared by their SHA-256, so the time taken does not tell how much of one matched.
    static func joins(presenting token: String, _ settings: DiscoClawSettings) -> Joins? {
        let presented = Digest.sha256Hex(token)
        if let own = settings.setupToken, Digest.sha256Hex(own) == presented { return settings.userID.map(Joins.user) ?? .listenersUser }
        return settings.users.first { Digest.sha256Hex($0.setupToken) == presented }.map { .user($0.userID) }
    }

    /// The listener's user among the stored DiscoClaw devices (oldest first): the first one's
    /// user that belongs to no configured person; nil when there is none yet.
    static func listenersUser(among records: [DeviceRecord], users: [DiscoClawSettings.User]) -> String? {
        let theirs = Set(users.map(\.userID))
        return records.first { !theirs.contains($0.userID) }?.userID
    }

    /// The user id a registration that `joins` gets. The listener's user is read once; registrations
    /// arriving meanwhile wait for the same answer, so two first registrations make one user.
    func user(for joins: Joins, completion: @escaping (Result<String, any Error>) -> Void) {
        switch (joins, state) {
        case (.user(let id), _), (.listenersUser, .known(let id)):
            completion(.success(id))
        case (.listenersUser, .reading(let waiting)):
            state = .reading(waiting + [completion])
        case (.listenersUser, .unknown):
            state = .reading([completion])
            devices.list(protocolName: DiscoClawDownstream.protocolName) { [self] result in
                guard case .reading(let waiting) = state else { return }
                let found = result.map { Self.listenersUser(among: $0, users: settings.users) ?? Identifiers.newUUID() }
                state = (try? found.get()).map(State.known) ?? .unknown
                for waiter in waiting { waiter(found) }
            }
        }
    }
}
