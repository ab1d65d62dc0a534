import JSONPatch

/// The actions of one page, as its View declares them: each declaration is a signal of the action's
/// decoded values. `Action` is the View's action type (see ``PageAction``), so only its cases can be declared.
///
/// ```swift
/// LoginInput(
///     username: actions.signal(.username, of: String.self),
///     form: actions.signal(.add, of: NewItem.self),   // any Decodable
///     submit: actions.signal(.submit))
/// ```
public final class Actions<Action: PageAction> {
    let registry: ActionRegistry
    /// Prepended to every declared name: a part's actions are named `part.action`.
    let prefix: String

    init(registry: ActionRegistry, prefix: String) {
        self.registry = registry
        self.prefix = prefix
    }

    /// Declares an action without a value and returns the signal of its occurrences.
    /// - Parameter action: the action.
    public func signal(_ action: Action) -> Signal<Void> {
        let relay = Relay<Void>()
        registry.declare(prefix + action.actionName, valueType: .none) { _ in relay.accept(()) }
        return relay.signal
    }

    /// Declares an action whose value is a JSON scalar, object or array read as `Value`, and returns the
    /// signal of its values.
    /// - Parameters:
    ///   - action: the action.
    ///   - type: the Swift type of its value; its `actionValueType` is what clients must send.
    public func signal<Value: ActionValue>(_ action: Action, of type: Value.Type) -> Signal<Value> {
        let relay = Relay<Value>()
        registry.declare(prefix + action.actionName, valueType: Value.actionValueType) { json in
            Value.decode(actionValue: json, into: relay.accept)
        }
        return relay.signal
    }

    /// Declares an action whose value is any `Decodable` (a struct from a form, an enum of choices), and
    /// returns the signal of its decoded values. A value that does not decode is refused (`invalid_value`)
    /// and changes nothing; the unit's schema (`/api/openapi.json`) describes what decodes.
    /// - Parameters:
    ///   - action: the action.
    ///   - type: the value's type.
    @_disfavoredOverload
    public func signal<Value: Decodable>(_ action: Action, of type: Value.Type) -> Signal<Value> {
        let relay = Relay<Value>()
        let schema = JSONSchema.of(Value.self)
        registry.declare(
            prefix + action.actionName, valueType: schema.actionValueType, schema: schema.document,
            validate: { (try? JSONValueDecoder().decode(Value.self, from: $0)) != nil }
        ) { json in
            if let value = try? JSONValueDecoder().decode(Value.self, from: json) { relay.accept(value) }
        }
        return relay.signal
    }

    /// Declares a string action whose values have at most `maxLength` characters (`Character`s, as a person counts
    /// them), and returns the signal of its values. A longer value is refused like a value of the wrong type
    /// (`invalid_value`) and changes nothing.
    /// - Parameters:
    ///   - action: the action.
    ///   - type: `String.self`.
    ///   - maxLength: the most characters a value may have.
    public func signal(_ action: Action, of type: String.Type, maxLength: Int) -> Signal<String> {
        let relay = Relay<String>()
        // The schema states no `maxLength`: JSON Schema counts code points, the limit counts characters (a string
        // within the limit may have more code points), and a schema must never refuse what the server takes.
        registry.declare(prefix + action.actionName, valueType: .string, maxLength: max(0, maxLength)) { json in
            if let value = json.stringValue { relay.accept(value) }
        }
        return relay.signal
    }
}
