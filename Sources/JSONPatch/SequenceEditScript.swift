/// Myers' O(ND) shortest edit script between two arrays of JSON values.
///
/// E. W. Myers, "An O(ND) Difference Algorithm and Its Variations", Algorithmica 1 (1986).
/// The forward greedy pass keeps, per edit distance d, the furthest-reaching x for each
/// diagonal k in -d...d; those snapshots (O(D²) integers) are then walked back to recover the
/// script. Elements are compared by precomputed hash first, then by full equality.
enum SequenceEditScript {
    /// One step of an edit script, in order of the old array.
    enum Edit: Equatable {
        /// The next old element equals the next new element.
        case keep
        /// Old element at this (zero-based) index is deleted.
        case delete(Int)
        /// New element at this (zero-based) index is inserted.
        case insert(Int)
    }

    /// The shortest edit script from `old` to `new`, or `nil` if it needs more than `maxCost`
    /// deletions plus insertions.
    static func compute(_ old: [JSONValue], _ new: [JSONValue], maxCost: Int) -> [Edit]? {
        let oldCount = old.count
        let newCount = new.count
        let oldHashes = old.map(\.hashValue)
        let newHashes = new.map(\.hashValue)
        let maxDistance = min(oldCount + newCount, max(maxCost, 0))
        let center = maxDistance + 1
        var furthest = [Int](repeating: 0, count: 2 * maxDistance + 3)
        var snapshots: [[Int]] = []
        for distance in 0...maxDistance {
            for diagonal in stride(from: -distance, through: distance, by: 2) {
                var x: Int
                if diagonal == -distance || (diagonal != distance && furthest[center + diagonal - 1] < furthest[center + diagonal + 1]) {
                    x = furthest[center + diagonal + 1]
                } else {
                    x = furthest[center + diagonal - 1] + 1
                }
                var y = x - diagonal
                while x < oldCount && y < newCount && oldHashes[x] == newHashes[y] && old[x] == new[y] {
                    x += 1
                    y += 1
                }
                furthest[center + diagonal] = x
                if x >= oldCount && y >= newCount {
                    snapshots.append(Array(furthest[(center - distance)...(center + distance)]))
                    return backtrack(snapshots, oldCount: oldCount, newCount: newCount)
                }
            }
            snapshots.append(Array(furthest[(center - distance)...(center + distance)]))
        }
        return nil
    }

    private static func backtrack(_ snapshots: [[Int]], oldCount: Int, newCount: Int) -> [Edit] {
        var edits: [Edit] = []
        var x = oldCount
        var y = newCount
        var distance = snapshots.count - 1
        while distance > 0 {
            let previous = snapshots[distance - 1]
            // previous[k + distance - 1] is the furthest x on diagonal k after distance - 1 edits.
            func furthest(_ diagonal: Int) -> Int { previous[diagonal + distance - 1] }
            let diagonal = x - y
            let previousDiagonal: Int
            if diagonal == -distance || (diagonal != distance && furthest(diagonal - 1) < furthest(diagonal + 1)) {
                previousDiagonal = diagonal + 1
            } else {
                previousDiagonal = diagonal - 1
            }
            let previousX = furthest(previousDiagonal)
            let previousY = previousX - previousDiagonal
            while x > previousX && y > previousY {
                edits.append(.keep)
                x -= 1
                y -= 1
            }
            if previousDiagonal == diagonal + 1 {
                edits.append(.insert(y - 1))
                y -= 1
            } else {
                edits.append(.delete(x - 1))
                x -= 1
            }
            distance -= 1
        }
        while x > 0 && y > 0 {
            edits.append(.keep)
            x -= 1
            y -= 1
        }
        edits.reverse()
        return edits
    }
}
