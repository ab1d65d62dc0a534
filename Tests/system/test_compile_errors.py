"""Mistakes a page's author can make that must not compile (issue 16): a misspelled action, in the View or in a
PageTester test, and a View paired with a ViewModel whose Input or Output differ.

Each case is a small source file type-checked by `swiftc` against the modules of the debug build (the one the
other system tests run): first the correct page, which must compile (so a failure below is the mistake's, not the
set-up's), then each mistake, which must fail with the compiler's message naming it.
"""
import os
import shutil
import subprocess
import tempfile

import pytest

from conftest import ROOT

MODULES = os.path.join(ROOT, ".build", "debug", "Modules")

PAGE = """\
import MVVMR

struct TodoState: Codable, Equatable, Sendable { var items: [String] = [] }
enum TodoAction: String, PageAction { case add, clear }

struct TodoView: View {
    typealias Output = StateOutput<TodoState>
    func input(from actions: Actions<TodoAction>) -> Signal<String?> {
        .merge(actions.signal(.add, of: String.self).map { Optional($0) }, actions.signal(.clear).map { nil })
    }
}

final class TodoViewModel: ViewModel {
    private let reducer = StateReducer<TodoState, String?>(TodoState())
    init(context: UnitContext) {}
    func transform(_ events: Signal<String?>) -> StateOutput<TodoState> {
        reducer.run(events) { state, added in
            if let added { state.items.append(added) } else { state.items = [] }
        }
    }
}

/// Another page's ViewModel: its Input is not the todo View's.
final class CounterViewModel: ViewModel {
    init(context: UnitContext) {}
    func transform(_ input: Signal<Int>) -> StateOutput<TodoState> { StateOutput(state: .just(TodoState())) }
}

extension UnitCase {
    static let todo = UnitCase("todo", view: TodoView.self, viewModel: TodoViewModel.self)
}
"""

TEST = """\
import MVVMRTesting
import Testing

@Test func adds() throws {
    let tester = try PageTester(.todo)
    tester.send(TodoAction.add, "milk") { $0[at: "/items"] = ["milk"] }
}
"""


def typecheck(*sources):
    """`swiftc -typecheck` of `sources` (file contents) against the debug build's modules: (exit status, output)."""
    if shutil.which("swiftc") is None:
        pytest.fail("swiftc is not on PATH: the Swift toolchain is required")
    if not os.path.isdir(MODULES):
        pytest.fail(f"{MODULES} is missing: build first (swift build --build-tests)")
    with tempfile.TemporaryDirectory() as directory:
        paths = []
        for index, source in enumerate(sources):
            path = os.path.join(directory, f"file{index}.swift")
            with open(path, "w") as file:
                file.write(source)
            paths.append(path)
        result = subprocess.run(
            ["swiftc", "-typecheck", "-parse-as-library", "-swift-version", "6", "-I", MODULES, *paths],
            capture_output=True, text=True, timeout=300)
        return result.returncode, result.stdout + result.stderr


def test_the_correct_page_and_its_test_compile():
    status, output = typecheck(PAGE, TEST)
    assert status == 0, output


def test_a_misspelled_action_in_the_view_does_not_compile():
    page = PAGE.replace("actions.signal(.add, of: String.self)", "actions.signal(.ad, of: String.self)")
    assert page != PAGE
    status, output = typecheck(page)
    assert status != 0
    assert "type 'TodoAction' has no member 'ad'" in output, output


def test_a_misspelled_action_in_a_test_does_not_compile():
    test = TEST.replace("TodoAction.add", "TodoAction.addd")
    status, output = typecheck(PAGE, test)
    assert status != 0
    assert "type 'TodoAction' has no member 'addd'" in output, output


def test_a_view_paired_with_another_pages_view_model_does_not_compile():
    page = PAGE.replace(
        'UnitCase("todo", view: TodoView.self, viewModel: TodoViewModel.self)',
        'UnitCase("todo", view: TodoView.self, viewModel: CounterViewModel.self)')
    status, output = typecheck(page)
    assert status != 0
    assert "requires the types 'Signal<String?>' and 'Signal<Int>' be equivalent" in output, output
