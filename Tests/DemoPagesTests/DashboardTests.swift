@testable import DemoPages
import JSONPatch
import MVVMR
import MVVMRTesting
import Testing

@Suite struct DashboardTests {
    static let opened: JSONValue = [
        "clock": ["time": "14:03:07", "ticks": 0],
        "quote": [
            "text": "Simplicity is prerequisite for reliability.", "author": "Edsger W. Dijkstra", "index": 0,
        ],
        "stats": ["ticks": 0, "shuffles": 0],
    ]

    @Test func opensWithThreePartsAndTheirActions() throws {
        let tester = try PageTester(.dashboard, services: demoServices())
        #expect(tester.view == Self.opened)
        #expect(
            tester.actions == [
                ActionDescriptor(name: "quote.shuffle", valueType: .none),
                ActionDescriptor(name: "stats.reset", valueType: .none),
            ])
    }

    @Test func theClockTicksEverySecondAndTheStatsCountTheTicks() throws {
        let tester = try PageTester(.dashboard, services: demoServices())
        tester.advance(by: .milliseconds(999))
        tester.advance(by: .milliseconds(1)) { view in
            view[at: "/clock/time"] = "14:03:08"
            view[at: "/clock/ticks"] = 1
            view[at: "/stats/ticks"] = 1
        }
        tester.advance(by: .seconds(3)) { view in
            view[at: "/clock/time"] = "14:03:11"
            view[at: "/clock/ticks"] = 4
            view[at: "/stats/ticks"] = 4
        }
    }

    @Test func eachTickIsItsOwnPatch() throws {
        let tester = try PageTester(.dashboard, services: demoServices())
        let events = tester.advance(by: .seconds(3)) { view in
            view[at: "/clock/time"] = "14:03:10"
            view[at: "/clock/ticks"] = 3
            view[at: "/stats/ticks"] = 3
        }
        let patches = events.compactMap { event -> PagePatch? in
            if case .patch(let patch) = event.kind { return patch }
            return nil
        }
        #expect(patches.map(\.rev) == [1, 2, 3])
        #expect(
            patches.last?.patch
                == JSONPatch([
                    .replace(path: try pointer("/clock/time"), value: "14:03:10"),
                    .replace(path: try pointer("/clock/ticks"), value: 3),
                    .replace(path: try pointer("/stats/ticks"), value: 3),
                ]))
    }

    @Test func shuffleShowsAnotherQuoteAndTheStatsCountIt() throws {
        // The script picks among the other quotes: 0 → the first other than 0 (1); then 3 → 4 (skips 1);
        // then 0 → 0.
        let tester = try PageTester(.dashboard, services: demoServices(random: ScriptedRandom([0, 3, 0])))
        tester.send(DashboardQuoteAction.shuffle, part: "quote") { view in
            view[at: "/quote"] = [
                "text": "Make it work, make it right, make it fast.", "author": "Kent Beck", "index": 1,
            ]
            view[at: "/stats/shuffles"] = 1
        }
        tester.send(DashboardQuoteAction.shuffle, part: "quote") { view in
            view[at: "/quote"] = [
                "text": "Programs must be written for people to read.", "author": "Harold Abelson", "index": 4,
            ]
            view[at: "/stats/shuffles"] = 2
        }
        tester.send(DashboardQuoteAction.shuffle, part: "quote") { view in
            view[at: "/quote"] = [
                "text": "Simplicity is prerequisite for reliability.", "author": "Edsger W. Dijkstra", "index": 0,
            ]
            view[at: "/stats/shuffles"] = 3
        }
    }

    @Test func aShuffleNeverShowsTheSameQuote() {
        let count = DashboardQuoteViewModel.quotes.count
        for current in 0..<count {
            for pick in 0..<(count - 1) {
                let next = DashboardQuoteViewModel.otherIndex(
                    than: current, count: count, random: ScriptedRandom([pick]))
                #expect(next != current)
                #expect((0..<count).contains(next))
            }
        }
        // Out-of-range randomness is clamped, never out of the list.
        #expect(DashboardQuoteViewModel.otherIndex(than: 0, count: count, random: ScriptedRandom([99])) == count - 1)
        #expect(DashboardQuoteViewModel.otherIndex(than: 0, count: 1, random: ScriptedRandom([0])) == 0)
    }

    @Test func resetZeroesTheStatsOnly() throws {
        let tester = try PageTester(.dashboard, services: demoServices(random: ScriptedRandom([2])))
        tester.advance(by: .seconds(2)) { view in
            view[at: "/clock/time"] = "14:03:09"
            view[at: "/clock/ticks"] = 2
            view[at: "/stats/ticks"] = 2
        }
        tester.send(DashboardQuoteAction.shuffle, part: "quote") { view in
            view[at: "/quote"] = [
                "text": "The best way to predict the future is to invent it.", "author": "Alan Kay", "index": 3,
            ]
            view[at: "/stats/shuffles"] = 1
        }
        tester.send(
            DashboardStatsAction.reset, part: "stats",
            patch: [
                .replace(path: try pointer("/stats/ticks"), value: 0),
                .replace(path: try pointer("/stats/shuffles"), value: 0),
            ])
        tester.advance(by: .seconds(1)) { view in
            view[at: "/clock/time"] = "14:03:10"
            view[at: "/clock/ticks"] = 3
            view[at: "/stats/ticks"] = 1
        }
    }

    @Test func thePartsShareTheActivityTheirPageOpenedAndItsTimerEndsWithThem() throws {
        let scheduler = Scheduler.virtual()
        let context = UnitContext(unit: "dashboard", services: demoServices(), scheduler: scheduler)
        _ = DashboardViewModel(context: context)
        let clock = try DashboardClockViewModel(context: context).transform(NoInput())
        let stats = try DashboardStatsViewModel(context: context).transform(Relay<Void>().signal)
        var clockTicks: [Int] = []
        var statsTicks: [Int] = []
        let first = clock.subscribe { clockTicks.append($0.ticks) }
        let second = stats.state.subscribe { statsTicks.append($0.ticks) }
        #expect(scheduler.scheduledTimerCount == 1)
        scheduler.advance(by: .seconds(2))
        #expect(clockTicks == [0, 1, 2])
        #expect(statsTicks == [0, 1, 2])
        first.dispose()
        second.dispose()
        #expect(scheduler.scheduledTimerCount == 0)
        // A part without its page has nothing shared to read: its binding fails.
        #expect(throws: PageError.self) {
            try DashboardClockViewModel(context: UnitContext(unit: "dashboard", scheduler: scheduler))
        }
    }

    @Test func theClockAndTheStatsShareOneTimer() {
        let scheduler = Scheduler.virtual()
        let activity = DashboardActivity(scheduler: scheduler)
        var clock: [Int] = []
        var stats: [Int] = []
        let first = activity.ticks.subscribe { clock.append($0) }
        let second = activity.ticks.subscribe { stats.append($0) }
        #expect(scheduler.scheduledTimerCount == 1)
        scheduler.advance(by: .seconds(2))
        #expect(clock == [0, 1])
        #expect(stats == [0, 1])
        first.dispose()
        second.dispose()
        #expect(scheduler.scheduledTimerCount == 0)
    }

    @Test func timeOfDayIsUTCWithTwoDigits() {
        #expect(UTCDateTime(secondsSince1970: 0).time == "00:00:00")
        #expect(UTCDateTime(secondsSince1970: fixedInstant).time == "14:03:07")
        #expect(UTCDateTime(secondsSince1970: 86_399).time == "23:59:59")
        #expect(UTCDateTime(secondsSince1970: 86_400 + 3_600 + 61).time == "01:01:01")
        #expect(UTCDateTime(secondsSince1970: -1).time == "23:59:59")
    }
}
