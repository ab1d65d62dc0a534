import JSONPatch

/// Why the session refused a request or could not bind a page; it changes nothing in the session.
///
/// The server maps each `code` to an HTTP status and a JSON error body in one place.
public struct PageError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The stable error code; its raw value is the protocol's `code`.
    public enum Code: String, Sendable, Hashable {
        /// No unit of that name (404).
        case unknownUnit = "unknown_unit"
        /// The unit has no such action; `allowed` lists the actions (422).
        case unknownAction = "unknown_action"
        /// The action's value has the wrong type (422).
        case invalidValue = "invalid_value"
        /// An action for a unit that has no live page in this session (409).
        case pageNotBound = "page_not_bound"
        /// A request whose shape is wrong, such as a client rev that is negative or ahead (400).
        case invalidRequest = "invalid_request"
        /// A ViewModel threw while its page was bound, or a View bound an invalid path (500).
        case bindingFailed = "binding_failed"
        /// A ViewModel asked for a service nobody registered (500).
        case missingService = "missing_service"
        /// A deep link to a unit that is ``UnitEntry/flowOnly`` (403): `unit` names it.
        case entryRefused = "entry_refused"
        /// A `forward` navigation with an empty forward list (409).
        case nothingForward = "nothing_forward"
    }

    /// The stable code.
    public let code: Code
    /// A message for people; it may change.
    public let message: String
    /// For `unknown_action`: the names of the actions the unit accepts.
    public let allowed: [String]
    /// For `entry_refused`: the unit refused.
    public let unit: String?

    /// An error.
    /// - Parameters:
    ///   - code: the stable code.
    ///   - message: a message for people.
    ///   - allowed: for `unknown_action`, the actions accepted.
    ///   - unit: for `entry_refused`, the unit refused.
    public init(_ code: Code, _ message: String, allowed: [String] = [], unit: String? = nil) {
        self.code = code
        self.message = message
        self.allowed = allowed
        self.unit = unit
    }

    /// `code: message`.
    public var description: String { "\(code.rawValue): \(message)" }
}

extension PageError {
    /// The refusal of a deep link to a unit that only a page's own navigation reaches.
    /// - Parameter unit: the unit's name.
    public static func entryRefused(_ unit: String) -> PageError {
        PageError(
            .entryRefused, "\(unit) opens only from within the app's flow, not by a direct link", unit: unit)
    }

    /// The refusal of a `forward` navigation when no page was popped to go forward to.
    static let nothingForward = PageError(.nothingForward, "there is no page to go forward to")

    /// The error of a navigation or a start whose value for the new page cannot be encoded as JSON.
    /// - Parameters:
    ///   - unit: the name of the unit the value was for.
    ///   - error: why it cannot be encoded.
    static func unencodableValue(sentTo unit: String, _ error: JSONValueCodingError) -> PageError {
        PageError(.bindingFailed, "the value sent to \(unit) cannot be encoded as JSON: \(error)")
    }
}
