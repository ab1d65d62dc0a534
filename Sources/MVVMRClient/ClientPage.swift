import JSONPatch

/// The client's copy of one page: its unit, its revision, its view document and its actions.
public struct ClientPage: Sendable, Equatable {
    /// The unit's name (`greeting`).
    public var unit: String
    /// The page's revision: +1 for every change of `view`.
    public var rev: Int
    /// The page's JSON document, as the server's View wrote it.
    public var view: JSONValue
    /// The actions the page accepts.
    public var actions: [ClientAction]

    /// Creates a page copy.
    /// - Parameters:
    ///   - unit: the unit's name.
    ///   - rev: the revision `view` is at.
    ///   - view: the JSON document.
    ///   - actions: the actions the page accepts.
    public init(unit: String, rev: Int, view: JSONValue, actions: [ClientAction]) {
        self.unit = unit
        self.rev = rev
        self.view = view
        self.actions = actions
    }
}

/// An action a page accepts, with the type of its value.
public struct ClientAction: Sendable, Hashable {
    /// The action's name (`showGreeting`).
    public var name: String
    /// The value type: `none`, `string`, `int`, `number`, `bool`, `object` or `array`.
    public var valueType: String

    /// Creates an action description.
    /// - Parameters:
    ///   - name: the action's name.
    ///   - valueType: the protocol's name of its value type.
    public init(name: String, valueType: String) {
        self.name = name
        self.valueType = valueType
    }
}

/// The session's navigation: the stack of unit names (top last), the presented unit, if any, and the pages
/// a `forward` navigation can go back to.
public struct PageNavigation: Sendable, Hashable {
    /// The unit names on the stack, bottom first.
    public var stack: [String]
    /// The top unit's name when it was presented (modally), otherwise `nil`.
    public var presented: String?
    /// The pages popped by `back`, which the server keeps with their state for `forward`: unit names, nearest
    /// first (empty from a server that has no forward list).
    public var forward: [String]

    /// The unit on top of the stack.
    public var top: String? { stack.last }

    /// Creates a navigation state.
    /// - Parameters:
    ///   - stack: the unit names, bottom first.
    ///   - presented: the presented top unit, if any.
    ///   - forward: the forward list, nearest first.
    public init(stack: [String] = [], presented: String? = nil, forward: [String] = []) {
        self.stack = stack
        self.presented = presented
        self.forward = forward
    }
}

/// How a navigation moved the stack.
public struct PageNavigationKind: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    /// The protocol's name of the kind.
    public var rawValue: String

    /// Wraps a kind name; names this version does not know are kept as they are.
    /// - Parameter rawValue: the kind's name.
    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// A page was pushed on the stack.
    public static let push = PageNavigationKind(rawValue: "push")
    /// A page was presented (modally) on top of the stack.
    public static let present = PageNavigationKind(rawValue: "present")
    /// The stack was replaced by one page; every other page was released.
    public static let root = PageNavigationKind(rawValue: "root")
    /// The top page was popped (the server keeps it in the forward list); a callback value went to the page below.
    public static let back = PageNavigationKind(rawValue: "back")
    /// The nearest page of the forward list went back on top of the stack, with the state it had.
    public static let forward = PageNavigationKind(rawValue: "forward")

    /// The kind's name.
    public var description: String { rawValue }
}

/// One navigation the client applied: how, to which unit, and the navigation state after it.
public struct PageNavigationChange: Sendable, Hashable {
    /// How the stack moved.
    public var kind: PageNavigationKind
    /// The unit the navigation went to (for `back`, the page now on top).
    public var unit: String
    /// The navigation state after it.
    public var navigation: PageNavigation

    /// Creates a navigation description.
    /// - Parameters:
    ///   - kind: how the stack moved.
    ///   - unit: the unit navigated to.
    ///   - navigation: the state after it.
    public init(kind: PageNavigationKind, unit: String, navigation: PageNavigation) {
        self.kind = kind
        self.unit = unit
        self.navigation = navigation
    }
}
