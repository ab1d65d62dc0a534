import Foundation
import JSONPatch
import MVVMRProtocol

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Following the session's Server-Sent Events.
extension PageClient {
    /// Starts following the session's event stream (`GET /api/events`): patches, navigations and
    /// snapshots are applied as they come; after a drop the client reconnects with `Last-Event-ID` (the
    /// last seq it saw), so it misses nothing; a lost session is recovered. Does nothing when already
    /// following. Without a session yet, it waits for one.
    public func startEvents() {
        state.withLock { state in
            guard state.eventsTask == nil else { return }
            state.eventsTask = Task { await self.runEvents() }
        }
    }

    /// Stops following the event stream and closes it. ``startEvents()`` resumes from the last event seen.
    public func stopEvents() {
        let (task, connection) = state.withLock { state -> (Task<Void, Never>?, EventStreamConnection?) in
            defer {
                state.eventsTask = nil
                state.connection = nil
            }
            return (state.eventsTask, state.connection)
        }
        task?.cancel()
        connection?.cancel()
    }

    /// Closes the current connection as a network failure would (the client reconnects by itself).
    func dropEventStreamConnection() {
        state.withLock { $0.connection }?.cancel()
    }

    enum StreamEnd {
        case dropped(streamed: Bool)
        case unknownSession
        case expired
        case sessionChanged
    }

    private func runEvents() async {
        var failures = 0
        while !Task.isCancelled {
            let (session, lastEventID) = state.withLock { ($0.sessionID, $0.lastEventID) }
            guard let session else {
                try? await Self.sleep(seconds: min(configuration.reconnectDelay, configuration.maxReconnectDelay))
                continue
            }
            var request = makeRequest("GET", ["api", "events"], session: session)
            request.setValue("text/event-stream", forHTTPHeaderField: "Accept")
            request.timeoutInterval = configuration.eventStreamIdleTimeout
            if let lastEventID { request.setValue(String(lastEventID), forHTTPHeaderField: "Last-Event-ID") }
            let connection = EventStreamConnection(
                request: request, sessionID: session, idleTimeout: configuration.eventStreamIdleTimeout)
            let attached = state.withLock { state -> Bool in
                guard state.sessionID == session, state.eventsTask != nil, !Task.isCancelled else { return false }
                state.connection = connection
                state.diagnostics.connections += 1
                state.diagnostics.lastEventIDsSent.append(lastEventID)
                return true
            }
            guard attached else {
                if Task.isCancelled { break }
                continue
            }
            connection.start()
            let end = await consume(connection)
            connection.cancel()
            state.withLock { state in
                if state.connection === connection { state.connection = nil }
                if state.connected {
                    state.connected = false
                    state.emit([.eventsDisconnected])
                }
            }
            if Task.isCancelled { break }
            // The session changed meanwhile (opened, recovered): follow the new one at once.
            if state.withLock({ $0.sessionID }) != session { continue }
            switch end {
            case .sessionChanged:
                failures = 0
                continue
            case .unknownSession, .expired:
                guard configuration.recoversSessions else {
                    state.withLock { $0.eventsTask = nil }
                    return
                }
                do {
                    _ = try await recoverSession(lost: session)
                    failures = 0
                    continue
                } catch {
                    failures += 1
                }
            case .dropped(let streamed):
                failures = streamed ? 1 : failures + 1
            }
            let serverRetry = state.withLock { $0.serverRetry }
            let delay =
                failures <= 1
                ? (serverRetry ?? configuration.reconnectDelay)
                : configuration.reconnectDelay * pow(2, Double(min(failures - 1, 16)))
            try? await Self.sleep(seconds: min(delay, configuration.maxReconnectDelay))
        }
    }

    /// Reads one connection to its end, applying its events.
    private func consume(_ connection: EventStreamConnection) async -> StreamEnd {
        var parser = ServerSentEventParser()
        var status: Int?
        var errorBody = Data()
        do {
            for try await input in connection.inputs {
                switch input {
                case .response(let code, _):
                    status = code
                    guard code == 200 else { continue }
                    let current = state.withLock { state -> Bool in
                        guard state.sessionID == connection.sessionID else { return false }
                        state.connected = true
                        state.emit([.eventsConnected])
                        return true
                    }
                    if !current { return .sessionChanged }
                case .bytes(let data):
                    guard status == 200 else {
                        errorBody.append(data)
                        continue
                    }
                    for output in parser.feed(data) {
                        switch output {
                        case .retry(let milliseconds):
                            state.withLock { $0.serverRetry = Double(milliseconds) / 1000 }
                        case .event(let event):
                            if let end = handle(event, from: connection) { return end }
                        }
                    }
                }
            }
        } catch {
            // A drop: reconnect.
        }
        if status == 404, ProtocolDecoding.serverError(TransportResponse(status: 404, body: errorBody)).code == "unknown_session" {
            return .unknownSession
        }
        return .dropped(streamed: status == 200)
    }

    private enum DecodedEvent {
        case patch(unit: String, rev: Int, patch: JSONPatch)
        case navigate(PageNavigationChange, ClientPage)
        case snapshot(ClientPage)
        case other
    }

    /// Applies one event; returns how the stream ends when it must.
    private func handle(_ event: ServerSentEvent, from connection: EventStreamConnection) -> StreamEnd? {
        if event.name == "expired" { return .expired }
        let sequence = event.id.flatMap { Int($0.trimmingCharacters(in: .whitespaces)) }
        let decoded: DecodedEvent
        // An event this client cannot read, or does not know, is skipped (its page resyncs on the next gap).
        switch try? WireEvent.decode(name: event.name, data: event.data.utf8) {
        case .patch(let patch)?: decoded = .patch(unit: patch.unit, rev: patch.rev, patch: patch.patch)
        case .navigate(let navigation)?:
            let (change, page) = ProtocolDecoding.navigation(navigation)
            decoded = .navigate(change, page)
        case .snapshot(let page)?: decoded = .snapshot(ClientPage(page))
        case .expired?, nil: decoded = .other
        }
        var resync: String?
        let current = state.withLock { state -> Bool in
            guard state.sessionID == connection.sessionID else { return false }
            if let sequence { state.lastEventID = sequence }
            state.diagnostics.eventsReceived += 1
            var changes: [PageClientChange] = []
            switch decoded {
            case .patch(let unit, let rev, let patch):
                switch Self.applyPatch(patch, unit: unit, from: rev - 1, to: rev, in: &state) {
                case .applied: changes.append(.pageChanged(unit))
                case .ignored: break
                case .gap: resync = unit
                }
            case .navigate(let change, let page):
                changes = Self.applyNavigation(change, page: page, sequence: sequence, in: &state)
            case .snapshot(let page):
                if Self.install(page, in: &state) { changes.append(.pageChanged(page.unit)) }
            case .other:
                break
            }
            state.emit(changes)
            return true
        }
        guard current else { return .sessionChanged }
        if let resync { scheduleResync(resync) }
        return nil
    }
}
