import JSONPatch
import MVVMR

/// What an event's SSE frame will take, counted without encoding it (``EstimatedJSONSize``): the event log
/// and the session's byte bound need each event's size, and encoding every event to count it would cost
/// what the log saves by not framing events nobody streams. Strings are taken unescaped: escapes only
/// lengthen text a client's value already paid for, since the value bound measures its escaped text.
enum EstimatedBytes {
    /// Bytes of an SSE frame's fixed parts (`id: …\nevent: …\ndata: ` and the blank line, with the
    /// data object's own keys).
    static let frameOverhead = 48

    /// The estimated size of `event`'s SSE frame.
    static func frame(_ event: SessionEvent) -> Int {
        switch event.kind {
        case .patch(let pagePatch): return frameOverhead + patch(pagePatch)
        case .navigation(let navigation):
            var total = frameOverhead + navigation.unit.utf8.count + snapshot(navigation.page)
            for unit in navigation.state.stack { total += unit.utf8.count + 3 }
            if let callback = navigation.callbackPatch { total += patch(callback) }
            return total
        case .snapshot(let page): return frameOverhead + snapshot(page)
        }
    }

    /// A page patch: its unit, rev and operations.
    static func patch(_ pagePatch: PagePatch) -> Int {
        pagePatch.unit.utf8.count + 16 + EstimatedJSONSize.of(pagePatch.patch)
    }

    /// A page snapshot: its view, with a few bytes per declared action.
    static func snapshot(_ page: PageSnapshot) -> Int {
        page.unit.utf8.count + 32 + EstimatedJSONSize.of(page.view)
            + page.actions.reduce(0) { $0 + $1.name.utf8.count + 32 }
    }
}
