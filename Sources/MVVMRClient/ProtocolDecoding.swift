import Foundation
import JSONPatch

/// Reading the page protocol's bodies (docs/PROTOCOL.md) into the client's values.
enum ProtocolDecoding {
    static func json(_ data: Data) throws(PageClientError) -> JSONValue {
        do {
            return try JSONValue(parsing: data, maxDepth: 512)
        } catch {
            throw .invalidResponse("the body is not JSON (\(error))")
        }
    }

    /// The member, unless it is absent or `null` (`JSONValue` is `ExpressibleByNilLiteral`, so a `nil`
    /// written in a closure returning it would be `.null`).
    static func present(_ value: JSONValue?) -> JSONValue? {
        guard let value else { return Optional.none }
        if case .null = value { return Optional.none }
        return value
    }

    /// `{"unit","rev","view","actions"}` (snapshot bodies carry more; it is ignored).
    static func page(_ value: JSONValue) throws(PageClientError) -> ClientPage {
        guard let unit = value["unit"]?.stringValue, let rev = value["rev"]?.intValue, let view = value["view"] else {
            throw .invalidResponse("a page needs 'unit', 'rev' and 'view'")
        }
        var actions: [ClientAction] = []
        for action in value["actions"]?.arrayValue ?? [] {
            guard let name = action["name"]?.stringValue else { continue }
            actions.append(ClientAction(name: name, valueType: action["value"]?.stringValue ?? "none"))
        }
        return ClientPage(unit: unit, rev: rev, view: view, actions: actions)
    }

    /// `{"stack": [...], "presented": name|null, "forward": [...]}` (`forward` may be absent: an older server).
    static func navigationState(_ value: JSONValue?) -> PageNavigation? {
        guard let value, let stack = value["stack"]?.arrayValue else { return nil }
        return PageNavigation(
            stack: stack.compactMap(\.stringValue), presented: value["presented"]?.stringValue,
            forward: value["forward"]?.arrayValue?.compactMap(\.stringValue) ?? [])
    }

    /// `{"type","unit","stack","presented","page"}`.
    static func navigation(_ value: JSONValue) throws(PageClientError) -> (change: PageNavigationChange, page: ClientPage) {
        guard let type = value["type"]?.stringValue, let state = navigationState(value), let pageValue = value["page"] else {
            throw .invalidResponse("a navigation needs 'type', 'stack' and 'page'")
        }
        let page = try page(pageValue)
        let change = PageNavigationChange(
            kind: PageNavigationKind(rawValue: type), unit: value["unit"]?.stringValue ?? page.unit, navigation: state)
        return (change, page)
    }

    /// A patch as JSON: `[{"op", ...}, ...]`.
    static func patch(_ value: JSONValue) throws(PageClientError) -> JSONPatch {
        do {
            return try JSONPatch(json: value)
        } catch {
            throw .invalidResponse("not a JSON Patch (\(error))")
        }
    }

    /// The error of a non-2xx answer.
    static func serverError(_ response: TransportResponse) -> ServerErrorInfo {
        let body = try? JSONValue(parsing: response.body, maxDepth: 64)
        let error = body?["error"]
        return ServerErrorInfo(
            status: response.status,
            code: error?["code"]?.stringValue ?? "http_\(response.status)",
            message: error?["message"]?.stringValue ?? HTTPURLResponseStatus.text(response.status),
            details: error?["details"],
            retryAfter: response.header("Retry-After").flatMap(retryAfterSeconds))
    }

    /// `Retry-After` as delay-seconds (an HTTP date is not used by the protocol).
    static func retryAfterSeconds(_ text: String) -> Double? {
        Double(text.trimmingCharacters(in: .whitespaces)).flatMap { $0 >= 0 ? $0 : nil }
    }
}

enum HTTPURLResponseStatus {
    static func text(_ status: Int) -> String {
        "HTTP \(status)"
    }
}
