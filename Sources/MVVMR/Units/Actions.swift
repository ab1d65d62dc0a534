import JSONPatch

/// The actions of one page, as its View declares them: each declaration is a signal of the action's
/// decoded values.
///
/// ```swift
/// GreetingInput(
///     showGreeting: actions.signal("showGreeting"),
///     username: actions.signal("username", of: String.self))
/// ```
public final class Actions {
    let registry: ActionRegistry
    /// Prepended to every declared name: a part's actions are named `part.action`.
    let prefix: String

    init(registry: ActionRegistry, prefix: String) {
        self.registry = registry
        self.prefix = prefix
    }

    /// Declares an action without a value and returns the signal of its occurrences.
    /// - Parameter name: the action's name within this View.
    public func signal(_ name: String) -> Signal<Void> {
        let relay = Relay<Void>()
        registry.declare(prefix + name, valueType: .none) { _ in relay.accept(()) }
        return relay.signal
    }

    /// Declares an action whose value decodes into `Value`, and returns the signal of its values.
    /// - Parameters:
    ///   - name: the action's name within this View.
    ///   - type: the Swift type of its value; its `actionValueType` is what clients must send.
    public func signal<Value: ActionValue>(_ name: String, of type: Value.Type) -> Signal<Value> {
        let relay = Relay<Value>()
        registry.declare(prefix + name, valueType: Value.actionValueType) { json in
            if let value = Value(actionValue: json) { relay.accept(value) }
        }
        return relay.signal
    }

    /// Declares a string action whose values have at most `maxLength` characters (`Character`s, as a person counts
    /// them), and returns the signal of its values. A longer value is refused like a value of the wrong type
    /// (`invalid_value`) and changes nothing.
    /// - Parameters:
    ///   - name: the action's name within this View.
    ///   - type: `String.self`.
    ///   - maxLength: the most characters a value may have.
    public func signal(_ name: String, of type: String.Type, maxLength: Int) -> Signal<String> {
        let relay = Relay<String>()
        registry.declare(prefix + name, valueType: .string, maxLength: max(0, maxLength)) { json in
            if let value = json.stringValue { relay.accept(value) }
        }
        return relay.signal
    }
}
