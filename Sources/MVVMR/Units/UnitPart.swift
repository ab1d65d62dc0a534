import JSONPatch

/// A sub-view of a page: a unit case whose View and ViewModel are bound inside another unit's page,
/// writing under a sub-path of its document (the seed's view managers).
///
/// Its actions are listed among the page's actions as `name.action`, and are POSTed that way:
/// a part `quote` whose View declares `shuffle` receives the page action `quote.shuffle`.
///
/// ```swift
/// static let dashboard = UnitCase("dashboard", view: DashboardView.self, viewModel: DashboardViewModel.self,
///                                 parts: [UnitPart("clock", .clock), UnitPart("quote", .quote)])
/// ```
public struct UnitPart: Sendable, Hashable {
    /// The part's name: the prefix of its actions.
    public let name: String
    /// The View and ViewModel pairing of the part.
    public let unit: UnitCase
    /// Where the part writes in the page's document; `/name` unless given.
    public let path: JSONPointer

    /// Mounts `unit` as the part `name`, at `/name` of the page's document.
    /// - Parameters:
    ///   - name: the part's name, also the prefix of its actions.
    ///   - unit: the pairing bound for the part.
    public init(_ name: String, _ unit: UnitCase) {
        self.init(name, unit, at: JSONPointer(tokens: [name]))
    }

    /// Mounts `unit` as the part `name`, at `path` of the page's document.
    /// - Parameters:
    ///   - name: the part's name, also the prefix of its actions.
    ///   - unit: the pairing bound for the part.
    ///   - path: where the part writes; must not be the document root.
    public init(_ name: String, _ unit: UnitCase, at path: JSONPointer) {
        self.name = name
        self.unit = unit
        self.path = path
    }
}
