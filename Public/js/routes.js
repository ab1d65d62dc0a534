// Pure helpers that map between units, their routes and browser history entries.

/**
 * @typedef {{name: string, route?: string}} UnitInfo
 */

/**
 * The path of a unit's deep link: `/` for the app's root unit, else its registered
 * route, else `/{name}`.
 * @param {string} unit
 * @param {UnitInfo[]} units from `GET /api/units`
 * @param {string|null} [root] the app's root unit (`GET /api/units` `root`)
 * @returns {string}
 */
export function routeOf(unit, units = [], root = null) {
  if (root && unit === root) return "/";
  const info = units.find((u) => u.name === unit);
  const route = typeof info?.route === "string" && info.route.startsWith("/") ? info.route : `/${encodeURIComponent(unit)}`;
  return route;
}

/**
 * The unit a location path names: `/` (or empty) is the root, `/counters` or a registered
 * route names that unit; a trailing slash is ignored. Returns null for `/` when the root is
 * unknown, and the decoded first segment otherwise.
 * @param {string} pathname `location.pathname`
 * @param {{root?: string|null, units?: UnitInfo[]}} catalogue
 * @returns {string|null}
 */
export function unitForPath(pathname, { root = null, units = [] } = {}) {
  const path = (pathname || "/").replace(/\/+$/, "") || "/";
  if (path === "/" || path === "/index.html") return root;
  const byRoute = units.find((u) => typeof u.route === "string" && u.route.replace(/\/+$/, "") === path);
  if (byRoute) return byRoute.name;
  const segment = path.slice(1).split("/")[0];
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/**
 * Whether two stacks hold the same units in the same order.
 * @param {string[]|undefined} a
 * @param {string[]|undefined} b
 * @returns {boolean}
 */
export function sameStack(a, b) {
  return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((unit, i) => unit === b[i]);
}

/**
 * What to ask the server when the browser moves to a history entry (back/forward).
 * `back` when the entry's stack is the current one without its top; `forward` when it is the
 * current one plus the page the server keeps for going forward (so that page comes back as
 * it was); nothing when it is the current stack; otherwise `open` of the entry's top unit
 * (or the unit its path names).
 * @param {string[]} currentStack the session's stack
 * @param {{stack?: string[]}|null} entryState `history.state` of the entry
 * @param {string|null} pathUnit the unit the entry's URL names
 * @param {string[]} [forward] the session's forward list (nearest first)
 * @returns {{type: "back"} | {type: "forward"} | {type: "open", unit: string} | null}
 */
export function navigationForHistoryEntry(currentStack, entryState, pathUnit, forward = []) {
  const target = Array.isArray(entryState?.stack) ? entryState.stack : null;
  if (target && sameStack(target, currentStack)) return null;
  const below = currentStack.slice(0, -1);
  if (target ? sameStack(target, below) : pathUnit !== null && pathUnit === below.at(-1)) return { type: "back" };
  const next = forward?.[0];
  if (next && (target ? sameStack(target, [...currentStack, next]) : pathUnit === next)) return { type: "forward" };
  const unit = target?.at(-1) ?? pathUnit;
  if (!unit || unit === currentStack.at(-1)) return null;
  return { type: "open", unit };
}

/**
 * How history should follow a navigation the server reported.
 * @param {{type: string|null, stack: string[], previousStack: string[]}} navigation
 * @param {string[]|null} previousEntryStack the stack of the history entry before the current one, if known
 * @returns {"push"|"replace"|"back"}
 */
export function historyActionFor(navigation, previousEntryStack) {
  const { type, stack, previousStack } = navigation;
  if (type === "push" || type === "present" || type === "forward") return "push";
  if (type === "root") return "replace";
  if (type === "back") return previousEntryStack && sameStack(previousEntryStack, stack) ? "back" : "replace";
  const grew = stack.length > previousStack.length && previousStack.every((unit, i) => unit === stack[i]);
  if (grew && previousStack.length > 0) return "push";
  if (previousEntryStack && sameStack(previousEntryStack, stack)) return "back";
  return "replace";
}
