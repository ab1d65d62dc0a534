import DemoPages
import JSONPatch
import MVVMR
import Synchronization

/// The package's `Data/` directory, found from this file's path (Tests/DemoPagesTests/TestSupport.swift).
let dataDirectory: String = {
    var parts = String(#filePath).split(separator: "/", omittingEmptySubsequences: false)
    parts.removeLast(3)
    return parts.joined(separator: "/") + "/Data"
}()

/// 14:03:07 UTC on 2026-11-29.
let fixedInstant = 1_795_960_987

/// The demo's services with every latency at zero and the clock stopped at `fixedInstant`.
func demoServices(
    employees: (any EmployeeService)? = nil, counterPages: (any CounterPagesService)? = nil,
    random: (any RandomSource)? = nil
) -> Services {
    var services = DemoApp.services(
        employeeLatency: .zero, counterLatency: .zero, authLatency: .zero, dataDirectory: dataDirectory)
    services.register(FixedWallClock(seconds: fixedInstant) as any WallClock, as: (any WallClock).self)
    if let employees { services.register(employees, as: (any EmployeeService).self) }
    if let counterPages { services.register(counterPages, as: (any CounterPagesService).self) }
    if let random { services.register(random, as: (any RandomSource).self) }
    return services
}

/// An employee service answering from a script, one answer per call; the last answer repeats.
final class ScriptedEmployeeService: EmployeeService {
    private let answers: Mutex<[Result<[Employee], EmployeeLoadError>]>
    private let calls = Mutex(0)

    init(_ answers: [Result<[Employee], EmployeeLoadError>]) {
        self.answers = Mutex(answers)
    }

    /// How many loads were asked for.
    var callCount: Int { calls.withLock { $0 } }

    func employees() async throws -> [Employee] {
        calls.withLock { $0 += 1 }
        let answer = answers.withLock { answers -> Result<[Employee], EmployeeLoadError> in
            if answers.count > 1 { return answers.removeFirst() }
            return answers.first ?? .failure(.unavailable("no answer scripted"))
        }
        return try answer.get()
    }
}

/// Generated counter pages (no latency) whose listed page numbers fail once each.
final class FlakyCounterPages: CounterPagesService {
    private let pages = GeneratedCounterPages(latency: .zero)
    private let failing: Mutex<Set<Int>>
    private let requested = Mutex<[Int]>([])

    init(failingOnce: Set<Int>) {
        failing = Mutex(failingOnce)
    }

    /// The page numbers asked for, in order.
    var requests: [Int] { requested.withLock { $0 } }

    var pageSize: Int { pages.pageSize }

    func firstPage() -> CounterPage { pages.firstPage() }

    func page(_ number: Int) async throws -> CounterPage {
        requested.withLock { $0.append(number) }
        if failing.withLock({ $0.remove(number) }) != nil {
            throw CounterPageError.unavailable("the server is down")
        }
        return try await pages.page(number)
    }
}

/// Randomness from a script, one number per call; 0 once the script is used up.
final class ScriptedRandom: RandomSource {
    private let numbers: Mutex<[Int]>

    init(_ numbers: [Int]) {
        self.numbers = Mutex(numbers)
    }

    func index(below upperBound: Int) -> Int {
        numbers.withLock { $0.isEmpty ? 0 : $0.removeFirst() }
    }
}

/// The JSON of counter rows `first...last`, counts at zero.
func counterRows(_ range: ClosedRange<Int>) -> JSONValue {
    .array(range.map { ["id": .int($0), "title": .string("Row \($0)"), "count": 0] })
}

/// A JSON Pointer from a literal path of a test.
func pointer(_ path: String) throws -> JSONPointer {
    try JSONPointer(path)
}
