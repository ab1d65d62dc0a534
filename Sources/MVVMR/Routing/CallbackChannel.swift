import JSONPatch

/// Where callback values for one page arrive when the page above it goes back with a value.
///
/// The relay behind it is made only when the ViewModel asks for its callbacks: most pages never
/// do, and an idle page should not pay for a stream it does not use.
final class CallbackChannel {
    private var relay: Relay<JSONValue>?

    /// The callback values, as JSON, made on first use.
    var signal: Signal<JSONValue> {
        if let relay { return relay.signal }
        let created = Relay<JSONValue>()
        relay = created
        return created.signal
    }

    /// Hands `value` to the page's ViewModel, if it listens.
    func deliver(_ value: JSONValue) {
        relay?.accept(value)
    }
}
