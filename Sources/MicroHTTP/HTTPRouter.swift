/// Routes requests by method and path pattern.
///
/// Patterns are paths whose segments are either literal or a `{name}` placeholder matching one whole
/// segment (decoded, so `%2F` inside it stays a character of the value). A path that no pattern
/// matches is 404 `not_found`, unless a fallback is set; a path that matches with another method is
/// 405 `method_not_allowed` with an `Allow` header. `HEAD` is answered by the `GET` route.
///
/// ```swift
/// var router = HTTPRouter()
/// router.get("/api/pages/{unit}") { request in
///     .text("page \(request.pathParameters["unit"] ?? "")")
/// }
/// ```
public struct HTTPRouter: Sendable {
    /// A class, so that reading one while resolving retains it once instead of each of its parts.
    private final class Route: Sendable {
        let method: String
        let segments: [PatternSegment]
        let handler: RouteHandler
        /// The placeholders' names, and the index of the segment each stands for.
        let parameterNames: [String]
        let parameterPositions: [Int]

        init(method: String, segments: [PatternSegment], handler: RouteHandler, parameterNames: [String], parameterPositions: [Int]) {
            self.method = method
            self.segments = segments
            self.handler = handler
            self.parameterNames = parameterNames
            self.parameterPositions = parameterPositions
        }
    }

    private enum PatternSegment: Sendable, Equatable {
        case literal(String)
        case parameter(String)
    }

    /// What the router decided for one request.
    enum Resolution {
        case matched(RouteHandler, parameters: PathParameters)
        case methodNotAllowed([String])
        case notFound
    }

    private var routes: [Route] = []
    /// Answers `GET` and `HEAD` requests that no route matches (static files, typically).
    public var fallback: RouteHandler?

    /// Creates an empty router.
    public init() {}

    /// Adds a route.
    /// - Parameters:
    ///   - method: the method, e.g. `POST`.
    ///   - pattern: the path pattern, e.g. `/api/pages/{unit}/actions`.
    ///   - handler: the code that answers.
    public mutating func add(_ method: String, _ pattern: String, _ handler: RouteHandler) {
        let segments = pattern.split(separator: "/", omittingEmptySubsequences: true).map { part -> PatternSegment in
            if part.first == "{" && part.last == "}" && part.count > 2 {
                return .parameter(String(part.dropFirst().dropLast()))
            }
            return .literal(String(part))
        }
        var parameterNames: [String] = []
        var parameterPositions: [Int] = []
        for (position, segment) in segments.enumerated() {
            if case .parameter(let name) = segment {
                parameterNames.append(name)
                parameterPositions.append(position)
            }
        }
        routes.append(
            Route(
                method: method.uppercased(), segments: segments, handler: handler, parameterNames: parameterNames,
                parameterPositions: parameterPositions))
    }

    /// Adds a `GET` route answered synchronously (it also answers `HEAD`).
    /// - Parameters:
    ///   - pattern: the path pattern.
    ///   - handler: the code that answers.
    public mutating func get(_ pattern: String, _ handler: @escaping @Sendable (HTTPRequest) throws -> HTTPResponse) {
        add("GET", pattern, .synchronous(handler))
    }

    /// Adds a `POST` route answered synchronously.
    /// - Parameters:
    ///   - pattern: the path pattern.
    ///   - handler: the code that answers.
    public mutating func post(_ pattern: String, _ handler: @escaping @Sendable (HTTPRequest) throws -> HTTPResponse) {
        add("POST", pattern, .synchronous(handler))
    }

    /// Adds a `DELETE` route answered synchronously.
    /// - Parameters:
    ///   - pattern: the path pattern.
    ///   - handler: the code that answers.
    public mutating func delete(_ pattern: String, _ handler: @escaping @Sendable (HTTPRequest) throws -> HTTPResponse) {
        add("DELETE", pattern, .synchronous(handler))
    }

    /// Finds the route for a method and decoded path segments.
    func resolve(method: String, segments: [String]) -> Resolution {
        let effectiveMethod = method == "HEAD" ? "GET" : method
        var allowed: [String] = []
        // Indices, so that a route whose segment count differs is passed over without retaining it.
        for index in routes.indices where routes[index].segments.count == segments.count {
            guard matches(routes[index].segments, segments) else { continue }
            let route = routes[index]
            if route.method == effectiveMethod {
                let parameters = PathParameters(
                    names: route.parameterNames, positions: route.parameterPositions, segments: segments)
                return .matched(route.handler, parameters: parameters)
            }
            if !allowed.contains(route.method) {
                allowed.append(route.method)
                if route.method == "GET" { allowed.append("HEAD") }
            }
        }
        if !allowed.isEmpty { return .methodNotAllowed(allowed) }
        if let fallback, effectiveMethod == "GET" { return .matched(fallback, parameters: PathParameters()) }
        return .notFound
    }

    private func matches(_ pattern: [PatternSegment], _ segments: [String]) -> Bool {
        for (patternSegment, segment) in zip(pattern, segments) {
            if case .literal(let literal) = patternSegment, literal != segment { return false }
        }
        return true
    }
}
