import JSONPatch
import MVVMR
import MVVMRTesting
import Testing

// Edge cases of a whole state bound at the root, found in review: each probe moves a page through a list of states
// and compares the page after each step with the whole state encoded (nil as null).

protocol ProbeSequence: Codable, Equatable, Sendable { static var sequence: [Self] { get } }
enum ProbeAction: String, PageAction { case step }
struct ProbeView<S: ProbeSequence>: View {
    typealias Output = StateOutput<S>
    func input(from actions: Actions<ProbeAction>) -> Signal<Int> { actions.signal(.step, of: Int.self) }
}
final class ProbeVM<S: ProbeSequence>: ReducerViewModel {
    let reducer: StateReducer<S, Int>
    init(context: UnitContext, state: S?) throws { reducer = StateReducer(state ?? S.sequence[0]) }
    func transform(_ events: Signal<Int>) -> StateOutput<S> {
        reducer.run(events) { state, index in state = S.sequence[index] }
    }
}

func expectedView<S: Encodable>(_ s: S) throws -> JSONValue {
    var e = JSONValueEncoder(); e.writesNilMembers = true
    return try e.encode(s)
}

/// Runs through S.sequence, comparing the page with the whole state encoded (nil as null) at each step.
func runProbe<S: ProbeSequence>(_: S.Type, _ name: String) throws -> [String] {
    let tester = try PageTester(UnitCase(name, view: ProbeView<S>.self, viewModel: ProbeVM<S>.self))
    var mismatches: [String] = []
    if tester.view != (try expectedView(S.sequence[0])) {
        mismatches.append("step 0: page \(tester.view) expected \(try expectedView(S.sequence[0]))")
    }
    for index in 1..<S.sequence.count {
        _ = try tester.session.perform("step", value: .int(index), on: name)
        let page = try tester.session.snapshot(of: name).view
        guard let want = try? expectedView(S.sequence[index]) else { continue }
        if page != want { mismatches.append("step \(index): page \(page) expected \(want)") }
    }
    tester.finish()
    return mismatches
}

// A: Float?, Int64?, UInt8? going nil.
struct NarrowOptionals: ProbeSequence {
    var ratio: Float?
    var big: Int64?
    var small: UInt8?
    var label: String?
    static let sequence = [
        NarrowOptionals(ratio: 0.5, big: 7, small: 1, label: "x"),
        NarrowOptionals(ratio: nil, big: nil, small: nil, label: nil),
    ]
}

// B: a member left out by a custom encode(to:).
struct ConditionalMember: ProbeSequence {
    var error: String?
    var count: Int
    enum CodingKeys: String, CodingKey { case error, count }
    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        if let error { try c.encode(error, forKey: .error) }
        try c.encode(count, forKey: .count)
    }
    static let sequence = [ConditionalMember(error: "bad", count: 1), ConditionalMember(error: nil, count: 2)]
}

// C: superEncoder(forKey:) / superEncoder().
struct WithSuper: ProbeSequence {
    var inner: Int
    var outer: Int
    enum CodingKeys: String, CodingKey { case outer, base }
    init(inner: Int, outer: Int) { self.inner = inner; self.outer = outer }
    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        outer = try c.decode(Int.self, forKey: .outer)
        inner = try c.superDecoder(forKey: .base).container(keyedBy: CodingKeys.self).decode(Int.self, forKey: .outer)
    }
    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(outer, forKey: .outer)
        let sup = c.superEncoder(forKey: .base)
        var s = sup.container(keyedBy: CodingKeys.self)
        try s.encode(inner, forKey: .outer)
    }
    static let sequence = [WithSuper(inner: 1, outer: 2), WithSuper(inner: 3, outer: 2)]
}

// D: a dictionary state losing a key.
extension Dictionary: ProbeSequence where Key == String, Value == Int {
    static var sequence: [[String: Int]] { [["a": 1], [:]] }
}

struct DictState: ProbeSequence {
    var tags: [String: Int]
    func encode(to encoder: any Encoder) throws { try tags.encode(to: encoder) }
    init(tags: [String: Int]) { self.tags = tags }
    init(from decoder: any Decoder) throws { tags = try [String: Int](from: decoder) }
    static let sequence = [DictState(tags: ["a": 1, "b": 2]), DictState(tags: ["a": 1])]
}

// G: a row that fails to encode, then is fixed: the rows changed meanwhile must still be written.
struct Measure: Codable, Equatable, Sendable, Identifiable { var id: Int; var value: Double }
struct MeasureState: ProbeSequence {
    var rows: [Measure]
    static let sequence = [
        MeasureState(rows: (1...2).map { Measure(id: $0, value: 1) }),
        MeasureState(rows: [Measure(id: 1, value: 2), Measure(id: 2, value: .nan)]),
        MeasureState(rows: [Measure(id: 1, value: 2), Measure(id: 2, value: 3)]),
    ]
}

// Sanity: synthesized state with many member kinds, enum payload, rows whose id changes.
enum Mode: Codable, Equatable, Sendable { case idle, busy(Int), failed(String) }
struct Mixed: ProbeSequence {
    var mode: Mode
    var rows: [Measure]
    var maybe: [Measure]?
    var n: Double
    static let sequence = [
        Mixed(mode: .idle, rows: (1...16).map { Measure(id: $0, value: 1) }, maybe: nil, n: 1),
        Mixed(mode: .busy(1), rows: (1...16).map { Measure(id: $0 == 3 ? 99 : $0, value: 1) }, maybe: [], n: 2.5),
        Mixed(mode: .failed("x"), rows: (1...15).map { Measure(id: $0, value: 2) }, maybe: nil, n: -1),
        Mixed(mode: .busy(2), rows: (1...15).map { Measure(id: $0, value: $0 == 4 ? 5 : 2) }, maybe: [Measure(id: 1, value: 0)], n: -1),
    ]
}


struct TwoFlags: Codable, Equatable, Sendable { var a = 0; var b = 0 }
enum ReentryAction: String, PageAction { case go }
struct ReentryView: View {
    typealias Output = StateOutput<TwoFlags>
    func input(from actions: Actions<ReentryAction>) -> Signal<Int> { actions.signal(.go).map { 0 } }
}
final class ReentryVM: ReducerViewModel {
    let reducer: StateReducer<TwoFlags, Int>
    init(context: UnitContext, state: TwoFlags?) throws { reducer = StateReducer(state ?? TwoFlags()) }
    func transform(_ events: Signal<Int>) -> StateOutput<TwoFlags> {
        let reducer = self.reducer
        return reducer.run(events) { state, event in
            if event == 0 {
                state.a = 1
                reducer.send(1)  // e.g. a synchronous callback of a service the reducer calls
            } else {
                state.b = 1
            }
        }
    }
}


@Suite struct StateBindingEdgeTests {
    @Test func optionalsOfEveryNumberTypeGoingNilAreWrittenAsNull() throws {
        #expect(try runProbe(NarrowOptionals.self, "narrow").isEmpty)
    }

    @Test func aMemberAHandWrittenEncodeLeavesOutBecomesNull() throws {
        let tester = try PageTester(UnitCase("conditional", view: ProbeView<ConditionalMember>.self, viewModel: ProbeVM<ConditionalMember>.self))
        #expect(tester.view == ["error": "bad", "count": 1])
        tester.send(ProbeAction.step, 1) { view in
            view[at: "/error"] = .null
            view[at: "/count"] = 2
        }
    }

    @Test func aStateEncodingAsADictionaryKeepsAKeyThatLeftAsNull() throws {
        let tester = try PageTester(UnitCase("dict", view: ProbeView<DictState>.self, viewModel: ProbeVM<DictState>.self))
        #expect(tester.view["a"] == 1 && tester.view["b"] == 2)
        tester.send(ProbeAction.step, 1) { $0[at: "/b"] = .null }
    }

    @Test func aSuperEncoderOrADictionaryStateIsRefusedNotWrittenWrong() {
        for unit in [
            UnitCase("withSuper", view: ProbeView<WithSuper>.self, viewModel: ProbeVM<WithSuper>.self),
            UnitCase("dictionary", view: ProbeView<[String: Int]>.self, viewModel: ProbeVM<[String: Int]>.self),
        ] {
            do {
                _ = try PageTester(unit)
                Issue.record("\(unit.name) was bound")
            } catch let error as PageError {
                #expect(error.code == .bindingFailed)
                #expect(error.message.contains("super encoder") || error.message.contains("dictionary"), "\(error.message)")
            } catch {
                Issue.record("\(unit.name): \(error)")
            }
        }
    }

    @Test func rowsThatFailedToEncodeAreWrittenOnceTheyDo() throws {
        #expect(try runProbe(MeasureState.self, "measure").isEmpty)
    }

    @Test func enumsWithPayloadsRowsWhoseIdChangesAndOptionalArrays() throws {
        #expect(try runProbe(Mixed.self, "mixed").isEmpty)
    }

    @Test func anEventSentFromInsideTheReduceFunctionIsAppliedAfterIt() throws {
        let tester = try PageTester(UnitCase("reentry", view: ReentryView.self, viewModel: ReentryVM.self))
        tester.send(ReentryAction.go) { view in
            view[at: "/a"] = 1
            view[at: "/b"] = 1
        }
    }
}
