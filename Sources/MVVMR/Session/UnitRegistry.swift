/// The unit cases of an app and its root: what `GET /api/units` lists and where sessions start.
public struct UnitRegistry: Sendable {
    /// The registry's contents, made once and shared by every copy (each session holds one pointer).
    private final class Contents: Sendable {
        let root: UnitCase
        let units: [UnitCase]
        let byName: [String: UnitCase]
        let problems: [String]

        init(root: UnitCase, units: [UnitCase], byName: [String: UnitCase], problems: [String]) {
            self.root = root
            self.units = units
            self.byName = byName
            self.problems = problems
        }
    }

    private let contents: Contents

    /// The unit a new session starts on.
    public var root: UnitCase { contents.root }
    /// Every registered unit, the root first, each name once.
    public var units: [UnitCase] { contents.units }
    /// The mistakes in the app's units, each naming its unit: a name used by two different units, an action
    /// case a View does not declare, parts sharing a name or a path. A server refuses to start while there is
    /// one (``UnitCase/problems``).
    public var problems: [String] { contents.problems }

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
        contents = Contents(root: root, units: ordered, byName: byName, problems: problems)
    }

    /// The unit named `name`, or nil.
    /// - Parameter name: a unit's name.
    public func unit(named name: String) -> UnitCase? {
        contents.byName[name]
    }
}
