import RelayCore

/// The methods apps call first: health, status, the model catalog, presence, the gateway's
/// identity and heartbeat state.
extension GatewayDownstream {
    static let modelViews: Set<String> = ["default", "configured", "provider-config", "all"]

    func handleSystem(_ request: GatewayRequest, on session: GatewaySession) {
        guard !session.isNode else { return session.fail(request.id, .invalid("unauthorized role: node"), close: nil) }
        guard session.has("operator.read") || session.has("operator.write") else {
            return session.fail(request.id, .invalid("missing scope operator.read"), close: nil)
        }
        switch request.method {
        case "health":
            session.send(GatewayFrame.ok(request.id, healthSnapshot))
        case "status":
            status(request, on: session)
        case "models.list":
            if let view = request.params["view"], view.stringValue.map(Self.modelViews.contains) != true {
                return session.fail(request.id, .invalid("view must be one of default, configured, provider-config, all"), close: nil)
            }
            let models = settings.backendKinds.sorted { $0.key < $1.key }.map { name, kind in
                JSONValue.object(["id": .string(name), "name": .string(name), "provider": .string(kind), "available": .bool(true)])
            }
            session.send(GatewayFrame.ok(request.id, .object(["models": .array(models)])))
        case "system-presence":
            session.send(GatewayFrame.ok(request.id, presenceList))
        case "gateway.identity.get":
            guard let identity = gatewayIdentity else {
                return session.fail(request.id, GatewayError(code: .unavailable, message: "the gateway identity could not be read"), close: nil)
            }
            session.send(GatewayFrame.ok(request.id, .object(["deviceId": .string(identity.deviceID), "publicKey": .string(identity.publicKey)])))
        default:
            // `last-heartbeat`: the relay runs no agent heartbeats.
            session.send(GatewayFrame.ok(request.id, .null))
        }
    }

    /// What `health`, the `health` event and `hello-ok.snapshot.health` carry; apps read `ok`.
    var healthSnapshot: JSONValue {
        .object([
            "ok": .bool(true), "ts": .int(clock.nowMillis()), "durationMs": .int(0), "defaultAgentId": .string("main"),
            "channels": .object([:]), "channelOrder": .array([]), "agents": .array([]),
            "uptimeMs": .int(clock.nowMillis() - startedAt), "connections": .int(Int64(sessions.count)),
        ])
    }

    private func status(_ request: GatewayRequest, on session: GatewaySession) {
        let now = clock.nowMillis()
        hub.conversations.list(userID: settings.userID, limit: 10) { result in
            let recent = ((try? result.get()) ?? []).map { conversation in
                JSONValue.object([
                    "key": .string(SessionListing.key(of: conversation)), "kind": .string("direct"), "updatedAt": .int(conversation.updatedAt),
                    "age": .int(max(0, now - conversation.updatedAt)),
                ])
            }
            session.send(
                GatewayFrame.ok(
                    request.id,
                    .object([
                        "runtimeVersion": .string(Self.serverVersion), "channelSummary": .array([]), "queuedSystemEvents": .array([]),
                        "heartbeat": .object(["defaultAgentId": .string("main"), "agents": .array([])]),
                        "sessions": .object(["count": .int(Int64(recent.count)), "recent": .array(recent), "defaults": .object([:])]),
                    ])
                )
            )
        }
    }

    /// Sends `health` to every session every two ticks (a minute by default), as real gateways do
    /// after each refresh.
    func scheduleHealth() {
        loop.schedule(afterMillis: settings.tickIntervalMillis * 2) { [weak self] in
            guard let self else { return }
            healthVersion += 1
            broadcast("health", healthSnapshot, stateVersion: stateVersion)
            scheduleHealth()
        }
    }
}
