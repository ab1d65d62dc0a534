import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { applyPatch, parsePointer, formatPointer, getPointer, jsonEqual, PatchError } from "../../Public/js/patch.js";

// The suite is kept in the repository, beside this directory (Tests/Conformance/json-patch-tests/SOURCE.md).
const suiteDirectory = new URL("../Conformance/json-patch-tests/", import.meta.url);

/** Reads a suite file; a missing or unreadable file fails the test that needs it. */
function loadSuite(name) {
  const path = fileURLToPath(new URL(name, suiteDirectory));
  const records = JSON.parse(readFileSync(path, "utf8"));
  assert.ok(Array.isArray(records) && records.length > 0, `${name} must hold records`);
  return records;
}

for (const file of ["tests.json", "spec_tests.json"]) {
  describe(`conformance: ${file}`, () => {
    let records;
    try {
      records = loadSuite(file);
    } catch (error) {
      test(`${file} is readable`, () => assert.fail(`cannot read ${file}: ${error.message}`));
      return;
    }
    const enabled = records.filter((record) => !record.disabled);
    test(`${file} has enabled records`, () => assert.ok(enabled.length > 0));
    enabled.forEach((record, number) => {
      const name = `#${number} ${record.comment ?? JSON.stringify(record.patch).slice(0, 60)}`;
      test(name, () => {
        const before = structuredClone(record.doc);
        if (Object.hasOwn(record, "expected")) {
          const result = applyPatch(record.doc, record.patch);
          assert.deepStrictEqual(result, record.expected);
        } else if (Object.hasOwn(record, "error")) {
          assert.throws(() => applyPatch(record.doc, record.patch), PatchError);
        } else {
          // No expectation: the patch must simply apply.
          applyPatch(record.doc, record.patch);
        }
        assert.deepStrictEqual(record.doc, before, "the input document must be untouched");
      });
    });
  });
}

describe("patch applier", () => {
  test("is atomic: a failing later operation leaves the input unchanged", () => {
    const doc = { a: [1, 2], b: { c: 1 } };
    assert.throws(
      () => applyPatch(doc, [{ op: "add", path: "/a/-", value: 3 }, { op: "remove", path: "/b/c" }, { op: "test", path: "/a/0", value: 9 }]),
      (error) => error instanceof PatchError && error.index === 2,
    );
    assert.deepStrictEqual(doc, { a: [1, 2], b: { c: 1 } });
  });

  test("does not share structure with the values in the patch", () => {
    const value = { nested: [1] };
    const result = applyPatch({}, [{ op: "add", path: "/x", value }]);
    value.nested.push(2);
    assert.deepStrictEqual(result, { x: { nested: [1] } });
  });

  test("refuses to move a value into its own child", () => {
    assert.throws(() => applyPatch({ a: { b: 1 } }, [{ op: "move", from: "/a", path: "/a/b/c" }]), PatchError);
  });

  test("treats __proto__ as an ordinary member", () => {
    const result = applyPatch({}, [{ op: "add", path: "/__proto__", value: { polluted: true } }]);
    assert.deepStrictEqual(Object.keys(result), ["__proto__"]);
    assert.equal({}.polluted, undefined);
  });
});

describe("JSON Pointer", () => {
  test("unescapes ~1 before ~0", () => {
    assert.deepStrictEqual(parsePointer("/a~1b/c~0d/~01"), ["a/b", "c~d", "~1"]);
    assert.equal(formatPointer(["a/b", "c~d", "~1"]), "/a~1b/c~0d/~01");
  });
  test("rejects pointers without a leading slash and bad escapes", () => {
    assert.throws(() => parsePointer("a"), PatchError);
    assert.throws(() => parsePointer("/a~2"), PatchError);
  });
  test("getPointer returns undefined for missing values and never walks prototypes", () => {
    assert.equal(getPointer({ a: [1] }, "/a/1"), undefined);
    assert.equal(getPointer({ a: [1] }, "/a/01"), undefined);
    assert.equal(getPointer({}, "/toString"), undefined);
    assert.equal(getPointer({ a: [1, { b: null }] }, "/a/1/b"), null);
  });
  test("jsonEqual compares numbers and strings by type", () => {
    assert.equal(jsonEqual(10, "10"), false);
    assert.equal(jsonEqual({ a: [1, { b: 2 }] }, { a: [1, { b: 2 }] }), true);
    assert.equal(jsonEqual([1, 2], [2, 1]), false);
  });
});
