import JSONPatch
import Locking
import MVVMR

/// Sessions that are not in memory (after a restart, or passivated) come back from the store, by replay.
extension PageServer {
    /// The live session `identifier`, restoring it from the store when it is not in memory (or was spoiled by
    /// a failed append); nil when neither memory nor the store has it.
    /// - Throws: `store_unavailable` when the store cannot be read.
    func liveSession(_ identifier: String) throws(ProtocolError) -> ServerSession? {
        if let session = sessions.touch(identifier), !session.isSpoiled { return session }
        guard store.keepsSessions else { return nil }
        // One restore per id at a time: a second request for the same session waits and finds it restored.
        let stripe = restoreLocks[Self.stripe(of: identifier, count: restoreLocks.count)]
        return try stripe.withLock { _ throws(ProtocolError) -> ServerSession? in
            if let session = sessions.touch(identifier) {
                if !session.isSpoiled { return session }
                _ = sessions.remove(identifier)
                session.expire(reason: nil)
            }
            return try restore(identifier)
        }
    }

    private static func stripe(of identifier: String, count: Int) -> Int {
        var digest = StableDigest()
        digest.combine(identifier.utf8)
        return Int(digest.value % UInt64(count))
    }

    /// How many times a restore loads a session whose log another node wrote to between the load and the claim.
    static let claimAttempts = 5

    /// `identifier`'s log, claimed for this node (``SessionStore/claim(_:asLoaded:)``), so that the copy restored
    /// from it starts where the store stands: any other node that held the session (it made it, or served it before
    /// the balancer sent a request here) can write nothing after it, and drops its copy. Loaded again when another
    /// node wrote between a load and its claim. Nil when the store has no such session.
    /// - Throws: `store_unavailable` when the store cannot be read or written, or the log kept changing.
    private func loadClaimed(_ identifier: String) throws(ProtocolError) -> (StoredSession, SessionClaim)? {
        for _ in 0..<Self.claimAttempts {
            var operation = "load"
            do throws(SessionStoreError) {
                guard let stored = try store.load(identifier), !stored.records.isEmpty || stored.snapshot != nil else {
                    return nil
                }
                operation = "claim"
                if let claim = try store.claim(identifier, asLoaded: stored) { return (stored, claim) }
            } catch {
                logger.log(.error, "store_unavailable", [("operation", .string(operation)), ("error", .string(error.description))])
                throw .storeUnavailable
            }
            claimsRefused.increment()
        }
        logger.log(.warning, "session_claim_contended", [("session", .string(SessionIdentifier.redacted(identifier)))])
        throw .storeUnavailable
    }

    /// Replays `identifier`'s stored log into a fresh session and makes it live.
    private func restore(_ identifier: String) throws(ProtocolError) -> ServerSession? {
        let started = ContinuousClock.now
        guard let (stored, claim) = try loadClaimed(identifier) else { return nil }
        var snapshot: SessionSnapshot?
        if let storedSnapshot = stored.snapshot {
            do {
                snapshot = try SessionSnapshot(json: try JSONValue(parsing: storedSnapshot.body, maxDepth: 512))
            } catch {
                // The records after it cannot be replayed without it: the session is lost (its client starts anew).
                logger.log(
                    .error, "session_snapshot_unreadable",
                    [("session", .string(SessionIdentifier.redacted(identifier))), ("error", .string("\(error)"))])
                return nil
            }
        }
        var records: [InputRecord] = []
        records.reserveCapacity(stored.records.count)
        for storedRecord in stored.records {
            do {
                records.append(try InputRecord(json: try JSONValue(parsing: storedRecord.body, maxDepth: 512)))
            } catch {
                // A record this server cannot read: the log goes no further than the records before it.
                logger.log(
                    .error, "session_log_unreadable",
                    [("session", .string(SessionIdentifier.redacted(identifier))), ("number", .int(storedRecord.number))])
                break
            }
        }
        let session = ServerSession(
            identifier: identifier, environment: sessionEnvironment,
            restoring: true)
        session.claim = claim
        let report = session.restore(from: snapshot, records: records, recordCap: configuration.maxPageRecords)
        session.startLogging(storedThrough: max(stored.lastNumber, records.last?.number ?? 0))
        for unit in report.divergedUnits {
            let capped = report.cappedUnits.contains(unit)
            (capped ? pageResets : divergences).increment()
            var fields: [(String, JSONValue)] = [("session", .string(SessionIdentifier.redacted(identifier))), ("unit", .string(unit))]
            // Where the replay first came out differently: the record to look at in the session's log.
            if !capped, let first = report.mismatchedRecords.first { fields.append(("record", .int(first))) }
            logger.log(.warning, capped ? "session_page_log_capped" : "session_page_diverged", fields)
            do throws(PageError) {
                try session.pages.rebind(unit)
            } catch {
                logger.log(.error, "session_page_rebind_failed", [("unit", .string(unit)), ("error", .string(error.message))])
            }
        }
        session.pages.goLive()
        // Live from here: its pages' topics are registered now (the replay subscribed nothing and published nothing).
        session.noteTakenTopicMessages(in: records, after: snapshot)
        session.joinTopics(catchingUp: true)
        if !report.divergedUnits.isEmpty {
            // The fresh pages are acknowledged (read) right away: wait for their records.
            session.waitUntilStored(session.pages.inputNumber)
        }
        if !report.supersededRecords.isEmpty, !session.isSpoiled {
            // What a stored rebind stands for is never replayed again: the log shrinks back under the cap.
            do throws(SessionStoreError) {
                try store.removeRecords(report.supersededRecords, of: identifier)
            } catch {
                logger.log(.warning, "store_unavailable", [("operation", "compact"), ("error", .string(error.description))])
            }
        }
        let (inserted, evicted) = sessions.insert(session, identifier: identifier)
        if let evicted { passivate(evicted) }
        guard inserted else {
            session.expire(reason: nil)
            throw .overloaded
        }
        restores.increment()
        let elapsed = ContinuousClock.now - started
        logger.log(
            .debug, "session_restored",
            [
                ("session", .string(SessionIdentifier.redacted(identifier))), ("records", .int(records.count)),
                ("snapshot", .int(snapshot?.number ?? 0)),
                ("diverged", .int(report.divergedUnits.count)),
                ("duration_ms", .double(Double(elapsed.components.attoseconds) / 1e15 + Double(elapsed.components.seconds) * 1000)),
            ])
        return session
    }

    /// Drops this node's copy of a session another node announced it restored (several nodes on one store): out of
    /// memory without a write (the store has every input acknowledged), its event streams closed without an
    /// `expired` event, so that their clients reconnect, through the balancer, to the node that holds it now. A
    /// later request here restores it again (and takes it back).
    ///
    /// Kept when it was restored from a later claim than `claim`: the notice came late (this node took the session
    /// back meanwhile, perhaps while the notice waited for the restore's lock), and the other node's copy is the
    /// stale one, whose next write the fence refuses.
    func dropCopyTakenOver(_ identifier: String, claim: SessionClaim = .unordered) {
        restoreLocks[Self.stripe(of: identifier, count: restoreLocks.count)].withLock { _ in
            guard let held = sessions.peek(identifier) else { return }
            guard claim.supersedes(held.claim) else {
                logger.log(.debug, "session_notice_outdated", [("session", .string(SessionIdentifier.redacted(identifier)))])
                return
            }
            guard let session = sessions.remove(identifier) else { return }
            session.expire(reason: nil)
            takeovers.increment()
            logger.log(.debug, "session_taken_over", [("session", .string(SessionIdentifier.redacted(identifier)))])
        }
    }

    /// Takes an idle session out of memory; its log stays in the store, so its next request restores it. With a
    /// store that keeps nothing, the session ends (`evicted`).
    /// - Parameters:
    ///   - session: the session.
    ///   - idleFor: how long it has been idle: its last activity, kept in the store, is that long ago (so it
    ///     expires `SESSION_TTL_SECONDS` after it was last used, passivated or not).
    func passivate(_ session: ServerSession, idleFor: Duration = .zero) {
        passivate([session], idleFor: idleFor)
    }

    /// Takes idle sessions out of memory, as ``passivate(_:idleFor:)`` does, with their last activity kept in
    /// one store commit for all of them (a sweep passivates thousands at once: one sync at `machine` durability,
    /// not one each).
    /// - Parameters:
    ///   - sessions: the sessions.
    ///   - idleFor: how long they have been idle.
    func passivate(_ sessions: [ServerSession], idleFor: Duration = .zero) {
        guard store.keepsSessions else {
            for session in sessions { session.expire(reason: "evicted") }
            return
        }
        let time = SystemTime.secondsSince1970() - Int64(idleFor.components.seconds)
        do throws(SessionStoreError) {
            try store.touch(sessions.map { SessionActivity(session: $0.identifier, time: time) })
        } catch {
            logger.log(.warning, "store_unavailable", [("operation", "touch"), ("error", .string(error.description))])
        }
        for session in sessions {
            session.expire(reason: nil)
            passivations.increment()
        }
    }

    /// Ends a session for good: out of memory and out of the store. The caller has taken it out of the table.
    func end(_ session: ServerSession, reason: String) {
        session.expire(reason: reason)
        let identifier = session.identifier
        // Under the id's restore stripe, so that no restore of it runs meanwhile: a request that came once the
        // session had left the table, but before the delete, restored it from the store; that copy ends too (it
        // would live on in memory, serving a deleted session until its idle time ran out).
        restoreLocks[Self.stripe(of: identifier, count: restoreLocks.count)].withLock { _ in
            do throws(SessionStoreError) {
                try store.delete(identifier)
            } catch {
                logger.log(.warning, "store_unavailable", [("operation", "delete"), ("error", .string(error.description))])
            }
            if let restored = sessions.remove(identifier), restored !== session { restored.expire(reason: reason) }
        }
    }

    /// Lets the pages of every session with no request for `idleTime` hibernate (see
    /// `PageSession.hibernateIdlePages()`), each session once per idle spell, or again at the next sweep when a timer
    /// or an async job kept its pages awake.
    /// - Returns: how many pages began to hibernate.
    func hibernateIdlePages(idleFor idleTime: Duration) -> Int {
        var hibernated = 0
        for session in sessions.takeIdle(for: idleTime) {
            let count = session.pages.hibernateIdlePages()
            hibernated += count
            // A session with a timer or job pending hibernates nothing, so only one that hibernated nothing is asked.
            if count == 0, session.pages.hasPendingTimersOrWork { sessions.retryIdle(session.identifier) }
        }
        if hibernated > 0 { hibernations.increment(by: Double(hibernated)) }
        return hibernated
    }

    /// Lets the pages of the sessions idle past `hibernateAfter` hibernate; with `expiring`, also passivates sessions
    /// idle for `passivateAfter` and expires (and deletes) those idle for `timeToLive`, in memory and in the store;
    /// then gives the memory freed back when it was much.
    func sweepIdleSessions(timeToLive: Duration, passivateAfter: Duration?, hibernateAfter: Duration?, expiring: Bool) {
        // Hibernated pages count as released sessions for the trim (each frees about half of one).
        var released = hibernateAfter.map { hibernateIdlePages(idleFor: $0) } ?? 0
        defer {
            // Their memory is free now, but scattered through the heap: give its pages back (see FreedMemory).
            if sweepTrimming.withLock({ $0.shouldTrim(afterReleasing: released) }) { FreedMemory.release() }
        }
        guard expiring else { return }
        if let passivateAfter, passivateAfter < timeToLive, store.keepsSessions {
            let idle = sessions.removeExpired(timeToLive: passivateAfter)
            passivate(Array(idle), idleFor: passivateAfter)
            released += idle.count
        } else {
            for session in sessions.removeExpired(timeToLive: timeToLive) {
                end(session, reason: "expired")
                expirations.increment()
                released += 1
            }
        }
        if store.isShared {
            // A session held open here by an event stream, with no input for a while, is not idle: say so in the
            // store, or another node's sweep would find its activity old and delete it under this node.
            let streaming = sessions.identifiersWithOpenStreams()
            if !streaming.isEmpty {
                let now = SystemTime.secondsSince1970()
                do throws(SessionStoreError) {
                    try store.touch(streaming.map { SessionActivity(session: $0, time: now) })
                } catch {
                    logger.log(.warning, "store_unavailable", [("operation", "touch"), ("error", .string(error.description))])
                }
            }
        }
        let cutoff = SystemTime.secondsSince1970() - Int64(timeToLive.components.seconds)
        do throws(SessionStoreError) {
            while true {
                let stale = try store.sessions(lastActiveBefore: cutoff, limit: 500)
                var deleted = 0
                for identifier in stale where sessions.peek(identifier) == nil {
                    try store.delete(identifier)
                    expirations.increment()
                    deleted += 1
                }
                if stale.count < 500 || deleted == 0 { break }
            }
        } catch {
            logger.log(.warning, "store_unavailable", [("operation", "expire"), ("error", .string(error.description))])
        }
    }
}
