import GatewayWire
import RelayCore

/// A verified `connect`: the core decides (`GatewayDeviceDecision`) and an accepted peer is
/// attached and greeted with `hello-ok`.
extension GatewayDownstream {
    func authorize(_ attempt: ConnectAttempt, on socket: GatewaySocket) {
        socket.connection.deviceID = attempt.deviceID  // so the audit attributes a refused connect too
        let (now, userID, fresh) = (clock.nowMillis(), settings.userID, GatewayDeviceDecision.newDeviceToken())
        hub.devices.update(DeviceSnapshot.Request(deviceID: attempt.deviceID)) { snapshot in
            GatewayDeviceDecision.decide(
                &snapshot,
                publicKey: attempt.publicKey,
                role: attempt.role,
                scopes: attempt.scopes,
                credentials: attempt.credentials,
                userID: userID,
                freshToken: fresh,
                now: now
            )
        } completion: { [self] result in
            guard sockets[socket.connection.id] === socket else { return }
            switch result {
            case .success(let verdict):
                if case .accepted = verdict { hub.devices.seen(attempt.deviceID) }
                perform(socket.machine.decided(verdict, requestID: attempt.requestID, now: clock.nowMillis()), on: socket)
            case .failure(let error):
                logger.error("gateway connect failed in the store", metadata: ["error": "\(error)"])
                perform(socket.machine.refusedConnect(attempt.requestID, .storeUnavailable), on: socket)
            }
        }
    }

    func completeConnect(_ requestID: String, on socket: GatewaySocket, deviceToken: String?, issuedAt: Int64?) {
        guard let peer = socket.peer else { return }
        socket.admitted(userID: settings.userID, logger: logger)
        if peer.isNode {
            if let previous = nodes[peer.deviceID], previous !== socket {
                previous.connection.close(code: GatewayCloseCode.policyViolation.rawValue, reason: "replaced")
            }
            nodes[peer.deviceID] = socket
            passthrough?.nodeConnected(peer)
        }
        hub.attach(socket, socket: socket.connection.id, userID: settings.userID, protocolName: Self.protocolName, delivery: .replay)
        socket.isAttached = true
        stateVersion.presence += 1
        let auth = HelloOk.Auth(
            role: peer.role,
            scopes: peer.sortedScopes,
            deviceToken: deviceToken,
            issuedAtMs: deviceToken == nil ? nil : issuedAt ?? clock.nowMillis()
        )
        socket.reply(requestID, hello(for: peer, connID: socket.connection.id, auth: auth))
        broadcast("presence", PresenceList(presence: presenceList), stateVersion: stateVersion) { $0 !== socket }
    }

    /// `hello-ok`: the version agreed, every method and event, the state now, the grant and the policy.
    func hello(for peer: GatewayPeer, connID: UInt64, auth: HelloOk.Auth) -> HelloOk {
        let now = clock.nowMillis()
        let snapshot = HelloOk.Snapshot(
            presence: presenceList,
            health: healthSnapshot,
            stateVersion: stateVersion,
            uptimeMs: now - startedAt,
            authMode: settings.sharedToken != nil ? "token" : settings.password != nil ? "password" : "device"
        )
        return HelloOk(
            protocol: peer.protocolVersion,
            server: HelloOk.Server(version: Self.serverVersion, connId: String(connID)),
            features: HelloOk.Features(
                methods: GatewaySocketMachine.methods.map(\.name),
                events: GatewaySocketMachine.events,
                capabilities: GatewaySocketMachine.capabilities
            ),
            snapshot: snapshot,
            auth: auth,
            policy: HelloOk.Policy(
                maxPayload: Int64(settings.maxPayloadBytes),
                maxBufferedBytes: Int64(settings.maxBufferedBytes),
                tickIntervalMs: Int64(settings.tickIntervalMillis)
            )
        )
    }
}
