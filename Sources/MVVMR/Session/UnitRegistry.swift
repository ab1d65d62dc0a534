/// The unit cases of an app and its root: what `GET /api/units` lists and where sessions start.
public struct UnitRegistry: Sendable {
    /// The unit a new session starts on.
    public let root: UnitCase
    /// Every registered unit, the root first, each name once.
    public let units: [UnitCase]
    private let byName: [String: UnitCase]
    /// The mistakes in the app's units, each naming its unit: a name used by two different units, an action
    /// case a View does not declare, parts sharing a name or a path. A server refuses to start while there is
    /// one (``UnitCase/problems``).
    public let problems: [String]

    /// A registry of `units` starting at `root` (added if missing); a later unit with a name
    /// already taken is left out, and reported in ``problems`` unless it is the same declaration again.
    /// - Parameters:
    ///   - root: the unit new sessions start on.
    ///   - units: the other units.
    public init(root: UnitCase, units: [UnitCase]) {
        var byName: [String: UnitCase] = [:]
        var ordered: [UnitCase] = []
        var problems: [String] = []
        for unit in [root] + units {
            if let taken = byName[unit.name] {
                if taken.declaration != unit.declaration {
                    problems.append("unit \(unit.name): two different units are named \(unit.name)")
                }
                continue
            }
            byName[unit.name] = unit
            ordered.append(unit)
            problems += unit.problems
        }
        self.problems = problems
        self.root = root
        self.units = ordered
        self.byName = byName
    }

    /// The unit named `name`, or nil.
    /// - Parameter name: a unit's name.
    public func unit(named name: String) -> UnitCase? {
        byName[name]
    }
}
