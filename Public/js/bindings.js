// The pure half of rendering: binding expressions, attribute vocabulary, list keying,
// the change filter for patches and the generic renderer's description of a view.
// Nothing here touches the DOM, so all of it runs (and is tested) in Node.

import { getPointer, parsePointer, formatPointer, jsonEqual } from "./patch.js";

/**
 * @typedef {{negate: boolean, boolean: boolean, pointer: string, compare?: {equal: boolean, literal: unknown}}} Term
 * @typedef {{terms: Term[]}} Expression  terms joined by `||`
 */

const expressionCache = new Map();

/** Reads the literal of a comparison: JSON (`"a"`, `1`, `true`, `null`) or a bare word. */
function parseLiteral(text) {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/**
 * Parses a binding expression. Each term is a JSON Pointer, optionally negated with `!`,
 * or compared with a literal (`/status == loading`, `/count != 0`); terms joined by `||`
 * are true when any is. `""` alone is the whole scope (a list row's item).
 * @param {string} source e.g. `"!/canSubmit"`, `"/loading || !/hasMore"`, `"/status == 'loading'"`
 * @returns {Expression}
 * @throws {Error} when a term is not a JSON Pointer
 */
export function parseExpression(source) {
  const cached = expressionCache.get(source);
  if (cached) return cached;
  const terms = String(source)
    .split("||")
    .map((part) => {
      let text = part.trim();
      let negate = false;
      let bangs = 0;
      while (text.startsWith("!") && !text.startsWith("!=")) {
        negate = !negate;
        bangs += 1;
        text = text.slice(1).trim();
      }
      const comparison = /^(.*?)\s*(==|!=)\s*(.+)$/.exec(text);
      if (comparison) {
        parsePointer(comparison[1]); // validates
        const literalText = comparison[3].trim();
        const literal = /^'.*'$/.test(literalText) ? literalText.slice(1, -1) : parseLiteral(literalText);
        return { negate, boolean: true, pointer: comparison[1], compare: { equal: comparison[2] === "==", literal } };
      }
      parsePointer(text); // validates
      return { negate, boolean: bangs > 0, pointer: text };
    });
  const expression = { terms };
  expressionCache.set(source, expression);
  return expression;
}

/**
 * Truthiness used by `!`, `||` and boolean bindings: `null`, `undefined`, `false`, `0`,
 * `""` and empty arrays are false; everything else is true.
 * @param {unknown} value
 * @returns {boolean}
 */
export function isTruthy(value) {
  if (Array.isArray(value)) return value.length > 0;
  return Boolean(value);
}

function termValue(term, scope) {
  const value = getPointer(scope, term.pointer);
  const truth = term.compare ? jsonEqual(value ?? null, term.compare.literal) === term.compare.equal : isTruthy(value);
  return truth !== term.negate;
}

/**
 * Evaluates a binding expression against a scope (the page's view, or a list row).
 * A single plain pointer yields the raw value; anything else yields a boolean.
 * @param {string} source the attribute value
 * @param {unknown} scope
 * @returns {unknown} the value, `undefined` when the path does not exist
 */
export function evaluate(source, scope) {
  const { terms } = parseExpression(source);
  if (terms.length === 1 && !terms[0].boolean) return getPointer(scope, terms[0].pointer);
  return terms.some((term) => termValue(term, scope));
}

/**
 * Converts a bound value to display text: `null`/`undefined` → `""`, objects → JSON,
 * numbers optionally formatted (`data-format="number"` groups thousands).
 * @param {unknown} value
 * @param {string | null} [format] `number`, `json` or nothing
 * @returns {string}
 */
export function toText(value, format = null) {
  if (value === null || value === undefined) return "";
  if (format === "number" && typeof value === "number") return value.toLocaleString("en-US");
  if (format === "json" || typeof value === "object") return JSON.stringify(value);
  return String(value);
}

/**
 * @typedef {{kind: "text"|"show"|"hide"|"disabled"|"style"|"attr"|"prop"|"class", name: string|null, expression: string}} Binding
 */

/** Kebab-case (`background-color`) to camelCase (`backgroundColor`). */
function camel(name) {
  return name.replace(/-([a-z])/g, (_, letter) => letter.toUpperCase());
}

/**
 * Classifies one attribute of an element into a binding, or `null` when the attribute
 * is not a binding (e.g. `data-action`, `data-key`, `class`).
 *
 * Vocabulary: `data-text`, `data-show`, `data-hide`, `data-disabled`,
 * `data-style-{css-property}`, `data-attr-{attribute}`, `data-prop-{property}`,
 * `data-class-{class-name}`.
 * @param {string} name the attribute name, e.g. `data-style-background-color`
 * @param {string} value the attribute value (the expression)
 * @returns {Binding | null}
 */
export function classifyAttribute(name, value) {
  const lower = name.toLowerCase();
  const simple = { "data-text": "text", "data-show": "show", "data-hide": "hide", "data-disabled": "disabled" };
  if (Object.hasOwn(simple, lower)) return { kind: simple[lower], name: null, expression: value };
  const prefixed = [
    ["data-style-", "style", (rest) => rest],
    ["data-attr-", "attr", (rest) => rest],
    ["data-prop-", "prop", camel],
    ["data-class-", "class", (rest) => rest],
  ];
  for (const [prefix, kind, convert] of prefixed) {
    if (lower.startsWith(prefix) && lower.length > prefix.length) {
      return { kind, name: convert(lower.slice(prefix.length)), expression: value };
    }
  }
  return null;
}

/**
 * The key of a list row: the member named by `data-key` for objects, the value itself
 * for strings and numbers, else the index.
 * @param {unknown} item
 * @param {string | null} keyName
 * @param {number} index
 * @returns {string}
 */
export function rowKey(item, keyName, index) {
  if (keyName && item !== null && typeof item === "object" && !Array.isArray(item) && Object.hasOwn(item, keyName)) {
    return `k:${String(item[keyName])}`;
  }
  if (!keyName && (typeof item === "string" || typeof item === "number")) return `v:${item}`;
  return `i:${index}`;
}

/**
 * Plans the keyed update of a list: which rows to keep (and reuse), create and remove,
 * and the final order. Duplicate keys fall back to the index so no row is lost.
 * @param {string[]} previousKeys the keys currently rendered, in order
 * @param {unknown[]} items the new list
 * @param {string | null} keyName the `data-key` member name
 * @returns {{keys: string[], create: string[], keep: string[], remove: string[]}}
 */
export function planList(previousKeys, items, keyName) {
  const seen = new Set();
  const keys = (Array.isArray(items) ? items : []).map((item, index) => {
    let key = rowKey(item, keyName, index);
    if (seen.has(key)) key = `i:${index}:${key}`;
    seen.add(key);
    return key;
  });
  const previous = new Set(previousKeys);
  return {
    keys,
    create: keys.filter((key) => !previous.has(key)),
    keep: keys.filter((key) => previous.has(key)),
    remove: previousKeys.filter((key) => !seen.has(key)),
  };
}

/**
 * The paths a patch touches (targets and move sources), as JSON Pointers.
 * @param {Array<{op: string, path: string, from?: string}>} patch
 * @returns {string[]}
 */
export function changedPaths(patch) {
  const paths = [];
  for (const operation of patch ?? []) {
    if (operation.op === "test") continue;
    paths.push(operation.path);
    if (operation.op === "move" && typeof operation.from === "string") paths.push(operation.from);
  }
  return paths;
}

/**
 * Whether a change at `changed` can affect a value read at `read`: one is a prefix of
 * the other (token-wise, so `/ab` does not overlap `/a`). Array changes shift indexes,
 * so a change inside an array overlaps every path through that array.
 * @param {string} read a binding's pointer
 * @param {string} changed a patched pointer
 * @returns {boolean}
 */
export function pathsOverlap(read, changed) {
  const a = parsePointer(read);
  const b = parsePointer(changed);
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i += 1) {
    if (a[i] !== b[i]) {
      // Different array indexes (or "-") may still interact through shifting.
      const indexLike = (t) => t === "-" || /^(0|[1-9][0-9]*)$/.test(t);
      return indexLike(a[i]) && indexLike(b[i]);
    }
  }
  return true;
}

/**
 * Whether a binding expression reads anything a patch changed.
 * @param {string} source the binding expression
 * @param {string[]} changed pointers from {@link changedPaths}
 * @returns {boolean}
 */
export function expressionAffected(source, changed) {
  return parseExpression(source).terms.some((term) => changed.some((path) => pathsOverlap(term.pointer, path)));
}

/**
 * @typedef {{type: "scalar", path: string, label: string, valueType: string}
 *   | {type: "object", path: string, label: string, children: ViewNode[]}
 *   | {type: "array", path: string, label: string, children: ViewNode[]}} ViewNode
 */

/**
 * Humanizes a member name for the generic renderer: `employee_salary` → `Employee salary`,
 * `firstName` → `First name`.
 * @param {string} name
 * @returns {string}
 */
export function humanize(name) {
  const spaced = String(name)
    .replace(/[_.-]+/g, " ")
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .trim()
    .toLowerCase();
  return spaced ? spaced[0].toUpperCase() + spaced.slice(1) : String(name);
}

/**
 * Describes a view for the generic renderer: a tree of objects, arrays and scalars, each
 * with the JSON Pointer it shows. Scalars become `data-text` bindings, so the binding
 * engine keeps them current while the shape stays the same.
 * @param {unknown} view
 * @param {string[]} [tokens] the path of `view` in the page (internal)
 * @param {string} [label]
 * @returns {ViewNode}
 */
export function describeView(view, tokens = [], label = "") {
  const path = formatPointer(tokens);
  if (Array.isArray(view)) {
    return { type: "array", path, label, children: view.map((item, i) => describeView(item, [...tokens, String(i)], `${i + 1}`)) };
  }
  if (view !== null && typeof view === "object") {
    return {
      type: "object",
      path,
      label,
      children: Object.keys(view).map((key) => describeView(view[key], [...tokens, key], humanize(key))),
    };
  }
  return { type: "scalar", path, label, valueType: view === null ? "null" : typeof view };
}

/**
 * A string that changes exactly when the generic renderer must rebuild its markup
 * (members or list lengths changed), not when only scalar values changed.
 * @param {ViewNode} node
 * @returns {string}
 */
export function shapeSignature(node) {
  if (node.type === "scalar") return "s";
  const inner = node.children.map((child) => (node.type === "object" ? `${JSON.stringify(child.label)}:` : "") + shapeSignature(child));
  return node.type === "object" ? `{${inner.join(",")}}` : `[${inner.join(",")}]`;
}

/**
 * The `<input type>` the generic renderer uses for an action value type.
 * @param {string} valueType `none`, `string`, `int`, `number`, `bool`, `object`, `array`
 * @returns {string | null} `null` for `none` (a plain button), `textarea` for JSON values
 */
export function inputTypeFor(valueType) {
  switch (valueType) {
    case "none": return null;
    case "int":
    case "number": return "number";
    case "bool": return "checkbox";
    case "object":
    case "array": return "textarea";
    default: return "text";
  }
}

/** Error for a raw input that does not fit the action's value type. */
export class ValueError extends Error {}

/**
 * Converts what a control holds into the JSON value an action expects.
 * @param {string} valueType the action's value type from the snapshot
 * @param {unknown} raw a string from an input, a boolean from a checkbox, or a view value
 * @returns {unknown}
 * @throws {ValueError} when the raw value cannot become that type
 */
export function coerceActionValue(valueType, raw) {
  switch (valueType) {
    case "none":
      return null;
    case "string":
      return raw === null || raw === undefined ? "" : String(raw);
    case "int": {
      const number = typeof raw === "number" ? raw : Number(String(raw).trim());
      if (String(raw).trim() === "" || !Number.isInteger(number)) throw new ValueError("a whole number is needed");
      return number;
    }
    case "number": {
      const number = typeof raw === "number" ? raw : Number(String(raw).trim());
      if (String(raw).trim() === "" || !Number.isFinite(number)) throw new ValueError("a number is needed");
      return number;
    }
    case "bool":
      if (typeof raw === "boolean") return raw;
      if (raw === "true") return true;
      if (raw === "false") return false;
      throw new ValueError("true or false is needed");
    case "object":
    case "array": {
      let value = raw;
      if (typeof raw === "string") {
        try {
          value = JSON.parse(raw);
        } catch {
          throw new ValueError("valid JSON is needed");
        }
      }
      const ok = valueType === "array" ? Array.isArray(value) : value !== null && typeof value === "object" && !Array.isArray(value);
      if (!ok) throw new ValueError(`a JSON ${valueType} is needed`);
      return value;
    }
    default:
      return raw;
  }
}
