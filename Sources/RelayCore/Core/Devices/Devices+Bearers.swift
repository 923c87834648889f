extension Devices {
    /// Devices of `protocolName` authenticate every request with a bearer token whose SHA-256 is
    /// their record's `tokenHash`: `bearer(tokenHash:)` finds them without a read.
    public func indexBearerTokens(of protocolName: String) { bearers.index(protocol: protocolName) }

    /// The devices stored when the relay starts (read before the loop runs): the bearer index begins with them.
    public func preload(_ records: [DeviceRecord]) {
        for record in records { bearers.put(record) }
    }

    /// The approved device of an indexed protocol whose token has this SHA-256, as this node
    /// knows it now (no read).
    public func bearer(tokenHash: String) -> DeviceRecord? { bearers.record(tokenHash: tokenHash) }

    /// The approved device of an indexed protocol whose token has this SHA-256. On a single node
    /// the index has every device and `completion` runs at once. In a cluster, a device paired
    /// through another node may be missing here: it is read from the store (one read per hash at
    /// a time, however many requests wait for it), and a hash no store knew is answered unread
    /// for `missMillis`, so a client repeating a bad token costs no read per request.
    public func bearer(tokenHash: String, protocolName: String, completion: @escaping (DeviceRecord?) -> Void) {
        if let record = bearers.record(tokenHash: tokenHash) { return completion(record) }
        guard shared, bearers.protocols.contains(protocolName), !bearers.isKnownMiss(tokenHash, now: clock.nowMillis()) else {
            return completion(nil)
        }
        if lookups[tokenHash] != nil { return lookups[tokenHash, default: []].append(completion) }
        guard lookups.count < bearers.limits.maxLookups else {
            // Said once per flood, not per request.
            if !lookupsFull { logger.warning("too many unknown bearer tokens being read at once; refusing more unread until reads end") }
            lookupsFull = true
            return completion(nil)
        }
        lookups[tokenHash] = [completion]
        journal.device(tokenHash: tokenHash, protocolName: protocolName) { [weak self] result in
            guard let self else { return }
            let waiting = lookups.removeValue(forKey: tokenHash) ?? []
            if lookups.isEmpty { lookupsFull = false }
            var found: DeviceRecord?
            switch result {
            case .success(let record?) where record.status == .approved && record.tokenHash == tokenHash:
                bearers.put(record)
                found = bearers.record(tokenHash: tokenHash)
                if let found { publish(.changed(found)) }
            case .success:
                bearers.rememberMiss(tokenHash, now: clock.nowMillis())
            case .failure(let error):
                // Not remembered: the next request reads again.
                logger.error("could not read a device by its bearer token", metadata: ["error": "\(error)"])
            }
            for completion in waiting { completion(found) }
        }
    }

    /// Whether `bearer(tokenHash:protocolName:completion:)` may still find a device this node
    /// does not index now (a cluster node that did not look this hash up lately): a caller that
    /// must answer at once (a WebSocket upgrade) lets it through and decides when the answer comes.
    public func mayFindBearer(tokenHash: String, protocolName: String) -> Bool {
        bearers.record(tokenHash: tokenHash) != nil
            || (shared && bearers.protocols.contains(protocolName) && !bearers.isKnownMiss(tokenHash, now: clock.nowMillis()))
    }

    /// The indexed devices of a protocol (approved, with a token), of one user or all, oldest first.
    public func bearerDevices(protocolName: String, userID: String? = nil) -> [DeviceRecord] {
        bearers.records(protocolName: protocolName, userID: userID)
    }

    /// In a cluster: the index is read again from the store every `refreshMillis`, so devices
    /// paired, renamed or revoked through other nodes converge here. A device that left it is cut
    /// off (its sockets close); one that joined or changed is published as changed. Loop thread.
    func refreshBearersPeriodically() {
        guard shared, !refreshScheduled else { return }
        refreshScheduled = true
        loop.schedule(afterMillis: refreshMillis) { [weak self] in
            guard let self else { return }
            refreshScheduled = false
            refreshBearers()
            refreshBearersPeriodically()
        }
    }

    /// Reads the indexed protocols' devices once (one read at a time).
    func refreshBearers() {
        let protocols = bearers.protocols.sorted()
        guard !refreshing, !protocols.isEmpty else { return }
        refreshing = true
        let since = bearers.version
        var remaining = protocols.count
        for name in protocols {
            journal.devices(protocolName: name) { [weak self] result in
                guard let self else { return }
                remaining -= 1
                switch result {
                case .success(let records):
                    let (removed, changed) = bearers.replace(protocolName: name, with: records, since: since)
                    for deviceID in removed {
                        logger.info("device no longer approved (changed through another node)", metadata: ["device": "\(deviceID)"])
                        publish(.cutOff(deviceID: deviceID))
                    }
                    for record in changed { publish(.changed(record)) }
                case .failure(let error):
                    logger.warning("could not read the devices again", metadata: ["protocol": "\(name)", "error": "\(error)"])
                }
                if remaining == 0 {
                    refreshing = false
                    bearers.settled(since: since)
                }
            }
        }
    }
}
