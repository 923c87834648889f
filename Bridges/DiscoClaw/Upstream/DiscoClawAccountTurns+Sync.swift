import DiscoClawWire
import RelayCore

extension DiscoClawAccountTurns {
    /// `/sync` pages one catch-up reads at most (the relay answers up to 1,000 rows a page).
    static let maxSyncPages = 20

    /// `POST /auth/register` with the setup token; the device token is kept in the state file.
    func register() {
        guard case .setupToken(let setupToken) = credential else { return link.registrationFailed("no setup token", refused: true) }
        let endpoint = rest.baseURL
        rest.call(
            "POST",
            "/auth/register",
            body: DiscoClawDeviceRequest(name: "clawrelay", platform: "macos", setupToken: setupToken),
            authorized: false
        ) {
            [weak self] outcome in
            guard let self else { return }
            switch outcome {
            case .answered(let status, let body) where (200..<300).contains(status):
                guard let registration = DiscoClawJSON.decode(DiscoClawRegistration.self, from: body) else {
                    return link.registrationFailed("\(endpoint) answered the registration without a device token", refused: false)
                }
                stored.token = registration.token
                stored.deviceId = registration.deviceId
                stored.userId = registration.userId ?? ""
                writer.save(stored)
                rest.token = registration.token
                rest.deviceID = registration.deviceId
                link.deviceID = registration.deviceId
                logger.notice("registered with the DiscoClaw server", metadata: ["account": "\(name)", "device": "\(registration.deviceId)"])
                link.registered(token: registration.token)
            case .answered(let status, let body) where status == 401 || status == 403:
                let why = DiscoClawREST.errorText(body) ?? "\(status)"
                link.registrationFailed("\(endpoint) refused the setup token (\(status): \(why))", refused: true)
            case .answered, .failed:
                link.registrationFailed("registering with \(endpoint) failed: \(Self.describe(outcome))", refused: false)
            }
        }
    }

    /// A socket opened: recover the answers that finished while it was down.
    func catchUpForLink() {
        linkCatchUpWanted = true
        runNextSync()
    }

    /// A turn's answer may have finished unheard (its `POST` straddled a reconnect): sync once a
    /// socket is open (a catch-up already running may have started before the turn was posted).
    func requestSync() {
        extraSyncWanted = true
        runNextSync()
    }

    /// One `/sync` round at a time, from the oldest awaited turn's message, page after page; a
    /// socket's catch-up covers every sync asked for before it.
    private func runNextSync() {
        guard !syncRunning, linkCatchUpWanted || (extraSyncWanted && link.isOpen) else { return }
        let forLink = linkCatchUpWanted
        (linkCatchUpWanted, extraSyncWanted) = (false, false)
        guard let since = book.catchUpSince else {
            if forLink { link.caughtUp() }
            return
        }
        syncRunning = true
        let generation = epoch
        fetch(since: since, pageNumber: 1) { [weak self] failure in
            guard let self else { return }
            syncRunning = false
            if forLink, generation == epoch {
                if let failure { link.catchUpFailed(failure) } else { link.caughtUp() }
            } else if let failure {
                logger.info("DiscoClaw catch-up sync failed", metadata: ["account": "\(name)", "reason": "\(failure)"])
            }
            runNextSync()
        }
    }

    private func fetch(since: Int64, pageNumber: Int, done: @escaping (String?) -> Void) {
        rest.call("GET", "/sync?since=\(since)") { [weak self] outcome in
            guard let self else { return }
            switch outcome {
            case .answered(200, let body):
                guard let page = DiscoClawJSON.decode(DiscoClawSyncPage.self, from: body) else {
                    return done("\(name): /sync answered something else than a sync page")
                }
                perform(book.caughtUp(page))
                // A full page ends at its cursor: go on while turns still wait and the cursor moves.
                if !page.messages.isEmpty, let cursor = page.cursor, cursor > since, book.catchUpSince != nil, pageNumber < Self.maxSyncPages {
                    return fetch(since: cursor, pageNumber: pageNumber + 1, done: done)
                }
                done(nil)
            case .answered(401, _):
                link.tokenRefused()
                done("\(name): /sync refused the token")
            case .answered, .failed:
                done("\(name): /sync failed: \(Self.describe(outcome))")
            }
        }
    }
}
