/// The unit cases of an app and its root: what `GET /api/units` lists and where sessions start.
public struct UnitRegistry: Sendable {
    /// The unit a new session starts on.
    public let root: UnitCase
    /// Every registered unit, the root first, each name once.
    public let units: [UnitCase]
    private let byName: [String: UnitCase]

    /// A registry of `units` starting at `root` (added if missing); a later unit with a name
    /// already taken is ignored.
    /// - Parameters:
    ///   - root: the unit new sessions start on.
    ///   - units: the other units.
    public init(root: UnitCase, units: [UnitCase]) {
        var byName: [String: UnitCase] = [:]
        var ordered: [UnitCase] = []
        for unit in [root] + units where byName[unit.name] == nil {
            byName[unit.name] = unit
            ordered.append(unit)
        }
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
