import Foundation
import JSONPatch
import MVVMRProtocol

/// Reading the page protocol's bodies with MVVMRProtocol's decoders (the server's own messages) into the
/// client's values.
enum ProtocolDecoding {
    static func json(_ data: Data) throws(PageClientError) -> JSONValue {
        do {
            return try JSONValue(parsing: data, maxDepth: 512)
        } catch {
            throw .invalidResponse("the body is not JSON (\(error))")
        }
    }

    /// A body read as its message; what is wrong with it is ``PageClientError/invalidResponse(_:)``.
    static func decode<Message: WireMessage>(_ json: JSONValue, as type: Message.Type) throws(PageClientError) -> Message {
        do throws(WireDecodingError) {
            return try Message(json: json)
        } catch {
            throw .invalidResponse(error.message)
        }
    }

    /// A page, from any body that holds one (a page, a snapshot).
    static func page(_ json: JSONValue) throws(PageClientError) -> ClientPage {
        ClientPage(try decode(json, as: WirePage.self))
    }

    /// A navigation, with the page now on top.
    static func navigation(_ navigation: WireNavigation) -> (change: PageNavigationChange, page: ClientPage) {
        (PageNavigationChange(navigation), ClientPage(navigation.page))
    }

    /// The error of a non-2xx answer (a body that is not the protocol's error reads as `http_<status>`).
    static func serverError(_ response: TransportResponse) -> ServerErrorInfo {
        let error = try? WireErrorBody(parsing: response.body, maxDepth: 64)
        return ServerErrorInfo(
            status: response.status,
            code: error?.code ?? "http_\(response.status)",
            message: error?.message ?? "HTTP \(response.status)",
            details: error?.details,
            retryAfter: response.header("Retry-After").flatMap(retryAfterSeconds))
    }

    /// `Retry-After` as delay-seconds (an HTTP date is not used by the protocol).
    static func retryAfterSeconds(_ text: String) -> Double? {
        Double(text.trimmingCharacters(in: .whitespaces)).flatMap { $0 >= 0 ? $0 : nil }
    }
}

extension ClientPage {
    /// The client's copy of a page the server sent.
    init(_ page: WirePage) {
        self.init(unit: page.unit, rev: page.rev, view: page.view, actions: page.actions.map(ClientAction.init))
    }
}

extension ClientAction {
    /// An action a page the server sent takes.
    init(_ action: WireAction) {
        self.init(name: action.name, valueType: action.valueType)
    }
}

extension PageNavigation {
    /// A navigation state the server sent.
    init(_ state: WireNavigationState) {
        self.init(stack: state.stack, presented: state.presented, forward: state.forward)
    }
}

extension PageNavigationChange {
    /// A navigation the server sent.
    init(_ navigation: WireNavigation) {
        self.init(
            kind: PageNavigationKind(rawValue: navigation.kind.rawValue), unit: navigation.unit,
            navigation: PageNavigation(navigation.state))
    }
}
