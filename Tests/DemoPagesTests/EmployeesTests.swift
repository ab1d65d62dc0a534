@testable import DemoPages
import JSONPatch
import MVVMR
import MVVMRTesting
import Testing

@Suite struct EmployeesTests {
    static let few = [
        Employee(id: 1, name: "Tiger Nixon", salary: 320_800, age: 61),
        Employee(id: 2, name: "Garrett Winters", salary: 170_750, age: 63, profileImage: "garrett.png"),
    ]

    static let loading: JSONValue = [
        "status": "loading", "message": "Loading employees…", "employees": [], "count": 0,
    ]

    @Test func loadsTheDataFileAfterBinding() async throws {
        let tester = try PageTester(.employees, services: demoServices())
        #expect(tester.view == Self.loading)
        #expect(tester.session.pendingWorkCount == 1)
        let expected = try await FileEmployeeService(path: dataDirectory + "/employees.json", latency: .zero)
            .employees()
        let events = await tester.runPendingWork { view in
            view[at: "/status"] = "loaded"
            view[at: "/message"] = JSONValue.null
            view[at: "/employees"] = .array(expected.map(employeeJSON))
            view[at: "/count"] = 24
        }
        // The list arrives later as a patch of its own (the server pushes it over SSE).
        #expect(events.count == 1)
        guard case .patch(let patch) = events.first?.kind else {
            Issue.record("expected one patch, got \(events)")
            return
        }
        #expect(patch.unit == "employees")
        #expect(patch.rev == 1)
        #expect(patch.patch.operations.map(\.path.tokens) == [["status"], ["message"], ["employees"], ["count"]])
        #expect(
            tester.view[at: "/employees/0"]
                == [
                    "id": 1, "employee_name": "Tiger Nixon", "employee_salary": 320_800, "employee_age": 61,
                    "profile_image": "",
                ])
    }

    @Test func aFailureShowsItsReasonAndReloadRecovers() async throws {
        let service = ScriptedEmployeeService([.failure(.unavailable("the server is down")), .success(Self.few)])
        let tester = try PageTester(.employees, services: demoServices(employees: service))
        await tester.runPendingWork { view in
            view[at: "/status"] = "failed"
            view[at: "/message"] = "Could not load employees: the server is down"
        }
        tester.send(EmployeesAction.reload) { view in
            view[at: "/status"] = "loading"
            view[at: "/message"] = "Loading employees…"
        }
        await tester.runPendingWork { view in
            view[at: "/status"] = "loaded"
            view[at: "/message"] = JSONValue.null
            view[at: "/employees"] = .array(Self.few.map(employeeJSON))
            view[at: "/count"] = 2
        }
        #expect(service.callCount == 2)
    }

    @Test func reloadKeepsTheListWhileLoadingAndAfterAFailure() async throws {
        let service = ScriptedEmployeeService([.success(Self.few), .failure(.unavailable("timeout"))])
        let tester = try PageTester(.employees, services: demoServices(employees: service))
        await tester.runPendingWork { view in
            view[at: "/status"] = "loaded"
            view[at: "/message"] = JSONValue.null
            view[at: "/employees"] = .array(Self.few.map(employeeJSON))
            view[at: "/count"] = 2
        }
        tester.send(EmployeesAction.reload) { view in
            view[at: "/status"] = "loading"
            view[at: "/message"] = "Loading employees…"
        }
        await tester.runPendingWork { view in
            view[at: "/status"] = "failed"
            view[at: "/message"] = "Could not load employees: timeout"
        }
    }

    @Test func aNewerReloadCancelsTheOlderLoad() async throws {
        let service = ScriptedEmployeeService([.success(Self.few)])
        let tester = try PageTester(.employees, services: demoServices(employees: service))
        tester.send(EmployeesAction.reload)  // already loading: the view stays the same, the first load is dropped
        #expect(tester.session.pendingWorkCount == 1)
        await tester.runPendingWork { view in
            view[at: "/status"] = "loaded"
            view[at: "/message"] = JSONValue.null
            view[at: "/employees"] = .array(Self.few.map(employeeJSON))
            view[at: "/count"] = 2
        }
        #expect(service.callCount == 1)
    }

    @Test func aMissingDataFileIsAFailureOfTheLoad() async throws {
        var services = demoServices()
        services.register(
            FileEmployeeService(path: dataDirectory + "/missing.json", latency: .zero) as any EmployeeService,
            as: (any EmployeeService).self)
        let tester = try PageTester(.employees, services: services)
        await tester.runPendingWork { view in
            view[at: "/status"] = "failed"
            view[at: "/message"] = .string(
                "Could not load employees: cannot read \(dataDirectory)/missing.json (errno 2)")
        }
    }

    @Test func theDataFileHoldsTwentyFourDistinctEmployees() async throws {
        let employees = try await FileEmployeeService(path: dataDirectory + "/employees.json", latency: .zero)
            .employees()
        #expect(employees.count == 24)
        #expect(Set(employees.map(\.id)).count == 24)
        #expect(employees.allSatisfy { !$0.name.isEmpty && $0.salary > 0 && $0.age > 0 })
    }

    @Test func aFileThatIsNotAListIsMalformed() async throws {
        // Package.swift is not JSON at all.
        let service = FileEmployeeService(path: dataDirectory + "/../Package.swift", latency: .zero)
        await #expect {
            _ = try await service.employees()
        } throws: { error in
            guard case .malformed = error as? EmployeeLoadError else { return false }
            return true
        }
    }
}

/// An employee as the page shows it.
func employeeJSON(_ employee: Employee) -> JSONValue {
    [
        "id": .int(employee.id), "employee_name": .string(employee.name), "employee_salary": .int(employee.salary),
        "employee_age": .int(employee.age), "profile_image": .string(employee.profileImage),
    ]
}
