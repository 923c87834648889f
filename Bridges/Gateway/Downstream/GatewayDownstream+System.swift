import GatewayWire
import RelayCore

/// The methods apps call first: health, status, the model catalog, presence, the gateway's
/// identity and heartbeat state.
extension GatewayDownstream {
    func handleSystem(_ request: GatewayRequest<JSONValue>, on socket: GatewaySocket) {
        switch request.method {
        case "health":
            socket.reply(request.id, healthSnapshot)
        case "status":
            status(request, on: socket)
        case "models.list":
            if let view = request.fields["view"], view.stringValue.map(ModelsList.views.contains) != true {
                return socket.fail(request.id, .unknownModelView)
            }
            let models = settings.backendKinds.sorted { $0.key < $1.key }.map { name, kind in ModelsList.Model(id: name, name: name, provider: kind) }
            socket.reply(request.id, ModelsList(models: models))
        case "system-presence":
            socket.reply(request.id, presenceList)
        case "gateway.identity.get":
            guard let identity = gatewayIdentity else { return socket.fail(request.id, .identityUnreadable) }
            socket.reply(request.id, GatewayIdentity(deviceId: identity.deviceID, publicKey: identity.publicKey))
        default:
            // `last-heartbeat`: the relay runs no agent heartbeats.
            socket.reply(request.id, JSONValue.null)
        }
    }

    /// What `health`, the `health` event and `hello-ok.snapshot.health` carry; apps read `ok`.
    var healthSnapshot: HealthSnapshot {
        let now = clock.nowMillis()
        return HealthSnapshot(ts: now, uptimeMs: now - startedAt, connections: Int64(sockets.count))
    }

    private func status(_ request: GatewayRequest<JSONValue>, on socket: GatewaySocket) {
        let now = clock.nowMillis()
        hub.conversations.list(userID: settings.userID, limit: 10) { result in
            let recent = ((try? result.get()) ?? []).map { conversation in
                GatewayStatus.Recent(
                    key: SessionListing.key(of: conversation),
                    updatedAt: conversation.updatedAt,
                    age: max(0, now - conversation.updatedAt)
                )
            }
            socket.reply(request.id, GatewayStatus(runtimeVersion: Self.serverVersion, recent: recent))
        }
    }

    /// Sends `health` to every socket every two ticks (a minute by default), as real gateways do
    /// after each refresh.
    func scheduleHealth() {
        loop.schedule(afterMillis: settings.tickIntervalMillis * 2) { [weak self] in
            guard let self else { return }
            stateVersion.health += 1
            broadcast("health", healthSnapshot, stateVersion: stateVersion)
            scheduleHealth()
        }
    }
}
