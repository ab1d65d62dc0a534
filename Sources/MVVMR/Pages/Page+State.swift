import JSONPatch

extension Page {
    /// Writes a whole `Codable` state at `path` (the page's root unless given) now and at each change after:
    /// each of its members at its own path, and only the members that changed.
    ///
    /// Members are compared with what was written before, as Swift values: an unchanged member costs one
    /// comparison and is not encoded again. An array member of `Equatable` elements writes only the elements
    /// that changed when few did and each kept its `id`, so one changed row of a long list is one patch
    /// operation; any other change writes the whole array, which is then diffed by `id` as usual. Optionals
    /// that are nil are written as `null`, so the view always has every member.
    ///
    /// ```swift
    /// struct CountersState: Codable, Equatable { var rows: [CounterRow]; var status: String }
    /// page.bind(state)          // {"rows": [...], "status": "..."}
    /// ```
    /// - Parameters:
    ///   - state: the state to show; it must encode as an object (a struct or class with members).
    ///   - path: where in the document, relative to this page (or part); the root by default.
    @_disfavoredOverload
    public func bind<State: Encodable & Equatable>(_ state: Driver<State>, at path: PagePath = PagePath(.root)) {
        bindState(at: path) { write in state.subscribe(write) }
    }

    /// Writes a whole state at `path` as ``bind(_:at:)`` describes, from whatever `attach` hands its writer: a
    /// Driver's values, or a reducer's states handed straight to the writer (no stream node between them).
    /// - Parameters:
    ///   - path: where in the document, relative to this page (or part).
    ///   - attach: hands the writer the state now and each new one after, until the subscription it returns is
    ///     disposed (with the page).
    func bindState<State: Encodable & Equatable>(
        at path: PagePath = PagePath(.root), attach: (@escaping (State) -> Void) -> Subscription
    ) {
        guard let pointer = resolve(path) else { return }
        guard !(State.self is any KeyedCollectionState.Type) else {
            // Its members would come in hashing order, which differs from one process to the next.
            document.recordBindingFailure("a state bound whole must be a struct or a class, not a dictionary")
            return
        }
        // The binding's closure keeps the writer's owner alive beside the writer: once the closure goes (the page
        // released, or its stream graph dropped without a release), the owner breaks the cycle of the writer and its
        // kept container.
        let writer = StateWriter(document: document, pointer: pointer)
        let owner = StateWriterOwner(writer)
        // No comparison of the whole state first: each member compares itself, which costs the same when nothing
        // changed and saves a second pass over the state when something did.
        attach { state in withExtendedLifetime(owner) { writer.write(state) } }.disposed(by: subscriptions)
    }

    /// Writes a value of any `Encodable` type at `path` now and at each change after: the whole value, encoded
    /// as JSON (nil optionals as `null`), then diffed.
    /// - Parameters:
    ///   - driver: the Output to show.
    ///   - path: where in the document, relative to this page (or part).
    @_disfavoredOverload
    public func bind<Value: Encodable>(_ driver: Driver<Value>, at path: PagePath) {
        guard let pointer = resolve(path) else { return }
        let document = self.document
        driver.subscribe { value in
            do {
                document.write(try StateWriter.encoder.encode(value), at: pointer)
            } catch {
                document.recordBindingFailure("\(Value.self) at \(pointer) does not encode: \(error)")
            }
        }.disposed(by: subscriptions)
    }
}

/// Writes the members of a state into a page's document, each only when it changed.
///
/// Members come in the same order at every write (a type's `encode(to:)` encodes them so), so each is found at
/// the next slot without hashing its key. A scalar member is compared as JSON; any other member has a handler
/// made at its first write, which keeps its last value and compares as its own type, with no dynamic cast after
/// the first write.
final class StateWriter {
    /// The encoder of page values: nil optionals are written as `null`.
    static let encoder: JSONValueEncoder = {
        var encoder = JSONValueEncoder()
        encoder.writesNilMembers = true
        return encoder
    }()

    /// One member: where it is written, and what was written there.
    struct Slot {
        let key: String
        /// Where it is written, made by the first write once the page is bound (see ``memberPointer(_:)``).
        var pointer: JSONPointer?
        /// A scalar member's JSON (or `null` for nil); nil for a member with a handler.
        var scalar: JSONValue?
        /// The number of the last write that encoded this member (wrapping: only compared for equality).
        var seen: UInt32
        var handler: (any MemberHandler)?
    }

    let document: PageDocument
    let pointer: JSONPointer
    private var slots: [Slot] = []
    private var cursor = 0
    /// The writes so far (wrapping), and how many slots the current one has encoded.
    private var writes: UInt32 = 0
    private var seenCount = 0
    /// The container the state's `encode(to:)` asked for last. It holds the writer strongly: the writer's
    /// ``StateWriterOwner`` sets it to nil when it goes, breaking the cycle.
    var keptContainer: KeptContainer?

    init(document: PageDocument, pointer: JSONPointer) {
        self.document = document
        self.pointer = pointer
    }

    /// Writes the members of `state` that changed since the last call.
    func write<State: Encodable>(_ state: State) {
        cursor = 0
        writes &+= 1
        seenCount = 0
        do {
            try state.encode(to: StateMemberEncoder(writer: self))
        } catch {
            document.recordBindingFailure("\(State.self) at \(pointer) does not encode: \(error)")
            return
        }
        // A member this write left out (a hand-written `encode(to:)` that skips it) is `null` now, as a nil one is:
        // the view never keeps a value the state no longer has.
        guard seenCount < slots.count else { return }
        for index in slots.indices where slots[index].seen != writes {
            slots[index].seen = writes
            if slots[index].scalar == .null { continue }
            (slots[index].scalar, slots[index].handler) = (.null, nil)
            document.write(.null, at: memberPointer(index))
        }
    }

    /// Notes that the current write encoded the member at `index`.
    @inline(__always)
    private func markSeen(_ index: Int) {
        if slots[index].seen != writes {
            slots[index].seen = writes
            seenCount += 1
        }
    }

    /// The slot of `key`: the next one when members come in their usual order.
    private func slotIndex(for key: String) -> Int? {
        if cursor < slots.count, slots[cursor].key == key {
            cursor += 1
            markSeen(cursor - 1)
            return cursor - 1
        }
        guard let index = slots.firstIndex(where: { $0.key == key }) else { return nil }
        cursor = index + 1
        markSeen(index)
        return index
    }

    private func newSlot(_ key: String, scalar: JSONValue?, handler: (any MemberHandler)?) -> Int {
        slots.append(Slot(key: key, pointer: nil, scalar: scalar, seen: writes, handler: handler))
        seenCount += 1
        cursor = slots.count
        return slots.count - 1
    }

    /// Where the member of slot `index` is written. Kept from the first write after the page was bound: a page only
    /// bound (most idle sessions' pages) keeps no pointer per member, and one that changes makes each once.
    private func memberPointer(_ index: Int) -> JSONPointer {
        if let kept = slots[index].pointer { return kept }
        let made = pointer.appending(slots[index].key)
        if document.recordsChanges { slots[index].pointer = made }
        return made
    }

    /// Writes a scalar member (or `null`), unless it is what was written there.
    func writeScalar(_ json: JSONValue, forKey key: String) {
        if let index = slotIndex(for: key) {
            if slots[index].scalar == json { return }
            slots[index].scalar = json
            slots[index].handler = nil
            document.write(json, at: memberPointer(index))
            return
        }
        let index = newSlot(key, scalar: json, handler: nil)
        document.write(json, at: memberPointer(index))
    }

    /// Writes the member `key` holding `value`, unless it equals what was written for it.
    func writeMember<Value: Encodable>(_ value: Value, forKey key: String) throws {
        if let index = slotIndex(for: key) {
            if let handler = slots[index].handler, try handler.write(value, to: document, at: memberPointer(index)) {
                return
            }
            let handler = MemberHandlers.handler(for: value)
            slots[index].handler = handler
            slots[index].scalar = nil
            document.write(try handler.json(of: value), at: memberPointer(index))
            return
        }
        let handler = MemberHandlers.handler(for: value)
        let index = newSlot(key, scalar: nil, handler: handler)
        document.write(try handler.json(of: value), at: memberPointer(index))
    }
}

/// Keeps one member's last value and writes the member when a new value differs.
protocol MemberHandler: AnyObject {
    /// Writes `value` at `pointer` if it differs from the last one; false, having written nothing, when `value`
    /// is not of the handler's type (a new handler is then made).
    func write<Value: Encodable>(_ value: Value, to document: PageDocument, at pointer: JSONPointer) throws -> Bool
    /// The JSON of a first value, which the handler keeps as its last one.
    func json<Value: Encodable>(of value: Value) throws -> JSONValue
}

/// Makes member handlers.
enum MemberHandlers {
    /// The handler for a member of `value`'s type: element by element for an array of `Equatable` elements,
    /// compared whole for another `Equatable`, written every time otherwise.
    static func handler<Value: Encodable>(for value: Value) -> any MemberHandler {
        if let elements = value as? any ElementwiseWritable { return elements.makeHandler() }
        if let equatable = value as? any Encodable & Equatable { return equatableHandler(equatable) }
        return AlwaysWrittenMember()
    }

    private static func equatableHandler<Value: Encodable & Equatable>(_ value: Value) -> any MemberHandler {
        EquatableMember(value)
    }

    /// `value` as a `Target`, when it is one (checked by type identity, so no dynamic cast).
    @inline(__always)
    static func cast<Value, Target>(_ value: Value, to target: Target.Type) -> Target? {
        guard Value.self == Target.self else { return nil }
        return withUnsafePointer(to: value) { $0.withMemoryRebound(to: Target.self, capacity: 1) { $0.pointee } }
    }
}

/// A member of an `Equatable` type: written when it differs from the last value.
final class EquatableMember<Member: Encodable & Equatable>: MemberHandler {
    private var last: Member

    init(_ value: Member) {
        last = value
    }

    func write<Value: Encodable>(_ value: Value, to document: PageDocument, at pointer: JSONPointer) throws -> Bool {
        guard let member = MemberHandlers.cast(value, to: Member.self) else { return false }
        if member == last { return true }
        // Kept as the last value only once written: a value that fails to encode is compared again next time.
        document.write(try StateWriter.encoder.encode(member), at: pointer)
        last = member
        return true
    }

    func json<Value: Encodable>(of value: Value) throws -> JSONValue {
        try StateWriter.encoder.encode(value)
    }
}

/// A member of a type that is not `Equatable`: written every time (the document's diff finds what changed).
final class AlwaysWrittenMember: MemberHandler {
    func write<Value: Encodable>(_ value: Value, to document: PageDocument, at pointer: JSONPointer) throws -> Bool {
        document.write(try StateWriter.encoder.encode(value), at: pointer)
        return true
    }

    func json<Value: Encodable>(of value: Value) throws -> JSONValue {
        try StateWriter.encoder.encode(value)
    }
}

/// An array member of `Equatable` elements: when few elements changed in place and each kept its identity, only
/// those are written; otherwise the whole array, which the document then diffs by identity.
final class ElementwiseMember<Element: Encodable & Equatable>: MemberHandler {
    private var last: [Element]
    /// An element's JSON: its own `jsonValue` when it is ``JSONRepresentable``, else its `Encodable` encoding.
    private let json: (Element) throws -> JSONValue
    /// The member identifying the elements (`id` unless the page set another), read at the first change.
    private var identityKey: String?
    /// `[Element].self`, looked up once: in generic code, naming the type looks its metadata up at every use.
    private let arrayType: Any.Type

    init(_ elements: [Element]) {
        last = elements
        arrayType = [Element].self
        if let representable = Element.self as? any JSONRepresentable.Type {
            json = Self.converter(through: representable)
        } else {
            json = { try StateWriter.encoder.encode($0) }
        }
    }

    /// An element's JSON through `Representable`'s `jsonValue`, `Representable` being `Element` itself. The types are
    /// compared once, here: the converter then reads the element as a `Representable` in place, without an
    /// `Optional<Representable>`, whose metadata generic code would look up at every element.
    private static func converter<Representable: JSONRepresentable>(
        through type: Representable.Type
    ) -> (Element) throws -> JSONValue {
        guard Element.self == Representable.self else { return { try StateWriter.encoder.encode($0) } }
        return { element in
            withUnsafePointer(to: element) {
                $0.withMemoryRebound(to: Representable.self, capacity: 1) { $0.pointee.jsonValue }
            }
        }
    }

    func write<Value: Encodable>(_ value: Value, to document: PageDocument, at pointer: JSONPointer) throws -> Bool {
        guard let elements = array(value) else { return false }
        // `last` becomes `elements` only once they are written: rows that failed to encode are compared again.
        if elements.count == last.count {
            let limit = Swift.max(1, elements.count / 8)
            // Elements whose bytes are the same are the same value (an unchanged row shares its strings' storage with
            // the row it was copied from), so they are passed over without copying them out or calling `==`; only
            // the others are compared as values.
            var changes: [PageDocument.ElementChange] = []
            let isSmall = try elements.withUnsafeBufferPointer { new in
                try last.withUnsafeBufferPointer { old -> Bool in
                    guard let newBase = new.baseAddress, let oldBase = old.baseAddress else { return true }
                    for index in 0..<new.count {
                        if Self.sameBytes(newBase + index, oldBase + index) || new[index] == old[index] { continue }
                        guard changes.count < limit else { return false }
                        changes.append(PageDocument.ElementChange(index: index, value: try json(new[index])))
                    }
                    return true
                }
            }
            if isSmall && changes.isEmpty {
                last = elements
                return true
            }
            let key = identityKey ?? document.identityKey(at: pointer)
            identityKey = key
            if isSmall, document.writeElements(changes, at: pointer, count: elements.count, identityKey: key) {
                last = elements
                return true
            }
        }
        document.write(.array(try elements.map(json)), at: pointer)
        last = elements
        return true
    }

    /// `value` as the array it is, when it is an `[Element]` (checked by type identity).
    @inline(__always)
    private func array<Value>(_ value: Value) -> [Element]? {
        guard Value.self == arrayType else { return nil }
        return unsafeBitCast(value, to: [Element].self)
    }

    /// Whether the two elements' bytes are the same (padding included, so a difference there only means "compare").
    private static func sameBytes(_ first: UnsafePointer<Element>, _ second: UnsafePointer<Element>) -> Bool {
        let size = MemoryLayout<Element>.size
        let left = UnsafeRawPointer(first)
        let right = UnsafeRawPointer(second)
        var offset = 0
        while offset + 8 <= size {
            if left.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
                != right.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
            {
                return false
            }
            offset += 8
        }
        while offset < size {
            if left.load(fromByteOffset: offset, as: UInt8.self) != right.load(fromByteOffset: offset, as: UInt8.self) {
                return false
            }
            offset += 1
        }
        return true
    }

    func json<Value: Encodable>(of value: Value) throws -> JSONValue {
        guard let elements = array(value) else {
            return try StateWriter.encoder.encode(value)
        }
        return .array(try elements.map(json))
    }
}

/// An array whose elements can be compared one by one, so that a few changed elements are written alone.
protocol ElementwiseWritable {
    /// A handler that keeps this array as its last value.
    func makeHandler() -> any MemberHandler
}

extension Array: ElementwiseWritable where Element: Encodable & Equatable {
    func makeHandler() -> any MemberHandler {
        ElementwiseMember(self)
    }
}

/// The `Encoder` a state encodes its members into: each member goes to its ``StateWriter``.
struct StateMemberEncoder: Encoder {
    let writer: StateWriter
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        // A state encodes its members through the same container at every write: made once and kept by the writer
        // (a container is a type-erasing box, and making it looks two generic types up at run time).
        if let kept = writer.keptContainer, kept.keyType == ObjectIdentifier(Key.self) {
            return unsafeDowncast(kept, to: KeptKeyedContainer<Key>.self).container
        }
        let container = KeyedEncodingContainer(StateMemberContainer<Key>(writer: writer))
        writer.keptContainer = KeptKeyedContainer(container)
        return container
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        writer.document.recordBindingFailure("a state bound whole must be an object, not an array")
        return StateRefusedContainer()
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        writer.document.recordBindingFailure("a state bound whole must be an object, not a single value")
        return StateRefusedContainer()
    }
}

/// The one owner of a ``StateWriter`` outside the writer's own cycle (the writer keeps its state's container, which
/// refers back to it): when the owner goes, the container goes, and the writer with it.
final class StateWriterOwner {
    let writer: StateWriter

    init(_ writer: StateWriter) {
        self.writer = writer
    }

    deinit {
        writer.keptContainer = nil
    }
}

/// A state's keyed container, kept by its ``StateWriter`` from one write to the next: the type of its keys, which
/// tells the ``KeptKeyedContainer`` it is without a dynamic cast.
class KeptContainer {
    let keyType: ObjectIdentifier

    init(keyType: ObjectIdentifier) {
        self.keyType = keyType
    }
}

/// A kept container with keys of type `Key`.
final class KeptKeyedContainer<Key: CodingKey>: KeptContainer {
    let container: KeyedEncodingContainer<Key>

    init(_ container: KeyedEncodingContainer<Key>) {
        self.container = container
        super.init(keyType: ObjectIdentifier(Key.self))
    }
}

/// The keyed container of a ``StateMemberEncoder``.
struct StateMemberContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let writer: StateWriter
    var codingPath: [any CodingKey] { [] }

    mutating func encodeNil(forKey key: Key) throws { writer.writeScalar(.null, forKey: key.stringValue) }
    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        try writer.writeMember(value, forKey: key.stringValue)
    }
    mutating func encodeIfPresent<T: Encodable>(_ value: T?, forKey key: Key) throws {
        if let value { try encode(value, forKey: key) } else { try encodeNil(forKey: key) }
    }
    mutating func encode(_ value: Bool, forKey key: Key) throws { writer.writeScalar(.bool(value), forKey: key.stringValue) }
    mutating func encode(_ value: String, forKey key: Key) throws {
        writer.writeScalar(.string(value), forKey: key.stringValue)
    }
    mutating func encode(_ value: Double, forKey key: Key) throws {
        guard value.isFinite else { return try writer.writeMember(value, forKey: key.stringValue) }  // the encoder's error
        writer.writeScalar(.double(value), forKey: key.stringValue)
    }
    mutating func encode(_ value: Int, forKey key: Key) throws { writer.writeScalar(.int(value), forKey: key.stringValue) }
    mutating func encodeIfPresent(_ value: Bool?, forKey key: Key) throws {
        if let value { try encode(value, forKey: key) } else { try encodeNil(forKey: key) }
    }
    mutating func encodeIfPresent(_ value: String?, forKey key: Key) throws {
        if let value { try encode(value, forKey: key) } else { try encodeNil(forKey: key) }
    }
    mutating func encodeIfPresent(_ value: Double?, forKey key: Key) throws {
        if let value { try encode(value, forKey: key) } else { try encodeNil(forKey: key) }
    }
    mutating func encodeIfPresent(_ value: Int?, forKey key: Key) throws {
        if let value { try encode(value, forKey: key) } else { try encodeNil(forKey: key) }
    }
    mutating func encodeIfPresent(_ value: Float?, forKey key: Key) throws {
        if let value { try encode(value, forKey: key) } else { try encodeNil(forKey: key) }
    }
    mutating func encodeIfPresent(_ value: Int8?, forKey key: Key) throws {
        if let value { try encode(value, forKey: key) } else { try encodeNil(forKey: key) }
    }
    mutating func encodeIfPresent(_ value: Int16?, forKey key: Key) throws {
        if let value { try encode(value, forKey: key) } else { try encodeNil(forKey: key) }
    }
    mutating func encodeIfPresent(_ value: Int32?, forKey key: Key) throws {
        if let value { try encode(value, forKey: key) } else { try encodeNil(forKey: key) }
    }
    mutating func encodeIfPresent(_ value: Int64?, forKey key: Key) throws {
        if let value { try encode(value, forKey: key) } else { try encodeNil(forKey: key) }
    }
    mutating func encodeIfPresent(_ value: UInt?, forKey key: Key) throws {
        if let value { try encode(value, forKey: key) } else { try encodeNil(forKey: key) }
    }
    mutating func encodeIfPresent(_ value: UInt8?, forKey key: Key) throws {
        if let value { try encode(value, forKey: key) } else { try encodeNil(forKey: key) }
    }
    mutating func encodeIfPresent(_ value: UInt16?, forKey key: Key) throws {
        if let value { try encode(value, forKey: key) } else { try encodeNil(forKey: key) }
    }
    mutating func encodeIfPresent(_ value: UInt32?, forKey key: Key) throws {
        if let value { try encode(value, forKey: key) } else { try encodeNil(forKey: key) }
    }
    mutating func encodeIfPresent(_ value: UInt64?, forKey key: Key) throws {
        if let value { try encode(value, forKey: key) } else { try encodeNil(forKey: key) }
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type, forKey key: Key
    ) -> KeyedEncodingContainer<NestedKey> {
        writer.document.recordBindingFailure("a state bound whole encodes its members as values, not nested containers")
        return KeyedEncodingContainer(StateRefusedKeyedContainer<NestedKey>())
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        writer.document.recordBindingFailure("a state bound whole encodes its members as values, not nested containers")
        return StateRefusedContainer()
    }

    // A super encoder's members would mix with the state's own: refused, with a reason, rather than written wrong.
    mutating func superEncoder() -> any Encoder {
        writer.document.recordBindingFailure("a state bound whole cannot encode through a super encoder; bind it at a path")
        return StateRefusedEncoder()
    }
    mutating func superEncoder(forKey key: Key) -> any Encoder { superEncoder() }
}

/// Where the writes of a state that is not an object go: nowhere (the binding failure says why).
struct StateRefusedContainer: UnkeyedEncodingContainer, SingleValueEncodingContainer {
    var codingPath: [any CodingKey] { [] }
    var count: Int { 0 }
    mutating func encodeNil() throws {}
    mutating func encode<T: Encodable>(_ value: T) throws {}
    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        KeyedEncodingContainer(StateRefusedKeyedContainer<NestedKey>())
    }
    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer { StateRefusedContainer() }
    mutating func superEncoder() -> any Encoder { StateRefusedEncoder() }
}

/// A keyed container whose writes go nowhere.
struct StateRefusedKeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    var codingPath: [any CodingKey] { [] }
    mutating func encodeNil(forKey key: Key) throws {}
    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {}
    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type, forKey key: Key
    ) -> KeyedEncodingContainer<NestedKey> {
        KeyedEncodingContainer(StateRefusedKeyedContainer<NestedKey>())
    }
    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer { StateRefusedContainer() }
    mutating func superEncoder() -> any Encoder { StateRefusedEncoder() }
    mutating func superEncoder(forKey key: Key) -> any Encoder { StateRefusedEncoder() }
}

/// An encoder whose writes go nowhere.
struct StateRefusedEncoder: Encoder {
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }
    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        KeyedEncodingContainer(StateRefusedKeyedContainer<Key>())
    }
    func unkeyedContainer() -> any UnkeyedEncodingContainer { StateRefusedContainer() }
    func singleValueContainer() -> any SingleValueEncodingContainer { StateRefusedContainer() }
}

/// A dictionary: refused as a state bound whole (see ``Page/bind(_:at:)``).
protocol KeyedCollectionState {}

extension Dictionary: KeyedCollectionState {}
