import { test, describe } from "node:test";
import assert from "node:assert/strict";
import {
  parseExpression,
  evaluate,
  isTruthy,
  toText,
  classifyAttribute,
  rowKey,
  planList,
  changedPaths,
  pathsOverlap,
  expressionAffected,
  describeView,
  shapeSignature,
  humanize,
  inputTypeFor,
  coerceActionValue,
  ValueError,
} from "../../Public/js/bindings.js";
import { routeOf, unitForPath, navigationForHistoryEntry, historyActionFor, sameStack } from "../../Public/js/routes.js";

const login = { username: "", canSubmit: false, message: "Enter your username", error: null };

describe("binding expressions", () => {
  test("a pointer yields the raw value, missing paths undefined", () => {
    assert.equal(evaluate("/message", login), "Enter your username");
    assert.equal(evaluate("/button/color", { button: { title: "Tap", color: "blue" } }), "blue");
    assert.equal(evaluate("/nope/deeper", login), undefined);
    assert.equal(evaluate("/error", login), null);
  });

  test("the empty pointer is the whole scope (a row's item)", () => {
    assert.equal(evaluate("", "dark"), "dark");
    assert.deepStrictEqual(evaluate("", { id: 1 }), { id: 1 });
  });

  test("! negates truthiness; !! restores it", () => {
    assert.equal(evaluate("!/canSubmit", login), true);
    assert.equal(evaluate("!/canSubmit", { ...login, canSubmit: true }), false);
    assert.equal(evaluate("!!/message", login), true);
    assert.equal(evaluate("!/missing", login), true);
  });

  test("|| is true when any term is", () => {
    const counters = { loading: false, hasMore: true };
    assert.equal(evaluate("/loading || !/hasMore", counters), false);
    assert.equal(evaluate("/loading || !/hasMore", { ...counters, hasMore: false }), true);
    assert.equal(evaluate("/loading || !/hasMore", { ...counters, loading: true }), true);
  });

  test("== and != compare with JSON or bare-word literals", () => {
    assert.equal(evaluate("/status == loading", { status: "loading" }), true);
    assert.equal(evaluate("/status == 'loaded'", { status: "loading" }), false);
    assert.equal(evaluate('/status != "failed"', { status: "loading" }), true);
    assert.equal(evaluate("/count == 0", { count: 0 }), true);
    assert.equal(evaluate("/count == 0", { count: "0" }), false, "types matter");
    assert.equal(evaluate("/error == null", login), true);
    assert.equal(evaluate("/missing == null", login), true);
    assert.equal(evaluate("!/status == loading", { status: "loading" }), false);
  });

  test("JSON Pointer escapes work in bindings", () => {
    assert.equal(evaluate("/a~1b/c~0d", { "a/b": { "c~d": 5 } }), 5);
  });

  test("malformed expressions are rejected", () => {
    assert.throws(() => parseExpression("title"));
    assert.throws(() => parseExpression("/a || b"));
  });

  test("truthiness: null, false, 0, empty string and empty array are false", () => {
    for (const value of [null, undefined, false, 0, "", []]) assert.equal(isTruthy(value), false, JSON.stringify(value));
    for (const value of [true, 1, "x", [0], {}]) assert.equal(isTruthy(value), true, JSON.stringify(value));
  });

  test("text conversion: null is empty, objects are JSON, numbers can be grouped", () => {
    assert.equal(toText(null), "");
    assert.equal(toText(undefined), "");
    assert.equal(toText(false), "false");
    assert.equal(toText(320800), "320800");
    assert.equal(toText(320800, "number"), "320,800");
    assert.equal(toText({ a: 1 }), '{"a":1}');
  });
});

describe("attribute vocabulary", () => {
  test("simple bindings", () => {
    assert.deepStrictEqual(classifyAttribute("data-text", "/greeting"), { kind: "text", name: null, expression: "/greeting" });
    assert.deepStrictEqual(classifyAttribute("data-disabled", "!/canSubmit"), { kind: "disabled", name: null, expression: "!/canSubmit" });
    assert.equal(classifyAttribute("data-show", "/error").kind, "show");
    assert.equal(classifyAttribute("data-hide", "/hasMore").kind, "hide");
  });

  test("prefixed bindings keep CSS and attribute names, camel-case properties", () => {
    assert.deepStrictEqual(classifyAttribute("data-style-background-color", "/c"), { kind: "style", name: "background-color", expression: "/c" });
    assert.deepStrictEqual(classifyAttribute("data-attr-aria-busy", "/x"), { kind: "attr", name: "aria-busy", expression: "/x" });
    assert.deepStrictEqual(classifyAttribute("data-prop-value", "/username"), { kind: "prop", name: "value", expression: "/username" });
    assert.deepStrictEqual(classifyAttribute("data-prop-selected-index", "/i"), { kind: "prop", name: "selectedIndex", expression: "/i" });
    assert.deepStrictEqual(classifyAttribute("data-class-error", "/failed"), { kind: "class", name: "error", expression: "/failed" });
  });

  test("action, list and other attributes are not bindings", () => {
    for (const name of ["data-action", "data-value", "data-list", "data-key", "data-announce", "data-format", "class", "data-style-", "id"]) {
      assert.equal(classifyAttribute(name, "/x"), null, name);
    }
  });
});

describe("list keying", () => {
  const rows = (...ids) => ids.map((id) => ({ id, title: `Row ${id}`, count: 0 }));

  test("rows are keyed by the data-key member, strings by themselves, others by index", () => {
    assert.equal(rowKey({ id: 7 }, "id", 0), "k:7");
    assert.equal(rowKey("dark", null, 1), "v:dark");
    assert.equal(rowKey({ other: 1 }, "id", 3), "i:3");
    assert.equal(rowKey({ id: 7 }, null, 2), "i:2");
  });

  test("appending a page keeps every existing row and creates only the new ones", () => {
    const first = planList([], rows(1, 2, 3), "id");
    assert.deepStrictEqual(first.create, ["k:1", "k:2", "k:3"]);
    const second = planList(first.keys, rows(1, 2, 3, 4, 5), "id");
    assert.deepStrictEqual(second.keep, ["k:1", "k:2", "k:3"]);
    assert.deepStrictEqual(second.create, ["k:4", "k:5"]);
    assert.deepStrictEqual(second.remove, []);
  });

  test("reordering keeps rows; removal removes exactly the missing keys", () => {
    const plan = planList(["k:1", "k:2", "k:3"], rows(3, 1), "id");
    assert.deepStrictEqual(plan.keys, ["k:3", "k:1"]);
    assert.deepStrictEqual(plan.create, []);
    assert.deepStrictEqual(plan.remove, ["k:2"]);
  });

  test("duplicate keys do not collapse rows", () => {
    const plan = planList([], [{ id: 1 }, { id: 1 }], "id");
    assert.equal(new Set(plan.keys).size, 2);
  });

  test("a missing or non-array list renders no rows", () => {
    assert.deepStrictEqual(planList(["k:1"], null, "id"), { keys: [], create: [], keep: [], remove: ["k:1"] });
  });
});

describe("change filter", () => {
  test("a patch's changed paths include move sources and skip tests", () => {
    const patch = [
      { op: "test", path: "/a", value: 1 },
      { op: "replace", path: "/greeting", value: "Hello" },
      { op: "move", from: "/x", path: "/y" },
    ];
    assert.deepStrictEqual(changedPaths(patch), ["/greeting", "/y", "/x"]);
  });

  test("paths overlap by whole tokens, in either direction", () => {
    assert.equal(pathsOverlap("/button/color", "/button"), true);
    assert.equal(pathsOverlap("/button", "/button/color"), true);
    assert.equal(pathsOverlap("/button/color", "/button/title"), false);
    assert.equal(pathsOverlap("/ab", "/a"), false);
    assert.equal(pathsOverlap("/greeting", ""), true, "a root replace touches everything");
  });

  test("array changes reach every index through shifting", () => {
    assert.equal(pathsOverlap("/rows/3/count", "/rows/0"), true);
    assert.equal(pathsOverlap("/rows/3/count", "/rows/-"), true);
    assert.equal(pathsOverlap("/rows/3/count", "/status"), false);
  });

  test("a binding is affected when any of its terms is", () => {
    const changed = changedPaths([{ op: "replace", path: "/hasMore", value: false }]);
    assert.equal(expressionAffected("/loading || !/hasMore", changed), true);
    assert.equal(expressionAffected("/status", changed), false);
    assert.equal(expressionAffected("/status == loading", changedPaths([{ op: "replace", path: "/status", value: "loaded" }])), true);
  });
});

describe("generic renderer model", () => {
  const employees = { status: "loaded", message: null, employees: [{ id: 1, employee_name: "Ann" }], count: 1 };

  test("describes objects, arrays and scalars with the pointer each shows", () => {
    const tree = describeView(employees);
    assert.equal(tree.type, "object");
    assert.deepStrictEqual(tree.children.map((c) => [c.label, c.type, c.path]), [
      ["Status", "scalar", "/status"],
      ["Message", "scalar", "/message"],
      ["Employees", "array", "/employees"],
      ["Count", "scalar", "/count"],
    ]);
    const first = tree.children[2].children[0];
    assert.equal(first.path, "/employees/0");
    assert.deepStrictEqual(first.children.map((c) => c.path), ["/employees/0/id", "/employees/0/employee_name"]);
    assert.equal(tree.children[1].valueType, "null");
  });

  test("escapes member names in pointers", () => {
    assert.equal(describeView({ "a/b": 1 }).children[0].path, "/a~1b");
  });

  test("the shape changes with members and lengths, not with scalar values", () => {
    const base = shapeSignature(describeView(employees));
    assert.equal(shapeSignature(describeView({ ...employees, status: "loading", count: 2 })), base);
    assert.notEqual(shapeSignature(describeView({ ...employees, employees: [] })), base);
    assert.notEqual(shapeSignature(describeView({ ...employees, extra: true })), base);
  });

  test("humanizes member and action names", () => {
    assert.equal(humanize("employee_salary"), "Employee salary");
    assert.equal(humanize("firstName"), "First name");
    assert.equal(humanize("quote.shuffle"), "Quote shuffle");
  });

  test("each action value type gets a fitting control", () => {
    assert.equal(inputTypeFor("none"), null);
    assert.equal(inputTypeFor("string"), "text");
    assert.equal(inputTypeFor("int"), "number");
    assert.equal(inputTypeFor("number"), "number");
    assert.equal(inputTypeFor("bool"), "checkbox");
    assert.equal(inputTypeFor("object"), "textarea");
    assert.equal(inputTypeFor("array"), "textarea");
  });

  test("control values are coerced to the action's value type", () => {
    assert.equal(coerceActionValue("none", "x"), null);
    assert.equal(coerceActionValue("string", "david"), "david");
    assert.equal(coerceActionValue("int", "3"), 3);
    assert.equal(coerceActionValue("int", 4), 4);
    assert.throws(() => coerceActionValue("int", "3.5"), ValueError);
    assert.throws(() => coerceActionValue("int", ""), ValueError);
    assert.equal(coerceActionValue("number", "3.5"), 3.5);
    assert.equal(coerceActionValue("bool", true), true);
    assert.equal(coerceActionValue("bool", "false"), false);
    assert.deepStrictEqual(coerceActionValue("object", '{"a":1}'), { a: 1 });
    assert.throws(() => coerceActionValue("object", "[1]"), ValueError);
    assert.deepStrictEqual(coerceActionValue("array", "[1]"), [1]);
    assert.throws(() => coerceActionValue("array", "{"), ValueError);
  });
});

describe("routes and history", () => {
  const catalogue = { root: "home", units: [{ name: "home", route: "/home" }, { name: "counters", route: "/counters" }, { name: "greeting" }] };

  test("units map to their routes and back", () => {
    assert.equal(routeOf("counters", catalogue.units), "/counters");
    assert.equal(routeOf("greeting", catalogue.units), "/greeting");
    assert.equal(routeOf("unlisted", []), "/unlisted");
    assert.equal(routeOf("home", catalogue.units, "home"), "/", "the root's deep link is /");
    assert.equal(routeOf("home", catalogue.units), "/home");
    assert.equal(unitForPath("/", catalogue), "home");
    assert.equal(unitForPath("", catalogue), "home");
    assert.equal(unitForPath("/counters/", catalogue), "counters");
    assert.equal(unitForPath("/greeting", catalogue), "greeting");
    assert.equal(unitForPath("/new%20page", catalogue), "new page");
  });

  test("the back button maps to back when the entry is the stack below the top", () => {
    assert.deepStrictEqual(navigationForHistoryEntry(["home", "counters"], { stack: ["home"] }, "home"), { type: "back" });
    assert.deepStrictEqual(navigationForHistoryEntry(["home", "counters"], null, "home"), { type: "back" });
  });

  test("other entries map to open of their top unit; the current stack to nothing", () => {
    assert.deepStrictEqual(navigationForHistoryEntry(["home", "counters"], { stack: ["home", "counters", "greeting"] }, "greeting"), { type: "open", unit: "greeting" });
    assert.deepStrictEqual(navigationForHistoryEntry(["login"], { stack: ["home", "counters"] }, "counters"), { type: "open", unit: "counters" });
    assert.deepStrictEqual(navigationForHistoryEntry(["home"], null, "dashboard"), { type: "open", unit: "dashboard" });
    assert.equal(navigationForHistoryEntry(["home", "counters"], { stack: ["home", "counters"] }, "counters"), null);
  });

  test("server navigation maps to push, replace or a history step back", () => {
    assert.equal(historyActionFor({ type: "push", stack: ["home", "a"], previousStack: ["home"] }, null), "push");
    assert.equal(historyActionFor({ type: "present", stack: ["main", "settings"], previousStack: ["main"] }, ["login"]), "push");
    assert.equal(historyActionFor({ type: "root", stack: ["login"], previousStack: ["login", "main"] }, ["login"]), "replace");
    assert.equal(historyActionFor({ type: "back", stack: ["login", "main"], previousStack: ["login", "main", "settings"] }, ["login", "main"]), "back");
    assert.equal(historyActionFor({ type: "back", stack: ["home"], previousStack: ["home", "a"] }, null), "replace");
    assert.equal(historyActionFor({ type: null, stack: ["home", "a"], previousStack: ["home"] }, null), "push");
    assert.equal(sameStack(["a"], ["a"]), true);
    assert.equal(sameStack(["a"], ["b"]), false);
  });
});
