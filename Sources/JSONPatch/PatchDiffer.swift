/// The state of one ``JSONPatch/diff(from:to:at:options:)`` run.
///
/// The walk is iterative: pairs of containers still to compare wait on an explicit task stack,
/// so diffing deeply nested documents needs no deep call stack. Expanding one pair produces an
/// ordered list of tasks (operations to emit and child pairs to compare) that is pushed in
/// reverse, which yields exactly the operation order of a depth-first recursive walk.
struct PatchDiffer {
    /// How an identity-based array diff went.
    private enum KeyedOutcome {
        case emitted
        /// Old rows repeat an identity value; the caller uses the sequence diff instead.
        case repeatedIdentities
        /// So many rows move that a whole replacement is the better patch.
        case tooManyPlacements
    }

    private enum Task {
        case emit(PatchOperation)
        case compare(old: JSONValue, new: JSONValue, path: [String])
    }

    private let options: DiffOptions
    /// Unescaped tokens of the location being expanded, starting with the base pointer's.
    private var path: [String]
    /// Work not yet done, next task last.
    private var pending: [Task] = []
    /// The tasks produced by the expansion in progress, in order.
    private var produced: [Task] = []
    private(set) var operations: [PatchOperation] = []

    init(base: JSONPointer, options: DiffOptions) {
        self.options = options
        self.path = base.tokens
    }

    // MARK: - Driver

    mutating func diffValues(_ old: JSONValue, _ new: JSONValue) {
        compare(old, new, at: path)
        while let task = pending.popLast() {
            switch task {
            case .emit(let operation):
                operations.append(operation)
            case .compare(let old, let new, let taskPath):
                path = taskPath
                compare(old, new, at: taskPath)
            }
        }
    }

    /// Expands one pair: containers of the same kind are walked, anything else is replaced.
    private mutating func compare(_ old: JSONValue, _ new: JSONValue, at location: [String]) {
        path = location
        switch (old, new) {
        case let (.object(oldObject), .object(newObject)):
            diffObjects(oldObject, newObject)
        case let (.array(oldArray), .array(newArray)):
            diffArrays(oldArray, newArray)
        default:
            if old != new {
                produced.append(.emit(.replace(path: currentPointer(), value: new)))
            }
        }
        pending.append(contentsOf: produced.reversed())
        produced.removeAll(keepingCapacity: true)
    }

    /// Schedules the comparison of a child: scalars are settled at once, containers later.
    private mutating func scheduleChild(_ old: JSONValue, _ new: JSONValue, token: String) {
        switch (old, new) {
        case (.object, .object), (.array, .array):
            // Equal subtrees are common (unchanged rows and sections); skip them without a task.
            if old == new { return }
            var childPath = path
            childPath.append(token)
            produced.append(.compare(old: old, new: new, path: childPath))
        default:
            if old != new {
                produced.append(.emit(.replace(path: currentPointer(appending: token), value: new)))
            }
        }
    }

    private mutating func emit(_ operation: PatchOperation) {
        produced.append(.emit(operation))
    }

    // MARK: - Objects

    private mutating func diffObjects(_ old: JSONObject, _ new: JSONObject) {
        // Two non-empty objects without a key in common are different things, not edits of
        // one another: one replace is smaller than removing and adding every member.
        if !old.isEmpty && !new.isEmpty && !new.contains(where: { old.position(ofKey: $0.key) != nil }) {
            emit(.replace(path: currentPointer(), value: .object(new)))
            return
        }
        for (key, _) in old where new[key] == nil {
            emit(.remove(path: currentPointer(appending: key)))
        }
        for (key, newValue) in new {
            if let oldValue = old[key] {
                scheduleChild(oldValue, newValue, token: key)
            } else {
                emit(.add(path: currentPointer(appending: key), value: newValue))
            }
        }
    }

    // MARK: - Arrays

    private mutating func diffArrays(_ old: [JSONValue], _ new: [JSONValue]) {
        // Trim the common prefix and suffix: typical edits touch a small region, and trimming
        // makes equal arrays cost one comparison per element.
        let shorter = min(old.count, new.count)
        var prefix = 0
        while prefix < shorter && old[prefix] == new[prefix] {
            prefix += 1
        }
        var suffix = 0
        while suffix < shorter - prefix && old[old.count - 1 - suffix] == new[new.count - 1 - suffix] {
            suffix += 1
        }
        let oldMiddle = old[prefix..<(old.count - suffix)]
        let newMiddle = new[prefix..<(new.count - suffix)]
        if oldMiddle.isEmpty && newMiddle.isEmpty { return }
        if (old.isEmpty || new.isEmpty) && max(old.count, new.count) > 1 {
            // Filling or clearing a whole array: one replace instead of one operation per element.
            emit(.replace(path: currentPointer(), value: .array(new)))
            return
        }
        if oldMiddle.isEmpty {
            for (offset, value) in newMiddle.enumerated() {
                emit(.add(path: currentPointer(appending: String(prefix + offset)), value: value))
            }
            return
        }
        if newMiddle.isEmpty {
            // Highest index first so that each index is still valid when its turn comes.
            for index in oldMiddle.indices.reversed() {
                emit(.remove(path: currentPointer(appending: String(index))))
            }
            return
        }
        let identityKey = options.identityKeys.isEmpty
            ? options.identityKey
            : (options.identityKeys[currentPointer()] ?? options.identityKey)
        if let oldIdentities = Self.identityValues(of: oldMiddle, key: identityKey),
           let newPositions = Self.identityPositions(of: newMiddle, key: identityKey) {
            switch diffKeyed(oldMiddle, newMiddle, oldIdentities: oldIdentities, newPositions: newPositions, offset: prefix) {
            case .emitted:
                return
            case .tooManyPlacements:
                emit(.replace(path: currentPointer(), value: .array(new)))
                return
            case .repeatedIdentities:
                break  // Fall back to the sequence diff below.
            }
        }
        if let edits = SequenceEditScript.compute(Array(oldMiddle), Array(newMiddle), maxCost: options.maxSequenceCost) {
            emitSequenceEdits(edits, old: oldMiddle, new: newMiddle, offset: prefix)
            return
        }
        // Past the cost cap a whole replacement is both cheaper to compute and about as small.
        emit(.replace(path: currentPointer(), value: .array(new)))
    }

    /// The identity values of `elements`, or `nil` unless every element is an object with a
    /// `key` member. Uniqueness on the old side is checked while matching (see `diffKeyed`).
    private static func identityValues(of elements: ArraySlice<JSONValue>, key: String) -> [JSONValue]? {
        var values: [JSONValue] = []
        values.reserveCapacity(elements.count)
        for element in elements {
            guard case .object(let object) = element, let identity = object[key] else { return nil }
            values.append(identity)
        }
        return values
    }

    /// Identity value to position, or `nil` unless every element is an object with a `key`
    /// member and the values are unique.
    private static func identityPositions(of elements: ArraySlice<JSONValue>, key: String) -> [JSONValue: Int]? {
        var positions: [JSONValue: Int] = [:]
        positions.reserveCapacity(elements.count)
        var position = 0
        for element in elements {
            guard case .object(let object) = element, let identity = object[key] else { return nil }
            guard positions.updateValue(position, forKey: identity) == nil else { return nil }
            position += 1
        }
        return positions
    }

    /// Diffs two arrays of identified rows: removals, then additions and moves that place each
    /// row after its predecessor in the new order, then inner diffs of rows present in both.
    ///
    /// Rows on a longest increasing subsequence of old positions (in new order) never move, so a
    /// single relocated row costs one `move` however long the array is.
    ///
    /// - Returns: Whether operations were emitted; if not, nothing was emitted.
    private mutating func diffKeyed(
        _ old: ArraySlice<JSONValue>,
        _ new: ArraySlice<JSONValue>,
        oldIdentities: [JSONValue],
        newPositions: [JSONValue: Int],
        offset: Int
    ) -> KeyedOutcome {
        let newCount = new.count
        let producedBefore = produced.count
        // For each new row, its position in `old` (relative to the slice), or -1 if it is new.
        var oldPositionOfNew = [Int](repeating: -1, count: newCount)
        // The array being transformed, as new-row numbers; starts as the surviving old rows.
        var current: [Int] = []
        current.reserveCapacity(newCount)
        var removedPositions: [Int] = []
        for (oldPosition, identity) in oldIdentities.enumerated() {
            if let newPosition = newPositions[identity] {
                // Two old rows claiming one new row: the old ids repeat, so identity is unusable.
                // (Repeats among removed rows are harmless: each is simply removed.)
                if oldPositionOfNew[newPosition] >= 0 { return .repeatedIdentities }
                oldPositionOfNew[newPosition] = oldPosition
                current.append(newPosition)
            } else {
                removedPositions.append(oldPosition)
            }
        }
        var stays = [Bool](repeating: false, count: newCount)
        let stable = Self.longestIncreasingSubsequence(current)
        for row in stable {
            stays[row] = true
        }
        // Each placement costs linear searches of `current`; keep the work within the same
        // O((N + M) · maxSequenceCost) budget as the sequence diff.
        let placements = newCount - stable.count
        let (budget, overflow) = max(options.maxSequenceCost, 0).multipliedReportingOverflow(by: old.count + newCount)
        if placements > 0 && !overflow && placements > budget / max(current.count, 1) {
            return .tooManyPlacements
        }
        for oldPosition in removedPositions.reversed() {
            emit(.remove(path: currentPointer(appending: String(offset + oldPosition))))
        }
        var previousPosition = -1  // position in `current` of row `newRow - 1`, when known
        for newRow in 0..<newCount {
            if stays[newRow] {
                previousPosition = -1
                continue
            }
            if oldPositionOfNew[newRow] >= 0 {
                guard let from = current.firstIndex(of: newRow) else {
                    // Unreachable by construction; undo rather than emit a wrong patch.
                    produced.removeSubrange(producedBefore...)
                    return .repeatedIdentities
                }
                current.remove(at: from)
                let target = Self.position(after: newRow - 1, in: current, known: previousPosition < 0 ? -1 : (previousPosition > from ? previousPosition - 1 : previousPosition))
                current.insert(newRow, at: target)
                if from != target {
                    emit(.move(
                        from: currentPointer(appending: String(offset + from)),
                        path: currentPointer(appending: String(offset + target))
                    ))
                }
                previousPosition = target
            } else {
                let target = Self.position(after: newRow - 1, in: current, known: previousPosition)
                current.insert(newRow, at: target)
                emit(.add(path: currentPointer(appending: String(offset + target)), value: new[new.startIndex + newRow]))
                previousPosition = target
            }
        }
        // `current` now matches the new order, so row `newRow` sits at `offset + newRow`.
        for newRow in 0..<newCount where oldPositionOfNew[newRow] >= 0 {
            scheduleChild(old[old.startIndex + oldPositionOfNew[newRow]], new[new.startIndex + newRow], token: String(offset + newRow))
        }
        return .emitted
    }

    /// The insertion position right after row `predecessor` (0 when there is none).
    private static func position(after predecessor: Int, in current: [Int], known: Int) -> Int {
        if predecessor < 0 { return 0 }
        if known >= 0 { return known + 1 }
        return (current.firstIndex(of: predecessor) ?? -1) + 1
    }

    /// One longest strictly increasing subsequence of `values` (patience sorting, O(n log n)).
    static func longestIncreasingSubsequence(_ values: [Int]) -> [Int] {
        guard !values.isEmpty else { return [] }
        var tailPositions: [Int] = []  // tailPositions[l]: position of the smallest tail of a run of length l + 1
        var predecessors = [Int](repeating: -1, count: values.count)
        for (position, value) in values.enumerated() {
            var low = 0
            var high = tailPositions.count
            while low < high {
                let middle = (low + high) / 2
                if values[tailPositions[middle]] < value { low = middle + 1 } else { high = middle }
            }
            if low > 0 { predecessors[position] = tailPositions[low - 1] }
            if low == tailPositions.count {
                tailPositions.append(position)
            } else {
                tailPositions[low] = position
            }
        }
        var result: [Int] = []
        result.reserveCapacity(tailPositions.count)
        var position = tailPositions.last ?? -1
        while position >= 0 {
            result.append(values[position])
            position = predecessors[position]
        }
        result.reverse()
        return result
    }

    /// Turns an edit script into operations. A run of deletions and insertions between kept
    /// elements is paired up position by position (so a changed element becomes a `replace` or
    /// inner operations, not `remove` + `add`); the excess becomes `remove`s or `add`s.
    private mutating func emitSequenceEdits(
        _ edits: [SequenceEditScript.Edit],
        old: ArraySlice<JSONValue>,
        new: ArraySlice<JSONValue>,
        offset: Int
    ) {
        var position = offset
        var deleted: [Int] = []
        var inserted: [Int] = []
        for edit in edits {
            switch edit {
            case .keep:
                flushRun(&deleted, &inserted, old: old, new: new, position: &position)
                position += 1
            case .delete(let oldIndex):
                deleted.append(oldIndex)
            case .insert(let newIndex):
                inserted.append(newIndex)
            }
        }
        flushRun(&deleted, &inserted, old: old, new: new, position: &position)
    }

    private mutating func flushRun(
        _ deleted: inout [Int],
        _ inserted: inout [Int],
        old: ArraySlice<JSONValue>,
        new: ArraySlice<JSONValue>,
        position: inout Int
    ) {
        let paired = min(deleted.count, inserted.count)
        for pair in 0..<paired {
            scheduleChild(old[old.startIndex + deleted[pair]], new[new.startIndex + inserted[pair]], token: String(position + pair))
        }
        if deleted.count > paired {
            for extra in (paired..<deleted.count).reversed() {
                emit(.remove(path: currentPointer(appending: String(position + extra))))
            }
        } else {
            for extra in paired..<inserted.count {
                emit(.add(path: currentPointer(appending: String(position + extra)), value: new[new.startIndex + inserted[extra]]))
            }
        }
        position += inserted.count
        deleted.removeAll(keepingCapacity: true)
        inserted.removeAll(keepingCapacity: true)
    }

    // MARK: - Paths

    private func currentPointer() -> JSONPointer {
        JSONPointer(tokens: path)
    }

    private func currentPointer(appending token: String) -> JSONPointer {
        var tokens = path
        tokens.append(token)
        return JSONPointer(tokens: tokens)
    }
}
