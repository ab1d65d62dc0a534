/// The person the greeting page greets: a Model-layer value shared by every session.
public struct Person: Sendable, Hashable, Codable {
    /// The given name.
    public let firstName: String
    /// The family name.
    public let lastName: String

    /// A person.
    /// - Parameters:
    ///   - firstName: the given name.
    ///   - lastName: the family name.
    public init(firstName: String, lastName: String) {
        self.firstName = firstName
        self.lastName = lastName
    }

    /// The name as it is greeted: "David Blaine".
    public var fullName: String { "\(firstName) \(lastName)" }
}
