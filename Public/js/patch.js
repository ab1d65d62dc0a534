// RFC 6901 JSON Pointer and RFC 6902 JSON Patch, as plain functions over JSON values.
// The applier is atomic: it works on a deep copy and returns it, so a failing patch
// leaves the caller's document exactly as it was.

/** Error thrown when a patch or a pointer is invalid or cannot be applied. */
export class PatchError extends Error {
  /**
   * @param {string} message what went wrong, for people
   * @param {number} [index] the index of the failing operation in the patch
   */
  constructor(message, index) {
    super(index === undefined ? message : `operation ${index}: ${message}`);
    this.name = "PatchError";
    this.index = index;
  }
}

/**
 * Splits a JSON Pointer into its unescaped reference tokens.
 * @param {string} pointer e.g. `"/a~1b/0"`; `""` is the whole document
 * @returns {string[]} e.g. `["a/b", "0"]`
 * @throws {PatchError} when the pointer is not a string or does not start with `/`
 */
export function parsePointer(pointer) {
  if (typeof pointer !== "string") throw new PatchError("a JSON Pointer must be a string");
  if (pointer === "") return [];
  if (pointer[0] !== "/") throw new PatchError(`JSON Pointer ${JSON.stringify(pointer)} must start with "/"`);
  return pointer
    .slice(1)
    .split("/")
    .map((token) => {
      if (/~[^01]|~$/.test(token)) throw new PatchError(`invalid escape in JSON Pointer token ${JSON.stringify(token)}`);
      return token.replace(/~1/g, "/").replace(/~0/g, "~");
    });
}

/**
 * Builds a JSON Pointer from unescaped tokens (the inverse of {@link parsePointer}).
 * @param {Array<string|number>} tokens
 * @returns {string}
 */
export function formatPointer(tokens) {
  return tokens.map((t) => "/" + String(t).replace(/~/g, "~0").replace(/\//g, "~1")).join("");
}

const ARRAY_INDEX = /^(0|[1-9][0-9]*)$/;

/** @param {unknown} value @returns {value is Record<string, unknown>} */
function isObject(value) {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/**
 * Parses an array index token; `-` is accepted only where `allowEnd` (the `add` target).
 * @returns {number}
 */
function arrayIndex(array, token, { allowEnd }) {
  if (token === "-" && allowEnd) return array.length;
  if (!ARRAY_INDEX.test(token)) throw new PatchError(`${JSON.stringify(token)} is not a valid array index`);
  const index = Number(token);
  const limit = allowEnd ? array.length : array.length - 1;
  if (index > limit) throw new PatchError(`array index ${index} is out of bounds`);
  return index;
}

/**
 * Reads the value a pointer names, or `undefined` when nothing is there.
 * Never throws for missing values; throws only for a malformed pointer.
 * @param {unknown} document a JSON value
 * @param {string | string[]} pointer a JSON Pointer, or its tokens
 * @returns {unknown}
 */
export function getPointer(document, pointer) {
  const tokens = Array.isArray(pointer) ? pointer : parsePointer(pointer);
  let current = document;
  for (const token of tokens) {
    if (Array.isArray(current)) {
      if (!ARRAY_INDEX.test(token)) return undefined;
      current = current[Number(token)];
    } else if (isObject(current)) {
      if (!Object.hasOwn(current, token)) return undefined;
      current = current[token];
    } else {
      return undefined;
    }
  }
  return current;
}

/** Resolves the parent container of a pointer; throws when it does not exist. */
function parentOf(document, tokens) {
  let current = document;
  for (let i = 0; i < tokens.length - 1; i += 1) {
    const token = tokens[i];
    if (Array.isArray(current)) {
      current = current[arrayIndex(current, token, { allowEnd: false })];
    } else if (isObject(current) && Object.hasOwn(current, token)) {
      current = current[token];
    } else {
      throw new PatchError(`path ${formatPointer(tokens.slice(0, i + 1))} does not exist`);
    }
  }
  if (!Array.isArray(current) && !isObject(current)) {
    throw new PatchError(`path ${formatPointer(tokens.slice(0, -1))} is not an object or array`);
  }
  return current;
}

/** Deep-copies a JSON value. */
export function cloneJSON(value) {
  return value === undefined ? undefined : structuredClone(value);
}

/**
 * JSON equality as RFC 6902 `test` defines it: same type, same members, same order for arrays.
 * @param {unknown} a
 * @param {unknown} b
 * @returns {boolean}
 */
export function jsonEqual(a, b) {
  if (a === b) return true;
  if (Array.isArray(a)) {
    return Array.isArray(b) && a.length === b.length && a.every((item, i) => jsonEqual(item, b[i]));
  }
  if (isObject(a) && isObject(b)) {
    const keys = Object.keys(a);
    return keys.length === Object.keys(b).length && keys.every((k) => Object.hasOwn(b, k) && jsonEqual(a[k], b[k]));
  }
  return false;
}

function add(document, tokens, value) {
  if (tokens.length === 0) return value;
  const parent = parentOf(document, tokens);
  const last = tokens[tokens.length - 1];
  if (Array.isArray(parent)) parent.splice(arrayIndex(parent, last, { allowEnd: true }), 0, value);
  else defineMember(parent, last, value);
  return document;
}

/** Sets an own data property even for names like `__proto__`. */
function defineMember(object, key, value) {
  Object.defineProperty(object, key, { value, writable: true, enumerable: true, configurable: true });
}

function remove(document, tokens) {
  if (tokens.length === 0) throw new PatchError("cannot remove the whole document");
  const parent = parentOf(document, tokens);
  const last = tokens[tokens.length - 1];
  if (Array.isArray(parent)) {
    const [removed] = parent.splice(arrayIndex(parent, last, { allowEnd: false }), 1);
    return removed;
  }
  if (!Object.hasOwn(parent, last)) throw new PatchError(`path ${formatPointer(tokens)} does not exist`);
  const removed = parent[last];
  delete parent[last];
  return removed;
}

function requireMember(operation, name) {
  if (!Object.hasOwn(operation, name)) throw new PatchError(`missing '${name}' member`);
  return operation[name];
}

function mustExist(document, tokens) {
  const value = getPointer(document, tokens);
  if (value === undefined) throw new PatchError(`path ${formatPointer(tokens)} does not exist`);
  return value;
}

/**
 * Applies one operation to `document` in place (containers are mutated) and returns the
 * new root (which differs from `document` only when the root itself is replaced).
 */
function applyOperation(document, operation) {
  if (!isObject(operation)) throw new PatchError("an operation must be an object");
  const op = requireMember(operation, "op");
  const tokens = parsePointer(requireMember(operation, "path"));
  switch (op) {
    case "add":
      return add(document, tokens, cloneJSON(requireMember(operation, "value")));
    case "remove":
      remove(document, tokens);
      return document;
    case "replace": {
      const value = cloneJSON(requireMember(operation, "value"));
      if (tokens.length === 0) return value;
      mustExist(document, tokens);
      const parent = parentOf(document, tokens);
      const last = tokens[tokens.length - 1];
      if (Array.isArray(parent)) parent[arrayIndex(parent, last, { allowEnd: false })] = value;
      else defineMember(parent, last, value);
      return document;
    }
    case "move": {
      const from = parsePointer(requireMember(operation, "from"));
      if (from.length === tokens.length && from.every((t, i) => t === tokens[i])) {
        mustExist(document, from);
        return document;
      }
      if (from.length < tokens.length && from.every((t, i) => t === tokens[i])) {
        throw new PatchError("cannot move a value into one of its own children");
      }
      mustExist(document, from);
      const value = remove(document, from);
      return add(document, tokens, value);
    }
    case "copy": {
      const from = parsePointer(requireMember(operation, "from"));
      return add(document, tokens, cloneJSON(mustExist(document, from)));
    }
    case "test": {
      const expected = requireMember(operation, "value");
      const actual = getPointer(document, tokens);
      if (actual === undefined || !jsonEqual(actual, expected)) {
        throw new PatchError(`test failed at ${formatPointer(tokens)}`);
      }
      return document;
    }
    default:
      throw new PatchError(`unknown op ${JSON.stringify(op)}`);
  }
}

/**
 * Applies an RFC 6902 patch atomically.
 * @param {unknown} document the JSON value to patch; it is never modified
 * @param {Array<object>} patch the operations
 * @returns {unknown} the patched copy
 * @throws {PatchError} when any operation fails; `document` is then untouched
 * @example
 * applyPatch({a: 1}, [{op: "replace", path: "/a", value: 2}]) // => {a: 2}
 */
export function applyPatch(document, patch) {
  if (!Array.isArray(patch)) throw new PatchError("a patch must be an array of operations");
  let result = cloneJSON(document);
  patch.forEach((operation, index) => {
    try {
      result = applyOperation(result, operation);
    } catch (error) {
      if (error instanceof PatchError && error.index === undefined) throw new PatchError(error.message, index);
      throw error;
    }
  });
  return result;
}
