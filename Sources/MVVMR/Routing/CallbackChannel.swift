/// Where callback values for one page arrive when the page above it goes back with a value.
///
/// The relay behind it is made only when the ViewModel asks for its callbacks: most pages never
/// do, and an idle page should not pay for a stream it does not use.
final class CallbackChannel {
    private var relay: Relay<Any>?

    /// The callback values, made on first use.
    var signal: Signal<Any> {
        if let relay { return relay.signal }
        let created = Relay<Any>()
        relay = created
        return created.signal
    }

    /// Hands `value` to the page's ViewModel, if it listens.
    func deliver(_ value: Any) {
        relay?.accept(value)
    }
}
