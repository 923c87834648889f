import RelayCore

extension Relay {
    /// The protocols of the configured listeners, in the order `/metrics` lists them.
    var servedProtocols: [String] {
        [
            config.clawline.map { _ in "clawline" }, config.gateway.map { _ in "gateway" }, config.companion.map { _ in "companion" },
            config.discoClaw.map { _ in "discoclaw" },
        ].compactMap { $0 }
    }

    /// `/metrics`, called on the loop by the admin listener. Everything is counted where it
    /// happens (the transport, the core, the store, the audit), by protocol where it has one.
    func metricsText() -> String {
        var metrics = MetricsText()
        let protocols = servedProtocols
        func byProtocol(_ counts: [String: Int]) -> [(labels: MetricLabels, value: Double)] {
            (protocols + counts.keys.filter { !protocols.contains($0) }.sorted()).map { ([("protocol", $0)], Double(counts[$0] ?? 0)) }
        }
        metrics.add("clawrelay_build_info", "gauge", "The relay's version (always 1).", [([("version", RelayVersion.current)], 1)])
        metrics.add("clawrelay_connections", "gauge", "Open client WebSockets by protocol.", byProtocol(loop.openWebSockets))
        if let companion { metrics.add("clawrelay_companion_sessions", "gauge", "Live Companion sessions.", Double(companion.liveSessionCount)) }
        metrics.add(
            "clawrelay_frames_total",
            "counter",
            "Frames and HTTP messages seen at the transport edge.",
            [([("direction", "in")], Double(observer?.framesIn ?? 0)), ([("direction", "out")], Double(observer?.framesOut ?? 0))]
        )
        metrics.add(
            "clawrelay_bytes_total",
            "counter",
            "Payload bytes at the transport edge.",
            [([("direction", "in")], Double(observer?.bytesIn ?? 0)), ([("direction", "out")], Double(observer?.bytesOut ?? 0))]
        )
        guard let hub else { return metrics.text }
        metrics.add(
            "clawrelay_messages_accepted_total",
            "counter",
            "Client messages made durable and acknowledged, by the protocol of the device that sent them.",
            byProtocol(hub.counters.acceptedMessages)
        )
        metrics.add(
            "clawrelay_turns_total",
            "counter",
            "Backend turns by outcome.",
            [([("outcome", "completed")], Double(hub.turns.completedCount)), ([("outcome", "failed")], Double(hub.turns.failedCount))]
        )
        metrics.add("clawrelay_active_turns", "gauge", "Turns running now.", Double(hub.turns.activeCount))
        metrics.add("clawrelay_queued_turns", "gauge", "Turns waiting behind a conversation's active one.", Double(hub.turns.queuedCount))
        let presence = hub.presence.counts
        metrics.add(
            "clawrelay_devices",
            "gauge",
            "Devices seen since start, by presence.",
            DevicePresence.State.allCases.map { ([("state", $0.rawValue)], Double(presence[$0] ?? 0)) }
        )
        metrics.add("clawrelay_queue_drained_total", "counter", "Queued events delivered to returning devices.", Double(hub.queue.drainedEvents))
        let accounts = hub.accounts.states
        if !accounts.isEmpty {
            let samples = accounts.sorted { $0.key < $1.key }.flatMap { account, current in
                LinkState.allCases.map { state in ([("account", account), ("state", state.rawValue)], state == current.state ? 1.0 : 0.0) }
            }
            metrics.add("clawrelay_upstream_link", "gauge", "Upstream account link state (1 = current).", samples)
        }
        var pending: [String: Int] = [:]
        for request in hub.devices.pairing.requests() { pending[request.protocolName, default: 0] += 1 }
        metrics.add("clawrelay_pending_pairings", "gauge", "Pairing requests waiting for a decision, by protocol.", byProtocol(pending))
        metrics.add("clawrelay_typing_devices", "gauge", "Devices whose user is typing, by protocol.", byProtocol(hub.counters.typingDevices))
        let byBackend = { (values: [String: Double]) in values.sorted { $0.key < $1.key }.map { ([("backend", $0.key)], $0.value) } }
        metrics.add(
            "clawrelay_backend_reported_runs_total",
            "counter",
            "Runs whose backend reported what they cost, by backend.",
            byBackend(hub.counters.reportedRuns.mapValues(Double.init))
        )
        metrics.add(
            "clawrelay_backend_cost_usd_total",
            "counter",
            "What runs cost as their backends reported it, in US dollars.",
            byBackend(hub.counters.costUSD)
        )
        metrics.add("clawrelay_pending_approvals", "gauge", "Approvals waiting for a user's decision.", Double(hub.approvals.all.count))
        PushWiring.metrics(hub.pushes, service: push?.service, into: &metrics)
        Self.stageMetrics(hub.stages, into: &metrics)
        metrics.add("clawrelay_audit_queue_depth", "gauge", "Audit entries waiting for the writer.", Double(audit?.queueDepth ?? 0))
        metrics.add("clawrelay_audit_rows_total", "counter", "Audit rows written.", Double(audit?.writtenCount ?? 0))
        if let storeStats = storage?.stats {
            metrics.add("clawrelay_store_batches_total", "counter", "Store transactions committed.", Double(storeStats.batches))
            metrics.add("clawrelay_store_operations_total", "counter", "Store operations run.", Double(storeStats.operations))
            metrics.add("clawrelay_store_busy_seconds_total", "counter", "Time the store writer spent in transactions.", storeStats.busySeconds)
            metrics.add(
                "clawrelay_store_cpu_seconds_total",
                "counter",
                "CPU time of the store writer's thread in transactions (the rest of busy is waiting for the disk or a CPU).",
                storeStats.cpuSeconds
            )
            metrics.add(
                "clawrelay_store_wal_pages_total",
                "counter",
                "Pages the store's commits wrote to its write-ahead log.",
                Double(storeStats.walPages)
            )
            metrics.add("clawrelay_store_last_batch_seconds", "gauge", "Duration of the last store transaction.", storeStats.lastBatchSeconds)
            metrics.add(
                "clawrelay_store_checkpoint_seconds_total",
                "counter",
                "Time the store writer spent copying its log into the database between transactions.",
                storeStats.checkpointSeconds
            )
            metrics.add("clawrelay_store_checkpoint_max_seconds", "gauge", "The longest checkpoint since start.", storeStats.checkpointMaxSeconds)
            metrics.add(
                "clawrelay_store_checkpoints_skipped_total",
                "counter",
                "Checkpoints skipped because another process was writing the database, or failed.",
                Double(storeStats.checkpointsSkippedCount)
            )
            metrics.add(
                "clawrelay_store_log_pages_max",
                "gauge",
                "The most pages the write-ahead log held at a checkpoint since start.",
                Double(storeStats.logPagesMaxCount)
            )
        }
        return metrics.text
    }
}
