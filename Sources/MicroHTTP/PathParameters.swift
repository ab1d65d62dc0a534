/// The values of a route pattern's `{name}` placeholders in a request's path, decoded.
///
/// They are read from the request's path segments where the route says each placeholder sits, so
/// routing a request builds nothing for them.
///
/// ```swift
/// router.get("/api/pages/{unit}") { request in
///     .text(request.pathParameters["unit"] ?? "")
/// }
/// ```
public struct PathParameters: Sendable, Hashable, ExpressibleByDictionaryLiteral {
    private var names: [String]
    /// Each name's segment index in `segments`.
    private var positions: [Int]
    private var segments: [String]

    /// No parameters.
    public init() {
        names = []
        positions = []
        segments = []
    }

    /// Parameters with these values.
    /// - Parameter elements: name/value pairs (a later pair of the same name is not looked up).
    public init(dictionaryLiteral elements: (String, String)...) {
        names = elements.map(\.0)
        segments = elements.map(\.1)
        positions = Array(segments.indices)
    }

    /// Parameters read from a matched route's placeholders.
    init(names: [String], positions: [Int], segments: [String]) {
        self.names = names
        self.positions = positions
        self.segments = segments
    }

    /// The value of the placeholder `name`, or `nil` when the route has none of that name.
    public subscript(name: String) -> String? {
        guard let index = names.firstIndex(of: name) else { return nil }
        return segments[positions[index]]
    }

    /// The number of parameters.
    public var count: Int { names.count }

    /// Whether the route has no placeholders.
    public var isEmpty: Bool { names.isEmpty }

    /// The parameters by name.
    public var dictionary: [String: String] {
        var dictionary: [String: String] = [:]
        for (name, position) in zip(names, positions) where dictionary[name] == nil { dictionary[name] = segments[position] }
        return dictionary
    }

    /// Whether both have the same names with the same values (in any order).
    /// - Parameters:
    ///   - left: some parameters.
    ///   - right: other parameters.
    /// - Returns: `true` when they are equal.
    public static func == (left: PathParameters, right: PathParameters) -> Bool { left.dictionary == right.dictionary }

    /// Hashes the names and values.
    /// - Parameter hasher: the hasher.
    public func hash(into hasher: inout Hasher) { hasher.combine(dictionary) }
}
