// The DOM half of rendering: binds a template (or the generic renderer's markup) to a
// page's view and keeps it current. The pure rules behind it live in bindings.js.
//
// Binding vocabulary (values are expressions: a JSON Pointer such as `/button/color`,
// `!/canSubmit`, `/status == loading`, `/loading || !/hasMore`; inside a `data-list` row
// they are relative to the row's item, and `""` is the item itself):
//   data-text="/greeting"            textContent (null → ""); data-format="number" groups digits
//   data-show="/error"               hidden unless truthy; data-hide="/hasMore" the opposite
//   data-disabled="!/canSubmit"      the disabled property
//   data-style-{css-prop}="/color"   one CSS property (null removes it)
//   data-attr-{name}="/x"            one attribute (null/false remove it, true → "true"; no on*)
//   data-prop-{name}="/username"     one DOM property (value, checked…); a focused field's
//                                    value is never overwritten while the user types
//   data-class-{name}="/failed"      toggles a class
//   data-list="/rows" data-key="id"  one row per item from the element's <template> child,
//                                    keyed by that member; rows get data-row-key/-index
//   data-announce                    text changes of this element are read out (aria-live);
//   data-announce-label="/title"     with it, prefixed by that value ("Row 1: 3"), relative to the row
// Actions:
//   data-action="increment" on a button: sends that action on click, with the value of
//   data-value="/id" (an expression, relative to the row) or of the control named by
//   data-value-from="element-id"; nothing for `none` actions. Every click (Enter, Space) is
//   sent, in order: the button stays enabled and focusable while its actions are in flight
//   (`aria-busy="true"`). On an input/textarea: sends its value on input (debounced 150 ms, flushed
//   on change/blur and before any button action); on a select/checkbox/radio: on change.
//   Values are coerced to the action's declared type (int, number, bool, object, array).

import {
  evaluate,
  isTruthy,
  toText,
  classifyAttribute,
  planList,
  changedPaths,
  expressionAffected,
  describeView,
  shapeSignature,
  inputTypeFor,
  coerceActionValue,
  humanize,
} from "./bindings.js";
import { jsonEqual } from "./patch.js";

/** Debounce for inputs that send their value as the user types. */
export const INPUT_DEBOUNCE_MS = 150;

const URL_ATTRIBUTES = new Set(["href", "src", "action", "formaction", "xlink:href"]);
const SAFE_URL = /^(?:https?:|mailto:|tel:|[^:]*$)/i;

/** Whether an element renders a list (its descendants belong to its rows' scopes). */
function isListElement(element) {
  return element.hasAttribute("data-list");
}

/**
 * Evaluates a binding, reporting a malformed expression on the element (and the console)
 * instead of breaking the rest of the page.
 */
function safeEvaluate(expression, data, element) {
  try {
    return evaluate(expression, data);
  } catch (error) {
    if (!element.hasAttribute("data-binding-error")) {
      element.setAttribute("data-binding-error", error.message);
      console.warn(`MVVMR: bad binding expression ${JSON.stringify(expression)}`, element, error);
    }
    return undefined;
  }
}

/** Like expressionAffected, but a malformed expression is simply re-evaluated (and reported). */
function safeAffected(expression, changed) {
  try {
    return expressionAffected(expression, changed);
  } catch {
    return true;
  }
}

/**
 * One binding scope: the page, or one row of a list. Holds the bindings found in its
 * subtree (not inside nested lists) and the lists directly inside it.
 */
class Scope {
  /**
   * @param {Element} root
   * @param {{includeRoot: boolean}} options a row's root element binds to the row; the page container does not bind
   */
  constructor(root, { includeRoot }) {
    this.root = root;
    this.bindings = [];
    this.lists = [];
    if (includeRoot) {
      this.collect(root);
      if (isListElement(root)) return;
    }
    this.walk(root);
  }

  /** Collects bindings below `element`, stopping at nested lists (their rows own them). */
  walk(element) {
    for (const child of element.children) {
      if (child.tagName === "TEMPLATE") continue;
      this.collect(child);
      if (!isListElement(child)) this.walk(child);
    }
  }

  collect(element) {
    for (const attribute of Array.from(element.attributes)) {
      const binding = classifyAttribute(attribute.name, attribute.value);
      if (binding) this.bindings.push({ element, binding, last: undefined, initialized: false });
    }
    if (isListElement(element)) this.lists.push(new ListBinding(element));
  }

  /**
   * Brings the scope's DOM in line with `data`.
   * @param {unknown} data the page view or the row item
   * @param {string[]|null} changed pointers a patch touched (page scope only), null = all
   * @param {RenderContext} context
   */
  update(data, changed, context) {
    // Lists first, so a <select> has its options before its value is set.
    for (const list of this.lists) {
      if (changed && list.initialized && !safeAffected(list.expression, changed)) continue;
      list.update(safeEvaluate(list.expression, data, list.element), context);
    }
    for (const entry of this.bindings) {
      if (changed && entry.initialized && !safeAffected(entry.binding.expression, changed)) continue;
      applyBinding(entry, safeEvaluate(entry.binding.expression, data, entry.element), context);
    }
  }
}

/** A `data-list` element: renders one row per item from its `<template>`, keyed by `data-key`. */
class ListBinding {
  constructor(element) {
    this.element = element;
    this.expression = element.getAttribute("data-list");
    this.keyName = element.getAttribute("data-key");
    this.template = Array.from(element.children).find((child) => child.tagName === "TEMPLATE") ?? null;
    this.rows = new Map(); // key -> {element, scope}
    this.order = [];
    this.initialized = false;
  }

  update(items, context) {
    this.initialized = true;
    if (!this.template) return;
    const list = Array.isArray(items) ? items : [];
    const plan = planList(this.order, list, this.keyName);
    for (const key of plan.remove) {
      this.rows.get(key)?.element.remove();
      this.rows.delete(key);
    }
    for (const key of plan.create) {
      const element = this.createRow();
      this.rows.set(key, { element, scope: new Scope(element, { includeRoot: true }) });
    }
    // Place rows in order after the template, moving only those out of place.
    let previous = this.template;
    plan.keys.forEach((key, index) => {
      const row = this.rows.get(key);
      const item = list[index];
      context.rowItems.set(row.element, item);
      const rawKey = this.keyName && item && typeof item === "object" ? item[this.keyName] : item;
      if (rawKey !== undefined && (typeof rawKey !== "object" || rawKey === null)) row.element.setAttribute("data-row-key", String(rawKey));
      row.element.setAttribute("data-row-index", String(index));
      const expected = previous ? previous.nextElementSibling : this.element.firstElementChild;
      if (expected !== row.element) {
        if (previous) previous.after(row.element);
        else this.element.prepend(row.element);
      }
      row.scope.update(item, null, context);
      previous = row.element;
    });
    this.order = plan.keys;
    this.element.toggleAttribute("data-empty", list.length === 0);
  }

  createRow() {
    if (!this.template) return null;
    const content = this.template.content.cloneNode(true);
    const elements = Array.from(content.children);
    if (elements.length === 1) return elements[0];
    const wrapper = document.createElement("div");
    wrapper.append(content);
    return wrapper;
  }
}

/**
 * @typedef {object} RenderContext
 * @property {WeakMap<Element, unknown>} rowItems the item each row element shows
 * @property {WeakMap<Element, boolean>} boundDisabled the disabled state bindings ask for
 * @property {WeakMap<Element, number>} inFlight buttons with actions not yet answered, and how many
 * @property {WeakSet<Element>} staleValues inputs whose bound value waits for the user to leave them
 */

/** Writes one binding's value to the DOM when it differs from what was written last. */
function applyBinding(entry, value, context) {
  const { element, binding } = entry;
  const isFocusedValue = binding.kind === "prop" && binding.name === "value" && element.ownerDocument?.activeElement === element;
  if (isFocusedValue) {
    // Never overwrite what the user is typing; apply when they leave the field.
    if (!entry.initialized || !jsonEqual(entry.last, value)) {
      context.staleValues.add(element);
      entry.pending = value;
    }
    return;
  }
  if (entry.initialized && jsonEqual(entry.last, value) && !context.staleValues.has(element)) return;
  entry.initialized = true;
  entry.last = value === undefined ? undefined : structuredClone(value);
  switch (binding.kind) {
    case "text":
      element.textContent = toText(value, element.getAttribute("data-format"));
      break;
    case "show":
      element.hidden = !isTruthy(value);
      break;
    case "hide":
      element.hidden = isTruthy(value);
      break;
    case "disabled": {
      const disabled = isTruthy(value);
      context.boundDisabled.set(element, disabled);
      setDisabled(element, disabled);
      break;
    }
    case "style":
      if (value === null || value === undefined || value === false) element.style.removeProperty(binding.name);
      else element.style.setProperty(binding.name, String(value));
      break;
    case "attr":
      setAttribute(element, binding.name, value);
      break;
    case "prop":
      context.staleValues.delete(element);
      if (binding.name === "value") element.value = value === null || value === undefined ? "" : String(value);
      else if (binding.name === "checked") element.checked = isTruthy(value);
      else element[binding.name] = value;
      break;
    case "class":
      element.classList.toggle(binding.name, isTruthy(value));
      break;
    default:
      break;
  }
}

function setDisabled(element, disabled) {
  if ("disabled" in element) element.disabled = disabled;
  else if (disabled) element.setAttribute("aria-disabled", "true");
  else element.removeAttribute("aria-disabled");
}

/** Whether a control is disabled: its property, or `aria-disabled` on elements that have none. */
function isDisabled(element) {
  return element.disabled === true || element.getAttribute("aria-disabled") === "true";
}

function setAttribute(element, name, value) {
  if (name.startsWith("on")) return; // never bind event handlers
  if (value === null || value === undefined || value === false) {
    element.removeAttribute(name);
    return;
  }
  const text = value === true ? "true" : toText(value);
  if (URL_ATTRIBUTES.has(name) && !SAFE_URL.test(text.trim())) {
    element.removeAttribute(name); // never keep pointing at the previous address
    return;
  }
  element.setAttribute(name, text);
}

/** Elements that send their value as they change, rather than on click. */
function isValueControl(element) {
  return element.matches("input, select, textarea");
}

function readControl(element) {
  if (element.type === "checkbox") return element.checked;
  return element.value;
}

/**
 * Builds the generic renderer's markup for a view node: objects as description lists,
 * arrays as ordered lists, scalars as `data-text` bindings.
 * @param {import("./bindings.js").ViewNode} node
 * @returns {Element}
 */
function genericNode(node) {
  if (node.type === "scalar") {
    const span = document.createElement("span");
    span.className = `generic-value generic-${node.valueType}`;
    span.setAttribute("data-text", node.path);
    return span;
  }
  if (node.children.length === 0) {
    const empty = document.createElement("span");
    empty.className = "generic-empty";
    empty.textContent = node.type === "array" ? "(none)" : "(empty)";
    return empty;
  }
  if (node.type === "array") {
    const list = document.createElement("ol");
    list.className = "generic-array";
    list.setAttribute("data-path", node.path);
    for (const child of node.children) {
      const item = document.createElement("li");
      item.append(genericNode(child));
      list.append(item);
    }
    return list;
  }
  const list = document.createElement("dl");
  list.className = "generic-object";
  list.setAttribute("data-path", node.path);
  for (const child of node.children) {
    const term = document.createElement("dt");
    term.textContent = child.label;
    const description = document.createElement("dd");
    description.append(genericNode(child));
    list.append(term, description);
  }
  return list;
}

let controlCounter = 0;

/**
 * Builds one control group per action for the generic renderer: a button for `none`,
 * otherwise a labelled input of the right type and a send button.
 * @param {{name: string, value: string}[]} actions
 * @returns {Element}
 */
function genericActions(actions) {
  const section = document.createElement("section");
  section.className = "generic-actions";
  section.setAttribute("aria-label", "Actions");
  if (actions.length > 0) {
    const heading = document.createElement("h2");
    heading.textContent = "Actions";
    section.append(heading);
  }
  for (const action of actions) {
    const inputType = inputTypeFor(action.value);
    const label = humanize(action.name);
    if (!inputType) {
      const button = document.createElement("button");
      button.type = "button";
      button.setAttribute("data-action", action.name);
      button.textContent = label;
      section.append(button);
      continue;
    }
    controlCounter += 1;
    const id = `action-${controlCounter}`;
    const form = document.createElement("form");
    form.className = "generic-action";
    const caption = document.createElement("label");
    caption.htmlFor = id;
    caption.textContent = `${label} (${action.value})`;
    let control;
    if (inputType === "textarea") {
      control = document.createElement("textarea");
      control.rows = 3;
      control.placeholder = action.value === "array" ? "[]" : "{}";
    } else {
      control = document.createElement("input");
      control.type = inputType;
      if (action.value === "int") control.step = "1";
      if (action.value === "number") control.step = "any";
    }
    control.id = id;
    control.name = action.name;
    const button = document.createElement("button");
    button.type = "submit";
    button.setAttribute("data-action", action.name);
    button.setAttribute("data-value-from", id);
    button.textContent = `Send ${label.toLowerCase()}`;
    const row = document.createElement("div");
    row.className = "generic-action-row";
    row.append(control, button);
    form.append(caption, row);
    section.append(form);
  }
  return section;
}

/**
 * Shows one page in a container and keeps it in step with the page's view.
 */
export class PageView {
  /**
   * @param {Element} container the element to render into (its content is replaced)
   * @param {import("./client.js").Page} page the page's current copy
   * @param {object} options
   * @param {DocumentFragment|null} options.template the unit's template content, or null for the generic renderer
   * @param {(name: string, value: unknown, element: Element) => Promise<unknown>} options.onAction sends an action
   * @param {(text: string) => void} [options.announce] speaks a change politely (aria-live)
   * @param {(error: Error) => void} [options.onError] reports an action value that could not be read
   */
  constructor(container, page, { template, onAction, announce = () => {}, onError = () => {} }) {
    this.container = container;
    this.unit = page.unit;
    this.page = page;
    this.onAction = onAction;
    this.announce = announce;
    this.onError = onError;
    this.generic = !template;
    this.context = { rowItems: new WeakMap(), boundDisabled: new WeakMap(), inFlight: new WeakMap(), staleValues: new WeakSet() };
    this.timers = new Map(); // element -> pending debounce
    this.sending = new Map(); // input element -> number of its actions in flight
    this.announced = new WeakMap();
    this.listeners = [];

    container.replaceChildren();
    if (template) {
      container.append(template.cloneNode(true));
      this.scope = new Scope(container, { includeRoot: false });
    } else {
      this.buildGeneric(page);
    }
    this.scope.update(page.view, null, this.context);
    this.rememberAnnouncements();
    this.listen();
  }

  buildGeneric(page) {
    const heading = document.createElement("h1");
    heading.className = "page-title";
    const title = page.view && typeof page.view === "object" && typeof page.view.title === "string" ? "/title" : null;
    if (title) heading.setAttribute("data-text", title);
    else heading.textContent = humanize(page.unit);
    const body = document.createElement("div");
    body.className = "generic-view";
    this.shape = shapeSignature(describeView(page.view));
    body.append(genericNode(describeView(page.view)));
    this.genericBody = body;
    this.actionsSignature = JSON.stringify(page.actions);
    this.genericActions = genericActions(page.actions ?? []);
    this.container.classList.add("generic");
    this.container.append(heading, body, this.genericActions);
    this.scope = new Scope(this.container, { includeRoot: false });
  }

  /**
   * Shows a new copy of the page. With a patch, only bindings reading a changed path are
   * re-evaluated; without one (a snapshot), all are. Bindings write only changed values.
   * @param {import("./client.js").Page} page
   * @param {object[]|null} patch the operations that produced it, if known
   */
  update(page, patch = null) {
    this.page = page;
    if (this.generic) {
      const shape = shapeSignature(describeView(page.view));
      const actionsSignature = JSON.stringify(page.actions);
      if (shape !== this.shape || actionsSignature !== this.actionsSignature) {
        // The view's structure changed: rebuild the markup (the action inputs survive
        // unless the actions themselves changed).
        this.shape = shape;
        const body = document.createElement("div");
        body.className = "generic-view";
        body.append(genericNode(describeView(page.view)));
        this.genericBody.replaceWith(body);
        this.genericBody = body;
        if (actionsSignature !== this.actionsSignature) {
          this.actionsSignature = actionsSignature;
          const actions = genericActions(page.actions ?? []);
          this.genericActions.replaceWith(actions);
          this.genericActions = actions;
        }
        this.scope = new Scope(this.container, { includeRoot: false });
        this.scope.update(page.view, null, this.context);
        this.announceChanges();
        return;
      }
    }
    this.scope.update(page.view, patch ? changedPaths(patch) : null, this.context);
    this.announceChanges();
  }

  rememberAnnouncements() {
    for (const element of this.container.querySelectorAll("[data-announce]")) {
      this.announced.set(element, element.textContent.replace(/\s+/g, " ").trim());
    }
  }

  /**
   * Announces the new text of each visible `data-announce` element that changed, after the
   * value its `data-announce-label` names ("Row 1: 3"). Rows that just appeared are not read out.
   */
  announceChanges() {
    for (const element of this.container.querySelectorAll("[data-announce]")) {
      const text = element.textContent.replace(/\s+/g, " ").trim();
      const before = this.announced.get(element);
      this.announced.set(element, text);
      if (before === undefined || text === before || !text) continue;
      if (element.closest("[hidden]")) continue;
      this.announce(this.announcementLabel(element) + text);
    }
  }

  /** `"Label: "` from an element's `data-announce-label` expression, or `""`. */
  announcementLabel(element) {
    const expression = element.getAttribute("data-announce-label");
    if (!expression) return "";
    const label = toText(safeEvaluate(expression, this.scopeOf(element), element)).trim();
    return label ? `${label}: ` : "";
  }

  /** The item of the innermost list row containing `element`, or the page's view. */
  scopeOf(element) {
    for (let node = element; node && node !== this.container; node = node.parentElement) {
      if (this.context.rowItems.has(node)) return this.context.rowItems.get(node);
    }
    return this.page.view;
  }

  actionType(name) {
    return this.page.actions?.find((action) => action.name === name)?.value ?? null;
  }

  listen() {
    const on = (type, handler) => {
      this.container.addEventListener(type, handler);
      this.listeners.push([type, handler]);
    };
    on("click", (event) => {
      const element = event.target.closest?.("[data-action]");
      if (!element || !this.container.contains(element) || isValueControl(element)) return;
      event.preventDefault();
      this.triggerButton(element);
    });
    on("submit", (event) => event.preventDefault()); // implicit submission clicks the default button
    on("input", (event) => {
      const element = event.target;
      if (!element.matches?.("[data-action]") || !isValueControl(element)) return;
      if (element.matches("select, input[type=checkbox], input[type=radio]")) return; // sent on change
      this.schedule(element);
    });
    on("change", (event) => {
      const element = event.target;
      if (!element.matches?.("[data-action]") || !isValueControl(element)) return;
      if (element.matches("select, input[type=checkbox], input[type=radio]")) this.sendControl(element);
      else this.flush(element);
    });
    on("focusout", (event) => {
      const element = event.target;
      if (this.timers.has(element)) {
        this.flush(element); // its response brings the value the field now shows
      } else if (this.context.staleValues.has(element) && !this.sending.has(element)) {
        // The user left the field and the server changed it meanwhile: show that now.
        setTimeout(() => this.scope.update(this.page.view, null, this.context), 0);
      }
    });
  }

  schedule(element) {
    clearTimeout(this.timers.get(element));
    this.timers.set(element, setTimeout(() => this.flush(element), INPUT_DEBOUNCE_MS));
  }

  /** Sends a debounced input now, if it has a pending change. */
  flush(element) {
    if (!this.timers.has(element)) return;
    clearTimeout(this.timers.get(element));
    this.timers.delete(element);
    this.sendControl(element);
  }

  /** Sends every pending debounced input (before a button's action, so it sees them). */
  flushAll() {
    for (const element of Array.from(this.timers.keys())) this.flush(element);
  }

  sendControl(element) {
    const name = element.getAttribute("data-action");
    let value;
    try {
      value = coerceActionValue(this.actionType(name) ?? "string", readControl(element));
    } catch (error) {
      this.onError(error);
      return;
    }
    this.sending.set(element, (this.sending.get(element) ?? 0) + 1);
    const done = () => {
      const count = this.sending.get(element) - 1;
      if (count > 0) this.sending.set(element, count);
      else this.sending.delete(element);
    };
    this.onAction(name, value, element).then(done, done);
  }

  /**
   * Runs a button's action: reads its value and sends it. A click while earlier ones are in
   * flight is sent too, after them (the client's outbox keeps the order); the button is marked
   * `aria-busy` meanwhile but never disabled, so it keeps the keyboard focus.
   */
  triggerButton(element) {
    if (isDisabled(element)) return;
    const name = element.getAttribute("data-action");
    const type = this.actionType(name);
    let value = null;
    try {
      if (element.hasAttribute("data-value-from")) {
        const control = element.ownerDocument.getElementById(element.getAttribute("data-value-from"));
        value = control ? readControl(control) : null;
        value = coerceActionValue(type ?? "string", value);
      } else if (element.hasAttribute("data-value")) {
        value = evaluate(element.getAttribute("data-value"), this.scopeOf(element));
        if (type && type !== "none") value = coerceActionValue(type, value);
      }
      if (type === "none") value = null;
    } catch (error) {
      this.onError(error);
      return;
    }
    this.flushAll();
    const inFlight = this.context.inFlight;
    inFlight.set(element, (inFlight.get(element) ?? 0) + 1);
    element.setAttribute("aria-busy", "true");
    const done = () => {
      const count = (inFlight.get(element) ?? 1) - 1;
      if (count > 0) {
        inFlight.set(element, count);
        return;
      }
      inFlight.delete(element);
      element.removeAttribute("aria-busy");
    };
    this.onAction(name, value, element).then(done, done);
  }

  /**
   * Fields that send their value (`data-action`) but show none from the view (no
   * `data-prop-value`): a password. After a reload the field is empty while the server may
   * still hold what was typed, so a form could be submitted with a value nobody can see.
   * This sends each such empty field's action with its empty value, so the server forgets it.
   * @returns {number} how many fields were reset
   */
  resetWriteOnlyFields() {
    let count = 0;
    for (const element of this.container.querySelectorAll("input[data-action], textarea[data-action]")) {
      if (element.hasAttribute("data-prop-value") || element.matches("input[type=checkbox], input[type=radio]")) continue;
      if (element.value !== "") continue;
      this.sendControl(element);
      count += 1;
    }
    return count;
  }

  /** Stops listening and cancels pending inputs. */
  destroy() {
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
    for (const [type, handler] of this.listeners) this.container.removeEventListener(type, handler);
    this.listeners = [];
    this.container.classList.remove("generic");
  }
}
