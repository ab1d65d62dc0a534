import JSONPatch
import MVVMR
import MVVMRProtocol

// The session's values as the page protocol's messages (docs/PROTOCOL.md). MVVMRProtocol writes their bytes and
// publishes their schemas; this file only says which value becomes which message.

extension ActionDescriptor {
    /// The action as pages list it.
    var wire: WireAction { WireAction(name: name, valueType: valueType.rawValue) }
}

extension NavigationState {
    /// The navigation as messages carry it.
    var wire: WireNavigationState { WireNavigationState(stack: stack, presented: presented, forward: forward) }
}

extension PageSnapshot {
    /// The page as messages carry it.
    var wire: WirePage { WirePage(unit: unit, rev: rev, view: view, actions: actions.map(\.wire)) }

    /// The page as a page read's body shows it.
    /// - Parameters:
    ///   - session: the session's id.
    ///   - sequence: the session's latest event id.
    ///   - navigation: the session's navigation.
    func wire(session: String, sequence: Int, navigation: NavigationState) -> WireSnapshot {
        WireSnapshot(session: session, page: wire, seq: sequence, navigation: navigation.wire)
    }
}

extension Navigation {
    /// The navigation as messages carry it, with the page now on top.
    var wire: WireNavigation {
        WireNavigation(kind: WireNavigationKind(rawValue: kind.rawValue), unit: unit, state: state.wire, page: page.wire)
    }
}

extension PageError {
    /// A refused navigation of a body (`navigation_error`).
    var wireNavigationError: WireNavigationError { WireNavigationError(code: code.rawValue, message: message, unit: unit) }
}

extension PageRead {
    /// The body of a page read, written from the view's text the session keeps and the actions' text the server
    /// keeps per unit, so that no JSON tree is built for the most frequent request.
    /// - Parameters:
    ///   - session: the session's id.
    ///   - encodedActions: `WireAction.encodedList` of the unit's actions.
    func body(session: String, encodedActions: [UInt8]) -> [UInt8] {
        WireSnapshot.encoded(
            session: session, unit: snapshot.unit, rev: snapshot.rev, seq: sequence, encodedView: encodedView,
            encodedActions: encodedActions, stack: navigation.stack, presented: navigation.presented,
            forward: navigation.forward)
    }
}

extension ActionResult {
    /// The action's response as bytes; the common one (a patch, no navigation) written without making the message.
    var responseBody: [UInt8] {
        if let patch, navigation == nil, navigationFailure == nil {
            return WireActionResponse.patchBytes(unit: unit, rev: rev, seq: sequence, patch: patch)
        }
        return wire.jsonBytes
    }

    /// The action's response.
    var wire: WireActionResponse {
        let change: WirePageChange
        if let patch {
            change = .patch(patch)
        } else if let snapshot {
            change = .snapshot(snapshot.wire)
        } else {
            change = .none
        }
        return WireActionResponse(
            unit: unit, rev: rev, seq: sequence, change: change, navigation: navigation?.wire,
            navigationError: navigationFailure?.wireNavigationError)
    }
}

extension SessionEvent {
    /// The event as its stream carries it.
    var wire: WireEvent {
        switch kind {
        case .patch(let patch): .patch(WirePatchEvent(unit: patch.unit, rev: patch.rev, patch: patch.patch))
        case .navigation(let navigation): .navigate(navigation.wire)
        case .snapshot(let snapshot): .snapshot(snapshot.wire)
        }
    }

    /// The event's SSE frame, with its seq as the id.
    var frame: [UInt8] { wire.frame(sequence: sequence) }
}
