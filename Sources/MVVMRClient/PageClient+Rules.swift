import JSONPatch

/// The protocol's rules for keeping page copies current, applied under the client's lock.
extension PageClient {
    enum PatchOutcome: Equatable {
        case applied
        case ignored
        case gap
    }

    /// Applies a patch that takes `unit` from `base` to `rev`: only when the client holds exactly `base`;
    /// ignored when `rev` is not newer than the copy (or the client holds no copy); otherwise a gap.
    /// An event's patch has `base = rev - 1`; an action response's has the rev the request named
    /// (`nil`: unknown to the client, so a newer rev is a gap).
    static func applyPatch(_ patch: JSONPatch, unit: String, from base: Int?, to rev: Int, in state: inout State) -> PatchOutcome {
        guard let held = state.pages[unit]?.rev, rev > held else { return .ignored }
        guard let base, base == held else { return .gap }
        // Taken out of the state while it is patched, so its view has one owner and the patch changes it
        // in place instead of copying the containers it touches; a failed patch leaves it as it was.
        guard var page = state.pages.removeValue(forKey: unit) else { return .gap }
        defer { state.pages[unit] = page }
        do {
            try patch.apply(toDocument: &page.view)
        } catch {
            return .gap
        }
        page.rev = rev
        return .applied
    }

    /// Installs a snapshot unless the client holds a newer revision of that page (or the same one).
    /// - Returns: whether the copy changed.
    static func install(_ page: ClientPage, in state: inout State) -> Bool {
        if let held = state.pages[page.unit] {
            if page.rev < held.rev { return false }
            if page == held { return false }
        }
        state.pages[page.unit] = page
        return true
    }

    /// Applies a navigation seen at `sequence` (an event id or a response's seq): ignored when an event
    /// after it has already moved the navigation; otherwise the stack is replaced, the pages it released
    /// are dropped, and the new top page's snapshot is installed.
    static func applyNavigation(
        _ change: PageNavigationChange, page: ClientPage, sequence: Int?, in state: inout State
    ) -> [PageClientChange] {
        if let sequence, sequence < state.navigationSequence { return [] }
        var changes: [PageClientChange] = []
        let repeated = state.lastNavigation == change && state.navigation == change.navigation
        var released = Set(state.navigation.stack).subtracting(change.navigation.stack)
        if change.kind == .root { released.formUnion(state.pages.keys) }
        released.remove(page.unit)
        state.navigation = change.navigation
        if let sequence { state.navigationSequence = sequence }
        state.lastNavigation = change
        for unit in released.sorted() where state.pages[unit] != nil {
            state.pages[unit] = nil
            state.parameters[unit] = nil
            changes.append(.pageRemoved(unit))
        }
        if !repeated { changes.append(.navigated(change)) }
        if install(page, in: &state) { changes.append(.pageChanged(page.unit)) }
        return changes
    }
}
