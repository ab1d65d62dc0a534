import JSONPatch

/// The page a View writes: binds Output drivers at JSON Pointer paths of the page's document and
/// Output routes to the session's router.
///
/// Everything bound is subscribed once and disposed when the page is released. A part's View gets a
/// `Page` whose paths are relative to the part's mount path.
///
/// ```swift
/// func bind(_ output: ListOutput, to page: Page) {
///     page.bind(output.title, at: "/title")
///     page.bind(output.rows, at: "/rows", identifiedBy: "key")
///     page.route(output.route)
/// }
/// ```
public struct Page {
    @usableFromInline let document: PageDocument
    @usableFromInline let base: JSONPointer
    @usableFromInline let subscriptions: SubscriptionBag
    let turn: SessionTurn

    init(document: PageDocument, base: JSONPointer, subscriptions: SubscriptionBag, turn: SessionTurn) {
        self.document = document
        self.base = base
        self.subscriptions = subscriptions
        self.turn = turn
    }

    /// The unit's name.
    public var unit: String { document.unit }

    /// Writes the driver's current value at `path` now and each change after.
    ///
    /// Arrays of objects are diffed by identity: elements keep their `id` key (or `identifiedBy`), so
    /// a one-row change is a one-row patch.
    /// - Parameters:
    ///   - driver: the Output to show.
    ///   - path: where in the document, relative to this page (or part).
    ///   - identityKey: for an array of objects, the key that identifies an element, if not `id`.
    @inlinable
    public func bind<Value: JSONRepresentable>(
        _ driver: Driver<Value>, at path: PagePath, identifiedBy identityKey: String? = nil
    ) {
        bind(driver, at: path, identifiedBy: identityKey) { $0.jsonValue }
    }

    /// Writes the driver's current array at `path` now and each change after, writing only the elements
    /// that changed when few did.
    ///
    /// Elements are compared with the array written before: when a handful changed in place and each
    /// kept its identity (its `id` member, or `identifiedBy`), only those elements are converted to JSON
    /// and written, so a one-row change in a long list costs one row, not the list. Any other change
    /// (rows added, removed, moved, or many changed) writes the whole array, which is then diffed by
    /// identity as usual.
    /// - Parameters:
    ///   - driver: the Output to show.
    ///   - path: where in the document, relative to this page (or part).
    ///   - identityKey: for an array of objects, the key that identifies an element, if not `id`.
    @inlinable
    public func bind<Element: JSONRepresentable & Equatable>(
        _ driver: Driver<[Element]>, at path: PagePath, identifiedBy identityKey: String? = nil
    ) {
        guard let pointer = resolve(path) else { return }
        if let identityKey { document.setIdentityKey(identityKey, forArrayAt: pointer) }
        let document = self.document
        let key = identityKey ?? "id"
        var written: [Element]?
        driver.subscribe { elements in
            defer { written = elements }
            if let written, written.count == elements.count {
                // Compared here, where the element type is known, so the loop is specialized.
                let limit = max(1, elements.count / 8)
                var changes: [PageDocument.ElementChange] = []
                var isSmall = true
                for index in elements.indices where elements[index] != written[index] {
                    guard changes.count < limit else {
                        isSmall = false
                        break
                    }
                    changes.append(PageDocument.ElementChange(index: index, value: elements[index].jsonValue))
                }
                if isSmall, document.writeElements(changes, at: pointer, count: elements.count, identityKey: key) {
                    return
                }
            }
            document.write(elements.jsonValue, at: pointer)
        }.disposed(by: subscriptions)
    }

    /// Writes `transform` of the driver's current value at `path` now and of each change after.
    /// - Parameters:
    ///   - driver: the Output to show.
    ///   - path: where in the document, relative to this page (or part).
    ///   - identityKey: for an array of objects, the key that identifies an element, if not `id`.
    ///   - transform: turns a value into JSON.
    @inlinable
    public func bind<Value>(
        _ driver: Driver<Value>, at path: PagePath, identifiedBy identityKey: String? = nil,
        as transform: @escaping (Value) -> JSONValue
    ) {
        guard let pointer = resolve(path) else { return }
        if let identityKey { document.setIdentityKey(identityKey, forArrayAt: pointer) }
        let document = self.document
        driver.subscribe { document.write(transform($0), at: pointer) }.disposed(by: subscriptions)
    }

    /// Writes each event of `signal` at `path`; until the first event the path is absent.
    /// - Parameters:
    ///   - signal: the Output to show.
    ///   - path: where in the document, relative to this page (or part).
    @inlinable
    public func bind<Value: JSONRepresentable>(_ signal: Signal<Value>, at path: PagePath) {
        guard let pointer = resolve(path) else { return }
        let document = self.document
        signal.subscribe { document.write($0.jsonValue, at: pointer) }.disposed(by: subscriptions)
    }

    /// Sends each route of `routes` to the session's router. Routes are handled after the event that
    /// caused them has run through every stream, in the same turn.
    /// - Parameter routes: the ViewModel's navigation Output.
    public func route(_ routes: Signal<Route>) {
        let turn = self.turn
        let unit = document.unit
        routes.subscribe { turn.requestNavigation($0, from: unit) }.disposed(by: subscriptions)
    }

    /// Keeps `subscription` until the page is released: for Outputs a View consumes itself.
    /// - Parameter subscription: the subscription to dispose with the page.
    public func keep(_ subscription: Subscription) {
        subscriptions.insert(subscription)
    }

    /// A page for a part mounted at `pointer` below this page's base.
    func part(at pointer: JSONPointer) -> Page {
        Page(
            document: document, base: JSONPointer(tokens: base.tokens + pointer.tokens),
            subscriptions: subscriptions, turn: turn)
    }

    @usableFromInline
    func resolve(_ path: PagePath) -> JSONPointer? {
        guard let pointer = path.pointer else {
            document.recordBindingFailure("\"\(path.text)\" is not a JSON Pointer")
            return nil
        }
        return base.tokens.isEmpty ? pointer : JSONPointer(tokens: base.tokens + pointer.tokens)
    }
}
