import JSONPatch

/// The JSON document of one live page, its revision, and the patches of its last revisions.
///
/// Writes made while the page is being bound form its first snapshot. After that, every write of a turn
/// remembers where it changed the document and the value it replaced there (no copy of the document is kept,
/// so the document is changed in place), and `commit()` diffs only those values against what the document
/// holds now: one patch and one new revision per turn, however many outputs moved.
@usableFromInline
final class PageDocument {
    struct RevisionPatch {
        let rev: Int
        let patch: JSONPatch
        /// The patch's estimated size (0 when the history has no byte limit, which then never counts).
        let byteCount: Int
    }

    let unit: String
    private(set) var view: JSONValue = .object(JSONObject())
    /// (Right after `view`, whose last word has room for it.)
    private var isRecording = false
    private(set) var revision: Int
    /// What few pages ever have, made when first needed: one pointer in every document.
    private final class Rarities {
        /// The member that identifies the elements of an array, where a page set one other than `id`: the only part
        /// of the diff options a page sets, kept alone so that every live page does not hold the whole options.
        var identityKeys: [JSONPointer: String] = [:]
        /// Why the binding under way cannot be made (an invalid path, an unwritable one).
        var bindingFailures: [String] = []
    }

    private var raritiesStorage: Rarities?
    /// The rare parts, made when first needed (to add to them).
    private var rarities: Rarities {
        if let raritiesStorage { return raritiesStorage }
        let made = Rarities()
        raritiesStorage = made
        return made
    }

    /// How this page's changes are diffed.
    var options: DiffOptions { DiffOptions(identityKeys: raritiesStorage?.identityKeys ?? [:]) }
    /// One write of this turn: where it changed the document (the highest value it created or replaced) and
    /// what was there before the turn (nil: nothing).
    private struct Change {
        let path: JSONPointer
        let old: JSONValue?
    }

    /// This turn's writes, in order, none below another: a write at or below an earlier one's path is not kept
    /// (the earlier one's old value stands for it), and a write above earlier ones takes their place (its old value
    /// rebuilt from theirs).
    private var changes: [Change] = []
    /// The kept patches are `history[historyHead...]`, oldest first. A dropped patch's slot is emptied at
    /// once (its memory goes back) and the slots are compacted away now and then.
    private var history: [RevisionPatch] = []
    private var historyHead: Int32 = 0
    /// (Beside `historyHead`: the two share a word.)
    private let historyLimit: Int32
    /// The most bytes of patches kept (`Int.max`: only the count bounds them).
    private let historyByteLimit: Int
    /// The estimated bytes of the kept patches.
    private(set) var historyBytes = 0
    private let turn: SessionTurn

    init(unit: String, revision: Int, historyLimit: Int, historyByteLimit: Int = .max, turn: SessionTurn) {
        self.unit = unit
        self.revision = revision
        self.historyLimit = Int32(clamping: max(historyLimit, 0))
        self.historyByteLimit = max(historyByteLimit, 0)
        self.turn = turn
    }

    /// The number of patches kept.
    private var historyCount: Int { history.count - Int(historyHead) }

    var snapshotView: JSONValue { view }

    /// The document's JSON text, kept from the first read until the next write: a page read again and
    /// again (polling clients, reloads) is encoded once per change, not once per read.
    private var encodedViewCache: [UInt8]?

    /// The document's compact JSON text.
    var encodedView: [UInt8] {
        if let encodedViewCache { return encodedViewCache }
        let bytes = view.jsonBytes
        encodedViewCache = bytes
        return bytes
    }

    /// Notes why a binding cannot be made (an invalid path, an unwritable one) while the page is being bound: the
    /// binding then fails. A write failing after that changes nothing and is dropped, as ``write(_:at:)`` says.
    func recordBindingFailure(_ reason: String) {
        if !isRecording { rarities.bindingFailures.append(reason) }
    }

    /// Why the binding under way cannot be made (empty when it can).
    var bindingFailures: [String] { raritiesStorage?.bindingFailures ?? [] }

    /// Diffs the array at `pointer` by the member `key` instead of `id`.
    @usableFromInline
    func setIdentityKey(_ key: String, forArrayAt pointer: JSONPointer) {
        rarities.identityKeys[pointer] = key
    }

    /// The member that identifies the elements of the array at `pointer`: `id` unless set.
    func identityKey(at pointer: JSONPointer) -> String {
        raritiesStorage?.identityKeys[pointer] ?? "id"
    }

    /// Whether writes are changes now (the page is bound), not parts of its first snapshot.
    var recordsChanges: Bool { isRecording }

    /// From now on writes are changes that `commit()` turns into patches.
    func startRecording() {
        isRecording = true
    }

    /// Writes `value` at `pointer`, remembering the path for this turn's patch.
    @usableFromInline
    func write(_ value: JSONValue, at pointer: JSONPointer) {
        encodedViewCache = nil
        guard isRecording else {
            if view.write(value, at: pointer.tokens[...]) == nil {
                recordBindingFailure("cannot write at \(pointer) of \(unit)")
            }
            return
        }
        // An Output re-emitting the value already shown (a label, a flag) changes nothing: no path to diff.
        if value.isScalar, let current = view[pointer], current == value { return }
        // A failed write (the path runs through a scalar) changes nothing and is dropped: the page
        // keeps working with its other outputs.
        guard let (depth, replaced) = view.write(value, at: pointer.tokens[...]) else { return }
        let changed = depth == pointer.tokens.count ? pointer : JSONPointer(tokens: Array(pointer.tokens.prefix(depth)))
        if changes.isEmpty { turn.markChanged(self) }
        if !changes.contains(where: { Self.path(changed, isAtOrBelow: $0.path) }) {
            changes.append(Change(path: changed, old: replaced.map { turnStartValue(of: $0, at: changed) }))
        }
    }

    /// What the value `current` at `path` was when the turn began: `current` with the old values of the turn's
    /// writes below `path` put back, latest first, which are dropped from the turn's changes (the write at `path`
    /// stands for them from now on).
    private func turnStartValue(of current: JSONValue, at path: JSONPointer) -> JSONValue {
        let isBelow = { (change: Change) in change.path != path && Self.path(change.path, isAtOrBelow: path) }
        guard changes.contains(where: isBelow) else { return current }
        var value = current
        for change in changes.reversed() where isBelow(change) {
            let tokens = change.path.tokens[path.tokens.count...]
            if let old = change.old {
                _ = value.write(old, at: tokens)
            } else {
                value.removeCreated(at: tokens)
            }
        }
        changes.removeAll(where: isBelow)
        return value
    }

    /// Whether `path` is `ancestor` or lies below it.
    private static func path(_ path: JSONPointer, isAtOrBelow ancestor: JSONPointer) -> Bool {
        path.tokens.starts(with: ancestor.tokens)
    }

    /// One element of an array binding that changed: its index and its new JSON.
    @usableFromInline
    struct ElementChange {
        @usableFromInline let index: Int
        @usableFromInline let value: JSONValue

        @usableFromInline
        init(index: Int, value: JSONValue) {
            self.index = index
            self.value = value
        }
    }

    /// Writes each change at its index below `pointer`, when the document still holds an array of `count`
    /// elements there and every changed object keeps its identity member `identityKey`: a small in-place
    /// change of an array binding (see `Page.bind(_:at:identifiedBy:)`). Returns false, having written
    /// nothing, when the whole array must be written instead; true for no changes at all.
    @usableFromInline
    func writeElements(_ changes: [ElementChange], at pointer: JSONPointer, count: Int, identityKey: String) -> Bool {
        guard isRecording, elementsFit(changes, at: pointer, count: count, identityKey: identityKey) else { return false }
        for change in changes { write(change.value, at: pointer.appending(change.index)) }
        return true
    }

    /// Whether the document holds an array of `count` elements at `pointer` in which each change keeps its
    /// element's identity. Not inlined, so that the reference it takes to the array is given back before the writes
    /// (one still held then would make them copy the array).
    @inline(never)
    private func elementsFit(_ changes: [ElementChange], at pointer: JSONPointer, count: Int, identityKey: String) -> Bool {
        guard case .array(let current)? = view[pointer], current.count == count else { return false }
        for change in changes {
            if case .object(let newObject) = change.value, case .object(let oldObject) = current[change.index],
                newObject[identityKey] != oldObject[identityKey]
            {
                return false
            }
        }
        return true
    }

    /// Turns this turn's writes into one patch and one new revision; nil when nothing changed.
    func commit() -> JSONPatch? {
        guard !changes.isEmpty else { return nil }
        var operations: [PatchOperation] = []
        let options = options
        for change in changes {
            Self.appendOperations(from: change.old, to: view[change.path], at: change.path, options: options, into: &operations)
        }
        changes.removeAll(keepingCapacity: true)
        guard !operations.isEmpty else { return nil }
        let patch = JSONPatch(operations)
        revision += 1
        if historyLimit > 0 { keepInHistory(patch) }
        return patch
    }

    /// Keeps the patch for catching up clients that are behind, dropping the oldest beyond the count or the
    /// bytes (a patch larger than all the bytes is not kept: a client behind it gets a snapshot).
    private func keepInHistory(_ patch: JSONPatch) {
        let byteCount = historyByteLimit == .max ? 0 : EstimatedJSONSize.of(patch)
        history.append(RevisionPatch(rev: revision, patch: patch, byteCount: byteCount))
        historyBytes += byteCount
        while historyCount > Int(historyLimit) || (historyBytes > historyByteLimit && historyCount > 0) {
            let head = Int(historyHead)
            historyBytes -= history[head].byteCount
            history[head] = RevisionPatch(rev: history[head].rev, patch: JSONPatch([]), byteCount: 0)
            historyHead += 1
        }
        if historyHead >= 16 && Int(historyHead) * 2 >= history.count {
            history.removeFirst(Int(historyHead))
            historyHead = 0
        }
    }

    /// Empties the view for a hibernating page bound again into this document (its writes form the view again,
    /// as at a first binding) and returns the view it had; its revision and its kept patches stay.
    func beginBindingAgain() -> JSONValue {
        let previous = view
        view = .object(JSONObject())
        encodedViewCache = nil
        isRecording = false
        raritiesStorage?.bindingFailures = []
        changes.removeAll(keepingCapacity: true)
        return previous
    }

    /// Ends a binding begun by ``beginBindingAgain()``: writes are changes again. When the view came out other than
    /// `previous` (a Model's data changed while the page hibernated), the difference is this turn's change, so its
    /// clients get it as a patch and a new revision; returns whether it came out the same.
    @discardableResult
    func finishBindingAgain(previous: JSONValue) -> Bool {
        isRecording = true
        guard view != previous else {
            // Equal as JSON; kept as it was written (its members' order, `1` rather than `1.0`), so its text is too.
            view = previous
            encodedViewCache = nil
            return true
        }
        turn.markChanged(self)
        changes.append(Change(path: JSONPointer(tokens: []), old: previous))
        return false
    }

    /// Puts back the view a binding again emptied (see ``beginBindingAgain()``), with no change of this turn: the
    /// binding failed, or the input that woke the page was refused.
    func abandonBindingAgain(previous: JSONValue) {
        view = previous
        encodedViewCache = nil
        changes.removeAll(keepingCapacity: true)
        raritiesStorage?.bindingFailures = []
        isRecording = true
    }

    /// Folds this turn's writes into the document without a patch or a revision: a page bound in this
    /// turn shows them in its snapshot.
    func absorbChanges() {
        changes.removeAll(keepingCapacity: true)
    }

    /// The patch that takes the page from `clientRevision` to its current revision: empty when equal,
    /// nil when the patches needed are no longer kept.
    func catchUp(from clientRevision: Int) -> JSONPatch? {
        if clientRevision == revision { return JSONPatch([]) }
        guard clientRevision >= 0, clientRevision < revision else { return nil }
        let needed = revision - clientRevision
        guard historyCount >= needed else { return nil }
        let kept = history[(history.count - needed)...]
        guard kept.first?.rev == clientRevision + 1 else { return nil }
        if needed == 1, let only = kept.first { return only.patch }
        return JSONPatch(kept.flatMap(\.patch.operations))
    }

    /// The patch between two objects with the same keys in the same order whose changed members are scalars on both
    /// sides: one replace per changed member, in order, which is what the general differ gives for them, without its
    /// work. Nil for any other pair (the general differ then takes them).
    static func memberReplacements(from old: JSONObject, to new: JSONObject, at path: JSONPointer) -> [PatchOperation]? {
        var replacements: [PatchOperation] = []
        return appendMemberReplacements(from: old, to: new, at: path, into: &replacements) ? replacements : nil
    }

    /// Appends ``memberReplacements(from:to:at:)``'s operations to `operations` (no array of their own); false, having
    /// appended nothing, for a pair it does not take.
    static func appendMemberReplacements(
        from old: JSONObject, to new: JSONObject, at path: JSONPointer, into operations: inout [PatchOperation]
    ) -> Bool {
        guard old.count == new.count, !old.isEmpty else { return false }
        let start = operations.count
        for ((oldKey, oldValue), (newKey, newValue)) in zip(old, new) {
            let unchanged = oldKey == newKey && oldValue == newValue
            guard unchanged || (oldKey == newKey && oldValue.isScalar && newValue.isScalar) else {
                operations.removeSubrange(start...)
                return false
            }
            if !unchanged { operations.append(.replace(path: path.appending(newKey), value: newValue)) }
        }
        return true
    }

    /// Appends the operations that take `before` (nil: absent) to `after` at `path`.
    static func appendOperations(
        from before: JSONValue?, to after: JSONValue?, at path: JSONPointer, options: DiffOptions,
        into operations: inout [PatchOperation]
    ) {
        guard let after else {
            if before != nil { operations.append(.remove(path: path)) }
            return
        }
        guard let before else {
            operations.append(.add(path: path, value: after))
            return
        }
        if before.isScalar, after.isScalar {
            // The common case (a label, a counter): one replace, without the general differ.
            if before != after { operations.append(.replace(path: path, value: after)) }
            return
        }
        // Containers are not compared whole first: both ways below give nothing for equal values.
        if case .object(let beforeMembers) = before, case .object(let afterMembers) = after,
            appendMemberReplacements(from: beforeMembers, to: afterMembers, at: path, into: &operations)
        {
            // The next most common case (a row whose count changed): a replace per changed member.
            return
        }
        operations += JSONPatch.diff(from: before, to: after, at: path, options: options).operations
    }
}

extension JSONValue {
    /// Removes what a write created at `tokens` (an object's member, or the element it appended to an array: the
    /// last one, for `-`); nothing when there is no such value.
    fileprivate mutating func removeCreated(at tokens: ArraySlice<String>) {
        guard let token = tokens.first else { return }
        let rest = tokens.dropFirst()
        if var object = takeObject() {
            defer { self = .object(object) }
            if rest.isEmpty {
                object[token] = nil
            } else if var child = object[token] {
                object[token] = .null
                child.removeCreated(at: rest)
                object[token] = child
            }
        } else if var array = takeArray() {
            defer { self = .array(array) }
            let index = token == "-" ? array.count - 1 : Int(token) ?? -1
            guard array.indices.contains(index) else { return }
            if rest.isEmpty {
                array.remove(at: index)
            } else {
                var child = array[index]
                array[index] = .null
                child.removeCreated(at: rest)
                array[index] = child
            }
        }
    }
}
