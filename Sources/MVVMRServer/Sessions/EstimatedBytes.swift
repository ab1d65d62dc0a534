import JSONPatch
import MVVMR

/// What a value will take as JSON text, counted without encoding it: the event log and the session's
/// byte bound need each event's size, and encoding every event to count it would cost what the log
/// saves by not framing events nobody streams.
///
/// The count is the compact text's length with strings taken unescaped (escapes only lengthen text a
/// client's value already paid for: the value bound measures its escaped text) and every number as 8
/// bytes. It walks the value once, so it costs what the value's size is, not what the session holds.
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
        var total = pagePatch.unit.utf8.count + 16
        for operation in pagePatch.patch.operations {
            total += 24 + operation.path.tokens.reduce(0) { $0 + $1.utf8.count + 1 }
            switch operation {
            case .add(_, let value), .replace(_, let value), .test(_, let value): total += json(value)
            case .move(let from, _), .copy(let from, _): total += from.tokens.reduce(0) { $0 + $1.utf8.count + 1 }
            case .remove: break
            }
        }
        return total
    }

    /// A page snapshot: its view, with a few bytes per declared action.
    static func snapshot(_ page: PageSnapshot) -> Int {
        page.unit.utf8.count + 32 + json(page.view) + page.actions.reduce(0) { $0 + $1.name.utf8.count + 32 }
    }

    /// A JSON value's compact text, estimated (see the type's description).
    static func json(_ value: JSONValue) -> Int {
        switch value {
        case .null: return 4
        case .bool: return 5
        case .int, .double: return 8
        case .string(let text): return text.utf8.count + 2
        case .array(let items): return items.reduce(2) { $0 + json($1) + 1 }
        case .object(let object):
            var total = 2
            for (key, item) in object { total += key.utf8.count + 4 + json(item) }
            return total
        }
    }
}
