/// A named channel of values that any session (or service) may publish and every subscribing page, on every node,
/// receives: the board's posts, a price feed, a broadcast notice.
///
/// A topic is a name and the type of its values. The values cross sessions (and nodes) as JSON, coded with the
/// stdlib-only `JSONValueEncoder`/`JSONValueDecoder`, so two apps agree on a shape, not on a Swift type. Declare a
/// topic once, as a static member (a computed one: a generic type holds no static stored property), so pages
/// read `.board`:
///
/// ```swift
/// struct BoardPost: Codable, Sendable, Hashable { let author: String; let text: String }
/// extension Topic where Value == BoardPost {
///     static var board: Topic<BoardPost> { Topic("board") }
/// }
/// // in a ViewModel:  let posts = context.messages(on: .board)       // Signal<BoardPost>
/// // in its View:     page.publish(output.post, on: .board)
/// ```
///
/// Names are made of letters, digits, `-` and `_` (``TopicName/isValid(_:)``): a bus across nodes maps a name to one
/// subject token (`mvvmr.topic.<name>` on NATS). A page subscribed to a topic whose name is not valid receives
/// nothing from other nodes' buses, and a value published on it is dropped by them.
public struct Topic<Value: Codable & Sendable>: Sendable, Hashable {
    /// The topic's name, the same on every node.
    public let name: String

    /// A topic named `name`, whose values are `Value`s.
    /// - Parameter name: letters, digits, `-` and `_`.
    public init(_ name: String) {
        self.name = name
    }
}

/// The names a topic may have, whatever its value type.
public enum TopicName {
    /// The longest name a topic may have, in bytes.
    public static let maxLength = 64

    /// Whether `name` is a topic name: 1 to ``maxLength`` ASCII letters, digits, `-` or `_`.
    /// - Parameter name: the name to check.
    public static func isValid(_ name: String) -> Bool {
        let bytes = name.utf8
        guard !bytes.isEmpty, bytes.count <= maxLength else { return false }
        return bytes.allSatisfy { byte in
            (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z"))
                || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
                || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || byte == UInt8(ascii: "-")
                || byte == UInt8(ascii: "_")
        }
    }
}
