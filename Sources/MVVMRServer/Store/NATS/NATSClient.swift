import CNATS
import Locking

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// How a JetStream publish ended, as its acknowledgement told it.
enum NATSAck: Sendable {
    /// Stored at this stream sequence.
    case stored(sequence: UInt64)
    /// Refused or lost: the error, already in the store's terms (`outOfOrder` for a refused fence).
    case failed(SessionStoreError)
}

/// Where the acknowledgements of asynchronous publishes go. nats.c calls its handler on a thread of its own with a
/// closure pointer given once per connection; this box is that pointer. It is never released (a few bytes per store
/// opened): nats.c may call the handler while, or after, the connection is destroyed, and the box then finds no store.
final class NATSAckRouter: Sendable {
    private struct Target {
        weak var receiver: (any NATSAckReceiver)?
    }

    private let target = Locked(Target())

    /// Sends later acknowledgements to `receiver`, or (nil) drops them.
    func route(to receiver: (any NATSAckReceiver)?) {
        target.withLock { $0.receiver = receiver }
    }

    /// The receiver of acknowledgements now, if any.
    var receiver: (any NATSAckReceiver)? { target.withLock { $0.receiver } }
}

/// What is told of each asynchronous publish's acknowledgement.
protocol NATSAckReceiver: AnyObject, Sendable {
    /// The publish of `message` (the natsMsg's address, as given by ``NATSClient/publishAsync(_:expecting:)``) ended so.
    func acknowledged(message: UInt, _ ack: NATSAck)
}

/// Where the messages of a core NATS subscription go (the ownership notices): like ``NATSAckRouter``, the closure
/// pointer nats.c calls back with, never released, with a receiver that may be gone.
final class NATSMessageRouter: Sendable {
    private struct Target {
        var receiver: (@Sendable (String, [UInt8]) -> Void)?
    }

    private let target = Locked(Target())

    /// Sends later messages (subject, payload) to `receiver`, or (nil) drops them.
    func route(to receiver: (@Sendable (String, [UInt8]) -> Void)?) {
        target.withLock { $0.receiver = receiver }
    }

    /// Hands one message to the receiver, if any.
    func deliver(subject: String, payload: [UInt8]) {
        target.withLock { $0.receiver }?(subject, payload)
    }
}

/// A nats.c subscription handle, kept under a lock (it is made after `init`, and destroyed in `close()`).
private struct SubscriptionHandle: @unchecked Sendable {
    // @unchecked Sendable: only ever read or written under its `Locked`.
    var pointer: OpaquePointer?
}

/// One message read back from a stream: its stream sequence, subject, headers the store reads, and payload.
struct NATSStreamMessage: Sendable {
    let sequence: UInt64
    let subject: String
    let headers: [String: String]
    let body: [UInt8]
}

/// Some of a stream's settings as JetStream has them (for tests).
struct NATSStreamSettings: Sendable, Equatable {
    /// The message age limit in nanoseconds (0: none).
    let maxAge: Int64
    let replicas: Int64
    let allowsDirect: Bool
}

/// What a publish expects the subject's last stream sequence to be: the fence (0: no message on the subject yet).
struct NATSExpectation: Sendable {
    let lastSubjectSequence: UInt64
}

/// The connection to NATS, its JetStream context and the store's key-value bucket: the nats.c handles, and the few
/// calls the store makes with them, each turning nats.c's status into a ``SessionStoreError``.
///
/// nats.c's calls are safe from any thread. The handles stay valid until ``close()``, which the store calls only once
/// no call of its own is under way (see NATSSessionStore's `activeCalls`).
final class NATSClient: @unchecked Sendable {
    // @unchecked Sendable: the handles are set once in `init` and destroyed once in `close()`, after every user
    // is done (the store counts its calls); nats.c's own calls are thread-safe.
    private var connection: OpaquePointer?
    private var jetStream: OpaquePointer?
    private var bucket: OpaquePointer?
    /// The log stream's name (`MVVMR_SESSIONS`).
    let streamName: String
    /// The key-value bucket's name (`MVVMR_ACTIVITY`) and its stream's (`KV_MVVMR_ACTIVITY`).
    let bucketName: String
    let bucketStreamName: String
    /// How long a publish or a request waits for its answer, in milliseconds.
    let waitMilliseconds: Int64
    private let subjects: String
    private let replicas: Int
    private let bucketTimeToLiveSeconds: Int64
    /// Whether the stream and the bucket are made (and `bucket` set): once, on the first call while connected.
    private let setUp = Locked(false)
    /// The core NATS subscription of the ownership notices, once made.
    private let subscription = Locked(SubscriptionHandle())

    /// Connects to `servers` (reconnecting forever after a loss), and makes the log stream and the bucket when missing.
    /// - Parameters:
    ///   - servers: `nats://host:port` URLs.
    ///   - streamName: the log stream; `subjects` its subjects.
    ///   - subjects: the stream's subject filter (`mvvmr.session.*.log`).
    ///   - bucketName: the key-value bucket of the sessions' last activity.
    ///   - replicas: the stream's and the bucket's replica count.
    ///   - bucketTimeToLiveSeconds: how long a key lives after its last write.
    ///   - waitMilliseconds: how long a publish or request waits.
    ///   - router: where asynchronous publishes' acknowledgements go.
    init(
        servers: [String], streamName: String, subjects: String, bucketName: String, replicas: Int,
        bucketTimeToLiveSeconds: Int64, waitMilliseconds: Int64, router: NATSAckRouter
    ) throws(SessionStoreError) {
        self.streamName = streamName
        self.bucketName = bucketName
        bucketStreamName = "KV_" + bucketName
        self.waitMilliseconds = waitMilliseconds
        connection = try Self.connect(to: servers, name: "mvvmr-session-store")
        self.subjects = subjects
        self.replicas = replicas
        self.bucketTimeToLiveSeconds = bucketTimeToLiveSeconds
        do throws(SessionStoreError) {
            var jsOptions = jsOptions()
            jsOptions_Init(&jsOptions)
            jsOptions.Wait = waitMilliseconds
            // The store bounds what it has in flight itself; the library's own bound must never make a publish wait.
            jsOptions.PublishAsync.MaxPending = 1 << 20
            jsOptions.PublishAsync.AckHandler = natsAckHandler
            jsOptions.PublishAsync.AckHandlerClosure = Unmanaged.passRetained(router).toOpaque()
            try Self.check(natsConnection_JetStream(&jetStream, connection, &jsOptions), "cannot open JetStream")
            // Connected: make them now, so that a server without JetStream (or refusing the stream) fails the start.
            if isConnected { try ensureReady() }
        } catch {
            close()
            throw error
        }
    }

    deinit {
        close()
    }

    /// Opens a connection to `servers` that reconnects forever (every half second, with nats.c's jitter), fails
    /// requests at once when the link drops rather than let them wait for their timeout, notices a silent peer within
    /// 20 seconds, and opens even while no server can be reached: nats.c goes on trying in the background (the store
    /// answers `unavailable` meanwhile, and makes the stream and the bucket on its first call once connected).
    /// - Parameters:
    ///   - servers: `nats://host:port` URLs.
    ///   - name: the connection's name, as the servers show it.
    /// - Returns: the connection handle; the caller closes and destroys it.
    static func connect(to servers: [String], name: String) throws(SessionStoreError) -> OpaquePointer? {
        var options: OpaquePointer?
        try check(natsOptions_Create(&options), "cannot create the NATS options")
        defer { natsOptions_Destroy(options) }
        var copies = servers.map { strdup($0) }
        defer { for copy in copies { free(copy) } }
        let set: natsStatus = copies.withUnsafeMutableBufferPointer { buffer in
            buffer.withMemoryRebound(to: UnsafePointer<CChar>?.self) { servers in
                natsOptions_SetServers(options, servers.baseAddress, Int32(servers.count))
            }
        }
        try check(set, "bad NATS server list \(servers)")
        natsOptions_SetAllowReconnect(options, true)
        natsOptions_SetMaxReconnect(options, -1)
        natsOptions_SetReconnectWait(options, 500)
        natsOptions_SetTimeout(options, 2_000)
        natsOptions_SetFailRequestsOnDisconnect(options, true)
        natsOptions_SetPingInterval(options, 10_000)
        natsOptions_SetMaxPingsOut(options, 2)
        natsOptions_SetName(options, name)
        natsOptions_SetRetryOnFailedConnect(options, true, natsConnected, nil)
        var connection: OpaquePointer?
        let connected = natsConnection_Connect(&connection, options)
        guard connected == NATS_OK || connected == NATS_NOT_YET_CONNECTED else {
            throw failure(connected, nil, "cannot connect to NATS at \(servers.joined(separator: ","))")
        }
        return connection
    }

    /// Whether the connection is up now (not reconnecting, not closed).
    var isConnected: Bool {
        guard let connection else { return false }
        return natsConnection_Status(connection) == NATS_CONN_STATUS_CONNECTED
    }

    /// Whether the connection is up and the stream and the bucket are there (made now when they are not yet).
    var isReady: Bool {
        guard isConnected else { return false }
        do throws(SessionStoreError) {
            try ensureReady()
            return true
        } catch {
            return false
        }
    }

    /// Makes the stream and the bucket unless made already; throws `unavailable` while not connected. Every call
    /// that uses JetStream goes through it (a check of a flag once they are made).
    func ensureReady() throws(SessionStoreError) {
        try setUp.withLock { (done: inout Bool) throws(SessionStoreError) in
            if done { return }
            guard isConnected else { throw SessionStoreError(.unavailable, "NATS is not connected") }
            try makeStream(subjects: subjects, replicas: replicas)
            try makeBucket(replicas: replicas, timeToLiveSeconds: bucketTimeToLiveSeconds)
            done = true
        }
    }

    /// Subscribes to core NATS `subject` (a wildcard is fine): each message's subject and payload go to `router`, on a
    /// nats.c thread, at most once (core NATS keeps nothing for a node that is away). One subscription per client;
    /// nats.c resubscribes by itself after a reconnect.
    func subscribe(_ subject: String, router: NATSMessageRouter) throws(SessionStoreError) {
        guard let connection else { throw SessionStoreError(.unavailable, "closed") }
        try subscription.withLock { (handle: inout SubscriptionHandle) throws(SessionStoreError) in
            guard handle.pointer == nil else { return }
            var made: OpaquePointer?
            let closure = Unmanaged.passRetained(router).toOpaque()
            try Self.check(natsConnection_Subscribe(&made, connection, subject, natsMessageHandler, closure), "cannot subscribe to \(subject)")
            handle.pointer = made
        }
    }

    /// Publishes `payload` on core NATS `subject`, without waiting and without a guarantee (a notice, not a record).
    /// - Returns: whether nats.c took it.
    @discardableResult
    func publishNotice(_ subject: String, _ payload: [UInt8]) -> Bool {
        guard let connection else { return false }
        return payload.withUnsafeBytes { bytes in
            natsConnection_Publish(connection, subject, bytes.baseAddress, Int32(bytes.count)) == NATS_OK
        }
    }

    /// Closes the connection and frees the handles. Once only; no other call may run meanwhile or later.
    func close() {
        subscription.withLock { handle in
            if let pointer = handle.pointer {
                natsSubscription_Unsubscribe(pointer)
                natsSubscription_Destroy(pointer)
            }
            handle.pointer = nil
        }
        if let bucket { kvStore_Destroy(bucket) }
        bucket = nil
        if let jetStream { jsCtx_Destroy(jetStream) }
        jetStream = nil
        if let connection {
            natsConnection_Close(connection)
            natsConnection_Destroy(connection)
        }
        connection = nil
    }

    // MARK: - Setup

    /// How many times making the stream or the bucket is asked when JetStream's answer times out: several nodes
    /// starting at once each ask for the same replicated stream, and on a loaded machine its placement can take
    /// longer than one wait (the ask is idempotent: a stream made meanwhile is used as it is).
    private static let setUpAttempts = 3

    /// Calls `ask` until it does not time out, at most ``setUpAttempts`` times; returns its last status.
    private static func askedUntilAnswered(_ ask: () -> natsStatus) -> natsStatus {
        var status = ask()
        for _ in 1..<setUpAttempts where status == NATS_TIMEOUT { status = ask() }
        return status
    }

    private func makeStream(subjects: String, replicas: Int) throws(SessionStoreError) {
        var config = jsStreamConfig()
        jsStreamConfig_Init(&config)
        var code = jsErrCode(0)
        let status: natsStatus = Self.askedUntilAnswered { streamName.withCString { name in
            subjects.withCString { subject in
                var list: [UnsafePointer<CChar>?] = [subject]
                return list.withUnsafeMutableBufferPointer { list in
                    config.Name = name
                    config.Subjects = list.baseAddress
                    config.SubjectsLen = 1
                    config.Storage = js_FileStorage
                    config.Replicas = Int64(replicas)
                    return js_AddStream(nil, jetStream, &config, nil, &code)
                }
            }
        } }
        // A stream of that name made by another node, or earlier with other settings, is used as it is.
        if status == NATS_OK || code == JSStreamNameExistErr { return }
        throw Self.failure(status, code, "cannot create the stream \(streamName)")
    }

    private func makeBucket(replicas: Int, timeToLiveSeconds: Int64) throws(SessionStoreError) {
        var config = kvConfig()
        kvConfig_Init(&config)
        let status: natsStatus = Self.askedUntilAnswered { bucketName.withCString { name in
            config.Bucket = name
            config.History = 1
            config.TTL = timeToLiveSeconds * 1_000_000_000
            config.Replicas = Int32(replicas)
            config.StorageType = js_FileStorage
            return js_CreateKeyValue(&bucket, jetStream, &config)
        } }
        if status == NATS_OK { return }
        // Made already (by another node, or with other settings): bind to it as it is.
        try Self.check(js_KeyValue(&bucket, jetStream, bucketName), "cannot create or open the bucket \(bucketName)")
    }

    // MARK: - Publishing

    /// Makes a message; the caller owns it (``publishAsync(_:expecting:)`` or ``publish(_:expecting:)`` take it).
    static func message(subject: String, headers: [(String, String)], body: [UInt8]) throws(SessionStoreError) -> OpaquePointer {
        var message: OpaquePointer?
        let status: natsStatus = body.withUnsafeBufferPointer { bytes in
            bytes.withMemoryRebound(to: CChar.self) { bytes in
                natsMsg_Create(&message, subject, nil, bytes.baseAddress, Int32(bytes.count))
            }
        }
        guard status == NATS_OK, let message else { throw failure(status, nil, "cannot make a message") }
        for (key, value) in headers {
            let set = natsMsgHeader_Set(message, key, value)
            guard set == NATS_OK else {
                natsMsg_Destroy(message)
                throw failure(set, nil, "cannot set the header \(key)")
            }
        }
        return message
    }

    /// Publishes `message` without waiting; its acknowledgement (or failure, timeout included) reaches the router's
    /// receiver with the message's address. On success the library owns the message (and destroys it after the
    /// acknowledgement); on failure (thrown) no acknowledgement comes and the caller still owns it: it must forget
    /// the address first and destroy the message after (another message could be made at that address at once).
    func publishAsync(_ message: OpaquePointer, expecting expectation: NATSExpectation?) throws(SessionStoreError) {
        try ensureReady()
        var options = publishOptions(expectation)
        var owned: OpaquePointer? = message
        let status = js_PublishMsgAsync(jetStream, &owned, &options)
        if status != NATS_OK { throw Self.failure(status, nil, "cannot publish") }
    }

    /// Publishes `message` and waits for its acknowledgement; returns its stream sequence. Destroys the message.
    func publish(_ message: OpaquePointer, expecting expectation: NATSExpectation?) throws(SessionStoreError) -> UInt64 {
        defer { natsMsg_Destroy(message) }
        try ensureReady()
        var options = publishOptions(expectation)
        var ack: UnsafeMutablePointer<jsPubAck>?
        var code = jsErrCode(0)
        let status = js_PublishMsg(&ack, jetStream, message, &options, &code)
        defer { jsPubAck_Destroy(ack) }
        guard status == NATS_OK, let ack else { throw Self.failure(status, code, "cannot publish") }
        return ack.pointee.Sequence
    }

    private func publishOptions(_ expectation: NATSExpectation?) -> jsPubOptions {
        var options = jsPubOptions()
        jsPubOptions_Init(&options)
        options.MaxWait = waitMilliseconds
        if let expectation {
            if expectation.lastSubjectSequence == 0 {
                options.ExpectNoMessage = true
            } else {
                options.ExpectLastSubjectSeq = expectation.lastSubjectSequence
            }
        }
        return options
    }

    // MARK: - Reading

    /// The last message on `subject` in the log stream, or nil when the subject has none. Asked of the stream's leader
    /// (not a direct get, which a lagging replica may answer): it is where the fence stands, and it must include every
    /// acknowledged write.
    func lastMessage(on subject: String) throws(SessionStoreError) -> NATSStreamMessage? {
        try ensureReady()
        var message: OpaquePointer?
        var code = jsErrCode(0)
        let status = js_GetLastMsg(&message, jetStream, streamName, subject, nil, &code)
        defer { natsMsg_Destroy(message) }
        if status == NATS_NOT_FOUND || code == JSNoMessageFoundErr { return nil }
        guard status == NATS_OK, let message else { throw Self.failure(status, code, "cannot read the last message of \(subject)") }
        var sequence = natsMsg_GetSequence(message)
        if sequence == 0, let header = Self.header(message, "Nats-Sequence") { sequence = UInt64(header) ?? 0 }
        return Self.streamMessage(message, sequence: sequence)
    }

    /// Every message on `subject` in the log stream, in stream order, up to the one at sequence `last`: one message get
    /// each, asked of the stream's leader (see ``NATSMessageGet``), about 0.4 ms a message on loopback (an ordered
    /// consumer streams them ten times faster, but may never deliver after a leader change). When the messages up to
    /// `last` change meanwhile (a snapshot purged them), the last one returned is not at `last`.
    func logMessages(on subject: String, through last: UInt64) throws(SessionStoreError) -> [NATSStreamMessage] {
        try ensureReady()
        var read: [NATSStreamMessage] = []
        var next: UInt64 = 1
        while next <= last, let message = try nextMessage(in: streamName, on: subject, from: next), message.sequence <= last {
            // A server that ignored `next_by_subj` (older than 2.9) would answer with any subject's message.
            guard message.subject == subject, message.sequence >= next else {
                throw SessionStoreError(.unavailable, "cannot read \(subject): the stream answered with another message")
            }
            read.append(message)
            next = message.sequence + 1
        }
        return read
    }

    /// The first message on `subject` in `stream` at or after sequence `start`, or nil when there is none.
    func nextMessage(in stream: String, on subject: String, from start: UInt64) throws(SessionStoreError) -> NATSStreamMessage? {
        let body = NATSMessageGet.request(subject: subject, from: start)
        var reply: OpaquePointer?
        let status: natsStatus = body.withUnsafeBytes { bytes in
            natsConnection_Request(
                &reply, connection, "$JS.API.STREAM.MSG.GET." + stream, bytes.baseAddress, Int32(bytes.count),
                waitMilliseconds)
        }
        defer { natsMsg_Destroy(reply) }
        guard status == NATS_OK, let reply else { throw Self.failure(status, nil, "cannot read \(subject)") }
        let length = Int(natsMsg_GetDataLength(reply))
        let answer: [UInt8] = natsMsg_GetData(reply).map { Array(UnsafeRawBufferPointer(start: $0, count: length)) } ?? []
        return try NATSMessageGet.message(fromAnswer: answer, asked: subject)
    }

    /// Every message on `filter` in `stream`, in stream order, read with an ordered consumer: up to the one at
    /// sequence `last` when given, else until the consumer has none pending. (When the messages up to `last` change
    /// meanwhile, the last one returned is not at `last`.) Used for the activity bucket, read whole by the sweep,
    /// and for a long session log (see ``logMessages(on:through:)``).
    /// - Parameter wait: how long making the consumer, and each message, may take (milliseconds; the store's wait
    ///   when nil).
    func messages(
        in stream: String, on filter: String, through last: UInt64?, wait: Int64? = nil
    ) throws(SessionStoreError) -> [NATSStreamMessage] {
        try ensureReady()
        let waitMilliseconds = wait ?? self.waitMilliseconds
        var subscription: OpaquePointer?
        var options = jsSubOptions()
        jsSubOptions_Init(&options)
        var contextOptions = jsOptions()
        jsOptions_Init(&contextOptions)
        contextOptions.Wait = waitMilliseconds
        var code = jsErrCode(0)
        let status: natsStatus = stream.withCString { stream in
            options.Stream = stream
            options.Ordered = true
            options.Config.DeliverPolicy = js_DeliverAll
            return js_SubscribeSync(&subscription, jetStream, filter, &contextOptions, &options, &code)
        }
        guard status == NATS_OK, let subscription else { throw Self.failure(status, code, "cannot read \(filter)") }
        defer {
            natsSubscription_Unsubscribe(subscription)
            natsSubscription_Destroy(subscription)
        }
        if last == nil {
            // Nothing at all pending: no message would come, so do not wait for one.
            var info: UnsafeMutablePointer<jsConsumerInfo>?
            let asked = natsSubscription_GetConsumerInfo(&info, subscription, nil, &code)
            defer { jsConsumerInfo_Destroy(info) }
            guard asked == NATS_OK, let info else { throw Self.failure(asked, code, "cannot read \(filter)") }
            // (Messages may already be on their way: then the consumer has delivered some.)
            if info.pointee.NumPending == 0 && info.pointee.Delivered.Consumer == 0 { return [] }
        }
        var read: [NATSStreamMessage] = []
        while true {
            var message: OpaquePointer?
            let next = natsSubscription_NextMsg(&message, subscription, waitMilliseconds)
            defer { natsMsg_Destroy(message) }
            guard next == NATS_OK, let message else { throw Self.failure(next, nil, "cannot read \(filter)") }
            var metadata: UnsafeMutablePointer<jsMsgMetaData>?
            guard natsMsg_GetMetaData(&metadata, message) == NATS_OK, let metadata else {
                throw SessionStoreError(.unavailable, "a message of \(filter) without JetStream metadata")
            }
            let sequence = metadata.pointee.Sequence.Stream
            let pending = metadata.pointee.NumPending
            jsMsgMetaData_Destroy(metadata)
            // Past `last`, or nothing more to come before it: the message at `last` is gone (purged by a snapshot or a
            // deletion while this read), and the caller, seeing its last message is not at `last`, reads again.
            if let last, sequence > last { break }
            read.append(Self.streamMessage(message, sequence: sequence))
            if let last, sequence >= last { break }
            if pending == 0 { break }
        }
        return read
    }

    /// How many messages `stream` holds.
    func messageCount(of stream: String) throws(SessionStoreError) -> UInt64 {
        try ensureReady()
        var info: UnsafeMutablePointer<jsStreamInfo>?
        var code = jsErrCode(0)
        let status = js_GetStreamInfo(&info, jetStream, stream, nil, &code)
        defer { jsStreamInfo_Destroy(info) }
        guard status == NATS_OK, let info else { throw Self.failure(status, code, "cannot read the stream \(stream)") }
        return info.pointee.State.Msgs
    }

    /// A stream's settings that the store chooses: its message age limit (nanoseconds; 0: none), replicas and
    /// whether it allows direct gets (for tests).
    func settings(of stream: String) throws(SessionStoreError) -> NATSStreamSettings {
        try ensureReady()
        var info: UnsafeMutablePointer<jsStreamInfo>?
        var code = jsErrCode(0)
        let status = js_GetStreamInfo(&info, jetStream, stream, nil, &code)
        defer { jsStreamInfo_Destroy(info) }
        guard status == NATS_OK, let info, let config = info.pointee.Config else {
            throw Self.failure(status, code, "cannot read the stream \(stream)")
        }
        return NATSStreamSettings(
            maxAge: config.pointee.MaxAge, replicas: config.pointee.Replicas, allowsDirect: config.pointee.AllowDirect)
    }

    /// Removes the messages on `subject` from `stream`, those before sequence `before` only when given.
    func purge(_ stream: String, subject: String, before: UInt64? = nil) throws(SessionStoreError) {
        try ensureReady()
        var options = jsOptions()
        jsOptions_Init(&options)
        var code = jsErrCode(0)
        let status: natsStatus = subject.withCString { subject in
            options.Stream.Purge.Subject = subject
            if let before { options.Stream.Purge.Sequence = before }
            return js_PurgeStream(jetStream, stream, &options, &code)
        }
        if status != NATS_OK { throw Self.failure(status, code, "cannot purge \(subject)") }
    }

    // MARK: - The bucket

    /// The value of `key` and its revision, or nil when the bucket has no such key.
    func value(of key: String) throws(SessionStoreError) -> (value: [UInt8], revision: UInt64)? {
        try ensureReady()
        var entry: OpaquePointer?
        let status = kvStore_Get(&entry, bucket, key)
        defer { kvEntry_Destroy(entry) }
        if status == NATS_NOT_FOUND { return nil }
        guard status == NATS_OK, let entry else { throw Self.failure(status, nil, "cannot read the key \(key)") }
        let count = Int(kvEntry_ValueLen(entry))
        var value: [UInt8] = []
        if count > 0, let bytes = kvEntry_Value(entry) {
            value = Array(UnsafeRawBufferPointer(start: bytes, count: count))
        }
        return (value, kvEntry_Revision(entry))
    }

    /// Sets `key` to `value` if its revision is still `revision` (compare-and-set); false when it is not.
    func update(_ key: String, to value: [UInt8], ifRevision revision: UInt64) throws(SessionStoreError) -> Bool {
        try ensureReady()
        var newRevision: UInt64 = 0
        let status: natsStatus = value.withUnsafeBytes { bytes in
            kvStore_Update(&newRevision, bucket, key, bytes.baseAddress, Int32(bytes.count), revision)
        }
        if status == NATS_OK { return true }
        if isConnected && status == NATS_ERR { return false }  // the revision moved on (JetStream's wrong last sequence)
        throw Self.failure(status, nil, "cannot update the key \(key)")
    }

    // MARK: - Messages and errors

    /// The value of a header of `message`, or nil.
    static func header(_ message: OpaquePointer, _ key: String) -> String? {
        var value: UnsafePointer<CChar>?
        guard natsMsgHeader_Get(message, key, &value) == NATS_OK, let value else { return nil }
        return String(cString: value)
    }

    private static let readHeaders = ["Mvvmr-Kind", "Mvvmr-Number", "Mvvmr-Last", "Mvvmr-Floor"]

    private static func streamMessage(_ message: OpaquePointer, sequence: UInt64) -> NATSStreamMessage {
        var headers: [String: String] = [:]
        for key in readHeaders {
            if let value = header(message, key) { headers[key] = value }
        }
        let count = Int(natsMsg_GetDataLength(message))
        var body: [UInt8] = []
        if count > 0, let data = natsMsg_GetData(message) {
            body = Array(UnsafeRawBufferPointer(start: data, count: count))
        }
        let subject = natsMsg_GetSubject(message).map { String(cString: $0) } ?? ""
        return NATSStreamMessage(sequence: sequence, subject: subject, headers: headers, body: body)
    }

    static func check(_ status: natsStatus, _ doing: String) throws(SessionStoreError) {
        if status != NATS_OK { throw failure(status, nil, doing) }
    }

    /// nats.c's failure in the store's terms: a refused fence (JetStream's "wrong last sequence") is `outOfOrder`,
    /// anything else `unavailable`, with nats.c's words.
    static func failure(_ status: natsStatus, _ code: jsErrCode?, _ doing: String, text: String? = nil) -> SessionStoreError {
        if let code, code == JSStreamWrongLastSequenceErr {
            return SessionStoreError(.outOfOrder, "\(doing): another writer appended to the session (JetStream: wrong last sequence)")
        }
        var words = String(cString: natsStatus_GetText(status))
        if let text, !text.isEmpty { words += ": " + text }
        if let code, code.rawValue != 0 { words += " (JetStream error \(code.rawValue))" }
        return SessionStoreError(.unavailable, "\(doing): \(words)")
    }
}

/// Told by nats.c when a connection that could not be made at first is made (the store needs nothing then: the stream
/// and the bucket are made on its next call).
private let natsConnected: natsConnectionHandler = { _, _ in }

/// nats.c's handler of core subscriptions whose closure is a ``NATSMessageRouter`` (never released).
let natsMessageHandler: natsMsgHandler = { _, _, message, closure in
    defer { natsMsg_Destroy(message) }
    guard let message, let closure, let subject = natsMsg_GetSubject(message) else { return }
    let router = Unmanaged<NATSMessageRouter>.fromOpaque(closure).takeUnretainedValue()
    let length = Int(natsMsg_GetDataLength(message))
    let payload: [UInt8] = natsMsg_GetData(message).map { Array(UnsafeRawBufferPointer(start: $0, count: length)) } ?? []
    router.deliver(subject: String(cString: subject), payload: payload)
}

/// nats.c's handler of asynchronous publishes' acknowledgements (see ``NATSAckRouter``).
private let natsAckHandler: jsPubAckHandler = { _, message, ack, failure, closure in
    defer { natsMsg_Destroy(message) }
    guard let message, let closure else { return }
    let router = Unmanaged<NATSAckRouter>.fromOpaque(closure).takeUnretainedValue()
    guard let receiver = router.receiver else { return }
    let outcome: NATSAck
    if let ack {
        outcome = .stored(sequence: ack.pointee.Sequence)
    } else if let failure {
        let text = failure.pointee.ErrText.map { String(cString: $0) }
        outcome = .failed(NATSClient.failure(failure.pointee.Err, failure.pointee.ErrCode, "publish", text: text))
    } else {
        outcome = .failed(SessionStoreError(.unavailable, "publish: no acknowledgement"))
    }
    receiver.acknowledged(message: UInt(bitPattern: message), outcome)
}
