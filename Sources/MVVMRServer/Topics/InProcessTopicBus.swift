import Locking

/// The topic bus of a single node: every subscriber in this process gets each message once, in publish order.
///
/// Messages are queued by `publish` and handed to the handlers by one task of the bus, one message at a time:
/// a publisher never runs a subscriber's code (nor waits for it), and every subscriber sees the messages in the
/// same order. Handlers subscribed when a message is delivered receive it.
public final class InProcessTopicBus: TopicBus {
    private struct Handler {
        let id: Int
        let deliver: @Sendable ([UInt8]) -> Void
    }

    private struct State {
        var handlers: [String: [Handler]] = [:]
        var nextID = 0
    }

    private struct Message {
        let topic: String
        let payload: [UInt8]
    }

    private let state: Locked<State>
    private let queue: AsyncStream<Message>.Continuation

    /// A bus with no subscriber.
    public init() {
        let state = Locked(State())
        let (stream, queue) = AsyncStream<Message>.makeStream()
        self.state = state
        self.queue = queue
        // One consumer: deliveries run one at a time, in publish order. It ends when the bus goes.
        Task.detached {
            for await message in stream {
                let handlers = state.withLock { $0.handlers[message.topic] ?? [] }
                for handler in handlers { handler.deliver(message.payload) }
            }
        }
    }

    deinit {
        queue.finish()
    }

    /// Queues `payload` for every handler of `topic`.
    /// - Parameters:
    ///   - payload: the message's bytes.
    ///   - topic: the topic's name.
    public func publish(_ payload: [UInt8], on topic: String) {
        queue.yield(Message(topic: topic, payload: payload))
    }

    /// Adds `handler` for `topic`.
    /// - Parameters:
    ///   - topic: the topic's name.
    ///   - handler: receives each message's bytes, on the bus's task.
    /// - Returns: what ends the subscription.
    public func subscribe(to topic: String, handler: @escaping @Sendable ([UInt8]) -> Void) -> TopicBusSubscription {
        state.withLock { state in
            let id = state.nextID
            state.nextID += 1
            state.handlers[topic, default: []].append(Handler(id: id, deliver: handler))
            return TopicBusSubscription(topic: topic, id: id)
        }
    }

    /// Removes the handler of `subscription`.
    /// - Parameter subscription: the subscription.
    public func unsubscribe(_ subscription: TopicBusSubscription) {
        state.withLock { state in
            state.handlers[subscription.topic]?.removeAll { $0.id == subscription.id }
            if state.handlers[subscription.topic]?.isEmpty == true { state.handlers[subscription.topic] = nil }
        }
    }

    /// How many handlers are subscribed to `topic` (tests).
    /// - Parameter topic: the topic's name.
    public func subscriberCount(of topic: String) -> Int {
        state.withLock { $0.handlers[topic]?.count ?? 0 }
    }
}
