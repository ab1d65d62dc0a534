import JSONPatch

/// A Swift type an action's JSON value decodes into: `actions.signal("username", of: String.self)`.
public protocol ActionValue {
    /// The JSON type clients must send.
    static var actionValueType: ActionValueType { get }
    /// Decodes a value already checked against `actionValueType`; nil if it does not fit after all.
    /// - Parameter json: the action's value.
    init?(actionValue json: JSONValue)
    /// Decodes `json` (as `init(actionValue:)` does) and hands the value to `accept`; hands nothing over when it
    /// does not fit. The default is right for every type: it exists so that the code declaring an action, generic
    /// over the value's type, calls code specialized for that type (naming `Optional<Value>` in generic code looks
    /// its metadata up at every action, some 500 instructions).
    /// - Parameters:
    ///   - json: the action's value.
    ///   - accept: receives the decoded value.
    static func decode(actionValue json: JSONValue, into accept: (Self) -> Void)
}

extension ActionValue {
    /// Decodes `json` with `init(actionValue:)` and hands the value to `accept`, if it fits.
    /// - Parameters:
    ///   - json: the action's value.
    ///   - accept: receives the decoded value.
    public static func decode(actionValue json: JSONValue, into accept: (Self) -> Void) {
        if let value = Self(actionValue: json) { accept(value) }
    }
}

extension String: ActionValue {
    /// Strings are sent as JSON strings.
    public static var actionValueType: ActionValueType { .string }
    /// Decodes a JSON string.
    public init?(actionValue json: JSONValue) {
        guard case .string(let value) = json else { return nil }
        self = value
    }
}

extension Int: ActionValue {
    /// Ints are sent as JSON numbers without a fraction.
    public static var actionValueType: ActionValueType { .int }
    /// Decodes a JSON number without a fraction.
    public init?(actionValue json: JSONValue) {
        // One rule for every JSON number read as an Int: JSONValue.intValue's (it refuses both ends alike).
        guard let exact = json.intValue else { return nil }
        self = exact
    }
}

extension Double: ActionValue {
    /// Doubles are sent as any JSON number.
    public static var actionValueType: ActionValueType { .number }
    /// Decodes a JSON number.
    public init?(actionValue json: JSONValue) {
        switch json {
        case .int(let value): self = Double(value)
        case .double(let value): self = value
        default: return nil
        }
    }
}

extension Bool: ActionValue {
    /// Bools are sent as `true` or `false`.
    public static var actionValueType: ActionValueType { .bool }
    /// Decodes a JSON bool.
    public init?(actionValue json: JSONValue) {
        guard case .bool(let value) = json else { return nil }
        self = value
    }
}

extension JSONObject: ActionValue {
    /// Objects are sent as JSON objects.
    public static var actionValueType: ActionValueType { .object }
    /// Takes a JSON object as it is.
    public init?(actionValue json: JSONValue) {
        guard case .object(let value) = json else { return nil }
        self = value
    }
}

extension Array: ActionValue where Element == JSONValue {
    /// Arrays are sent as JSON arrays.
    public static var actionValueType: ActionValueType { .array }
    /// Takes a JSON array as it is.
    public init?(actionValue json: JSONValue) {
        guard case .array(let value) = json else { return nil }
        self = value
    }
}
