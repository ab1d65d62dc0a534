/// Why a page of counter rows could not be loaded; its description follows "Could not load page 3: ".
public enum CounterPageError: Error, Sendable, Hashable, CustomStringConvertible {
    /// There is no such page.
    case noSuchPage(Int)
    /// The service is unavailable (used by fakes and outages).
    case unavailable(String)

    /// A sentence for people.
    public var description: String {
        switch self {
        case .noSuchPage(let number): "there is no page \(number)"
        case .unavailable(let reason): reason
        }
    }
}
