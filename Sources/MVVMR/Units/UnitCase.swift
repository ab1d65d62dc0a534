import JSONPatch

/// A named pairing of one View type and one ViewModel type: one route of the app.
///
/// Declare unit cases as static members so routes read like enum cases:
///
/// ```swift
/// extension UnitCase {
///     static let greeting = UnitCase("greeting", view: GreetingView.self, viewModel: GreetingViewModel.self)
/// }
/// // a ViewModel routes with .push(.greeting)
/// ```
///
/// The pairing is checked at compile time: the initializer requires the View's Input and Output to
/// be the ViewModel's Input and Output, so a mismatched pair does not compile:
///
/// ```swift
/// UnitCase("broken", view: GreetingView.self, viewModel: LoginViewModel.self)
/// // error: initializer 'init(_:view:viewModel:parts:)' requires the types 'GreetingInput' and
/// //        'LoginInput' be equivalent
/// ```
///
/// The unit's actions (with those of its parts) are known without a session, from `actions`.
public struct UnitCase: Sendable, Hashable, CustomStringConvertible {
    /// What a unit case declares, made once and shared by every copy: a session's pages and registry hold one
    /// pointer each, not the declaration's fields.
    private final class Definition: Sendable {
        let name: String
        let actions: [ActionDescriptor]
        let parts: [UnitPart]
        let isRestorable: Bool
        let entry: UnitEntry
        let bindPair: @Sendable (UnitContext, ActionRegistry, String, Page, JSONValue?) throws -> BoundPair
        let problems: [String]
        let viewSchema: JSONValue
        let declaration: String

        init(
            name: String, actions: [ActionDescriptor], parts: [UnitPart], isRestorable: Bool, entry: UnitEntry,
            problems: [String], viewSchema: JSONValue, declaration: String,
            bindPair: @escaping @Sendable (UnitContext, ActionRegistry, String, Page, JSONValue?) throws -> BoundPair
        ) {
            self.name = name
            self.actions = actions
            self.parts = parts
            self.isRestorable = isRestorable
            self.entry = entry
            self.problems = problems
            self.viewSchema = viewSchema
            self.declaration = declaration
            self.bindPair = bindPair
        }
    }

    private let definition: Definition

    /// The unit's name: its route is `/name`, its API is `/api/pages/name`.
    public var name: String { definition.name }
    /// The actions the unit's View declares, then those of its parts as `part.action`.
    public var actions: [ActionDescriptor] { definition.actions }
    /// The sub-views mounted in the unit's page.
    public var parts: [UnitPart] { definition.parts }
    /// Whether the unit's ViewModel is a ``RestorableViewModel`` (its page can be saved in a session snapshot,
    /// when its parts' can too).
    public var isRestorable: Bool { definition.isRestorable }
    /// Whether a client may open the unit by deep link, or only a page's own navigation reaches it.
    public var entry: UnitEntry { definition.entry }
    /// Makes the View and the ViewModel (from a saved state, when one is given: see ``RestorableViewModel``),
    /// wires Input → ViewModel → Output → page, and returns what must stay alive as long as the page. It
    /// captures only metatypes, so it is `Sendable`.
    var bindPair: @Sendable (UnitContext, ActionRegistry, String, Page, JSONValue?) throws -> BoundPair {
        definition.bindPair
    }
    /// Mistakes in the declaration found when it was made (an action case the View does not declare, a
    /// part's name or path used twice); ``UnitRegistry/problems`` reports them when the app starts.
    public var problems: [String] { definition.problems }
    /// The JSON Schema of the page's view (with its parts at their paths), derived from the Output's state type
    /// when it is a whole state; `{}` (anything) when the View binds path by path.
    public var viewSchema: JSONValue { definition.viewSchema }
    /// What the unit pairs, for telling two units of one name apart: its View and ViewModel types (by identity, so
    /// two modules' types of one name differ), its parts and its entry rule.
    var declaration: String { definition.declaration }

    /// Pairs `view` with `viewModel` under `name`.
    /// - Parameters:
    ///   - name: the unit's name, unique in the app.
    ///   - view: the View type; its Input and Output must be the ViewModel's.
    ///   - viewModel: the ViewModel type.
    ///   - parts: sub-views mounted in this unit's page, each with its own View and ViewModel.
    ///   - entry: whether clients may open it by deep link (``UnitEntry/deepLink``, the default) or only a
    ///     page's own navigation reaches it (``UnitEntry/flowOnly``).
    public init<ViewType: View, ViewModelType: ViewModel>(
        _ name: String, view: ViewType.Type, viewModel: ViewModelType.Type, parts: [UnitPart] = [],
        entry: UnitEntry = .deepLink
    ) where ViewType.Input == ViewModelType.Input, ViewType.Output == ViewModelType.Output {
        // Listing the actions runs the View's declarations against a registry that no session uses.
        let registry = ActionRegistry()
        _ = ViewType().input(from: Actions<ViewType.Action>(registry: registry, prefix: ""))
        var actions = registry.descriptors
        var problems: [String] = []
        for action in ViewType.Action.allCases where registry.entry(named: action.actionName) == nil {
            problems.append("unit \(name): its View does not declare the action \(action.actionName)")
        }
        var partNames: Set<String> = []
        var partPaths: Set<JSONPointer> = []
        for part in parts {
            if !partNames.insert(part.name).inserted { problems.append("unit \(name): two parts are named \(part.name)") }
            if !partPaths.insert(part.path).inserted { problems.append("unit \(name): two parts write at \(part.path)") }
            for other in parts where other.name != part.name && part.path.isProperPrefix(of: other.path) {
                problems.append("unit \(name): the part \(other.name) writes inside the part \(part.name)")
            }
            if part.path.tokens.isEmpty { problems.append("unit \(name): the part \(part.name) is mounted at the root") }
            problems += part.unit.problems.map { "\($0) (a part of \(name))" }
        }
        // `ObjectIdentifier`s print the types' addresses: unique, unlike their names.
        let declaration =
            "\(ObjectIdentifier(ViewType.self)) \(ObjectIdentifier(ViewModelType.self)) \(entry) "
            + parts.map { "\($0.name)@\($0.path)" }.joined(separator: ",")
        let viewSchema = Self.schema(of: ViewType.Output.self, parts: parts)
        for part in parts {
            actions += part.unit.actions.map {
                ActionDescriptor(name: part.name + "." + $0.name, valueType: $0.valueType, schema: $0.schema)
            }
        }
        let bindPair: @Sendable (UnitContext, ActionRegistry, String, Page, JSONValue?) throws -> BoundPair = {
            context, registry, prefix, page, savedState in
            let view = ViewType()
            let input = view.input(from: Actions<ViewType.Action>(registry: registry, prefix: prefix))
            let viewModel: ViewModelType
            if let savedState {
                viewModel = try Self.restoredViewModel(ViewModelType.self, context: context, from: savedState)
            } else {
                viewModel = try ViewModelType(context: context)
            }
            let output = try viewModel.transform(input)
            view.bind(output, to: page)
            return BoundPair(view: view, viewModel: viewModel)
        }
        let isRestorable = ViewModelType.self is any RestorableViewModel.Type
        definition = Definition(
            name: name, actions: actions, parts: parts, isRestorable: isRestorable, entry: entry, problems: problems,
            viewSchema: viewSchema, declaration: declaration, bindPair: bindPair)
    }

    private init(
        name: String, actions: [ActionDescriptor], parts: [UnitPart], entry: UnitEntry, viewSchema: JSONValue,
        bindPair: @escaping @Sendable (UnitContext, ActionRegistry, String, Page, JSONValue?) throws -> BoundPair
    ) {
        definition = Definition(
            name: name, actions: actions, parts: parts, isRestorable: false, entry: entry, problems: [],
            viewSchema: viewSchema, declaration: "failing " + name, bindPair: bindPair)
    }

    /// The view schema of a unit whose Output is `output`, with its parts' schemas at their mount paths.
    private static func schema(of output: Any.Type, parts: [UnitPart]) -> JSONValue {
        var schema = (output as? any StateSchemaDescribing.Type)?.stateSchema ?? [:]
        guard !parts.isEmpty else { return schema }
        if schema.objectValue?.isEmpty ?? true { schema = ["type": "object"] }
        for part in parts {
            schema = JSONSchema.placing(part.unit.viewSchema, at: part.path.tokens[...], in: schema)
        }
        return schema
    }

    /// A ViewModel of `type` made from its saved state (as JSON); throws when `type` is not restorable or the
    /// state does not decode (the page is then bound fresh, like a page whose code changed).
    private static func restoredViewModel<Model: ViewModel>(
        _ type: Model.Type, context: UnitContext, from savedState: JSONValue
    ) throws -> Model {
        guard let restorable = type as? any RestorableViewModel.Type else {
            throw PageError(.bindingFailed, "\(type) is not a RestorableViewModel")
        }
        guard let model = try restored(restorable, context: context, from: savedState) as? Model else {
            throw PageError(.bindingFailed, "\(type) did not restore as itself")
        }
        return model
    }

    private static func restored<Model: RestorableViewModel>(
        _ type: Model.Type, context: UnitContext, from savedState: JSONValue
    ) throws -> Model {
        try Model(context: context, restoring: try JSONValueDecoder().decode(Model.SavedState.self, from: savedState))
    }

    /// The same unit (name, actions, parts, entry rule), whose binding throws `error` before it makes a View or a
    /// ViewModel: a route whose value cannot be encoded goes here, so that its navigation fails the way
    /// a failed binding does, reported in the result's `navigationFailure`.
    /// - Parameter error: the error binding throws.
    func failingToBind(with error: PageError) -> UnitCase {
        UnitCase(name: name, actions: actions, parts: parts, entry: entry, viewSchema: viewSchema) { _, _, _, _, _ in
            throw error
        }
    }

    /// The unit's route in the browser, `/name`.
    public var route: String { "/" + name }

    /// The unit's name.
    public var description: String { name }

    /// Unit cases are equal when their names are.
    public static func == (left: UnitCase, right: UnitCase) -> Bool { left.name == right.name }

    /// Hashes the name.
    public func hash(into hasher: inout Hasher) { hasher.combine(name) }
}

/// The View and ViewModel of one bound page (or part), kept alive while the page lives.
struct BoundPair {
    let view: Any
    let viewModel: Any

    /// The ViewModel's saved state as JSON: nil for a ViewModel that is not a ``RestorableViewModel``, one not at a
    /// quiet point, or one whose state does not encode. Read only when a snapshot is taken, so the pair keeps no
    /// closure for it (every bound page would hold one).
    var savedState: JSONValue? {
        guard let restorable = viewModel as? any RestorableViewModel else { return nil }
        return Self.encodedState(of: restorable)
    }

    private static func encodedState<Model: RestorableViewModel>(of viewModel: Model) -> JSONValue? {
        viewModel.savedState.flatMap { try? JSONValueEncoder().encode($0) }
    }
}
