// Presented pages as modal dialogs. app.js marks the page container `data-presented="true"`
// while the page on top of the stack was presented (the server's `navigation.presented`);
// this module watches that mark and, while it is set:
//   - gives the container role="dialog", aria-modal="true" and aria-labelledby its heading;
//   - makes the rest of the app inert (out of the tab order and hidden from assistive
//     technology), except live regions, so status messages are still read out;
//   - moves focus into the dialog if it is not there, and keeps it there: Tab and Shift+Tab
//     wrap around at the dialog's last and first control;
//   - sends Escape to `dismiss` (app.js: the same `client.back` as the Back button), once
//     until it settles.
// When the mark goes, all of that is undone and focus returns to the control that opened the
// dialog (found again by id or data-action in the page now shown), else stays in the page.
// DOM only: no protocol, no rendering.

const FOCUSABLE = "a[href], area[href], button, input:not([type=hidden]), select, textarea, summary, iframe, [contenteditable=''], [contenteditable=true], [tabindex]";
const LIVE_REGION = "[aria-live], [role=status], [role=alert], [role=log], [role=marquee], [role=timer]";
const SKIPPED = new Set(["SCRIPT", "STYLE", "TEMPLATE", "NOSCRIPT", "LINK", "META"]);

/** Whether `element` can take focus by Tab now. */
function isTabbable(element) {
  if (element.tabIndex < 0 || element.disabled || element.closest("[inert], [hidden]")) return false;
  if (element.getClientRects().length === 0) return false;
  const style = element.ownerDocument.defaultView?.getComputedStyle(element);
  return !style || style.visibility !== "hidden";
}

/** The controls inside `container` that Tab reaches, in document order. */
export function tabbables(container) {
  return Array.from(container.querySelectorAll(FOCUSABLE)).filter(isTabbable);
}

/**
 * Makes everything outside `keep` inert, walking up from it to the body; a sibling that
 * holds a live region is entered instead, so the live region itself stays reachable.
 * @returns {Element[]} the elements made inert (to be released later)
 */
export function inertOutside(keep) {
  const made = [];
  const visit = (element) => {
    if (SKIPPED.has(element.tagName) || element.inert) return;
    if (element.matches(LIVE_REGION)) return;
    if (element.querySelector(LIVE_REGION)) {
      for (const child of element.children) visit(child);
      return;
    }
    element.inert = true;
    made.push(element);
  };
  for (let node = keep; node && node.parentElement && node !== node.ownerDocument.body; node = node.parentElement) {
    for (const sibling of node.parentElement.children) if (sibling !== node) visit(sibling);
  }
  return made;
}

/** What identifies a control across a re-render of the page: its id, or its action and value. */
function describeControl(element) {
  if (!element || !element.matches?.(FOCUSABLE) || element.tabIndex < 0) return null;
  return {
    id: element.id || null,
    action: element.getAttribute("data-action"),
    value: element.getAttribute("data-value"),
    rowKey: element.closest("[data-row-key]")?.getAttribute("data-row-key") ?? null,
    element,
  };
}

/** The control `described` names, in the document as it is now. */
function findControl(document, container, described) {
  if (!described) return null;
  if (described.element.isConnected && isTabbable(described.element)) return described.element;
  if (described.id) {
    const byId = document.getElementById(described.id);
    if (byId && isTabbable(byId)) return byId;
  }
  if (described.action) {
    const candidates = Array.from(container.querySelectorAll("[data-action]")).filter(
      (element) =>
        element.getAttribute("data-action") === described.action &&
        (described.value === null || element.getAttribute("data-value") === described.value) &&
        (described.rowKey === null || element.closest("[data-row-key]")?.getAttribute("data-row-key") === described.rowKey),
    );
    return candidates.find(isTabbable) ?? null;
  }
  return null;
}

/**
 * Shows `container` as a modal dialog while it is marked `data-presented="true"`.
 * @param {HTMLElement} container the page container (`#page`)
 * @param {object} options
 * @param {() => unknown} options.dismiss what Escape does (goes back); may return a promise
 * @returns {{sync: () => void, destroy: () => void, readonly open: boolean}}
 */
export function watchPresentedPage(container, { dismiss }) {
  const document = container.ownerDocument;
  let open = false;
  let inerted = [];
  let assignedId = null;
  let dismissing = false;
  /** The control focused last outside a dialog: where focus goes back when it closes. */
  let lastControl = null;
  let returnTo = null;

  const heading = () => container.querySelector("h1, h2, [role=heading]");

  function label() {
    container.removeAttribute("aria-label");
    const title = heading();
    if (!title) {
      container.removeAttribute("aria-labelledby");
      container.setAttribute("aria-label", document.title || "Dialog");
      return;
    }
    if (!title.id) {
      assignedId = `${container.id || "dialog"}-title`;
      title.id = assignedId;
    }
    container.setAttribute("aria-labelledby", title.id);
  }

  function focusInside() {
    if (container.contains(document.activeElement) && document.activeElement !== container) return;
    const title = heading();
    if (title) {
      if (!title.hasAttribute("tabindex")) title.tabIndex = -1;
      title.focus();
    } else {
      (tabbables(container)[0] ?? container).focus();
    }
  }

  function openDialog() {
    open = true;
    returnTo = lastControl;
    container.setAttribute("role", "dialog");
    container.setAttribute("aria-modal", "true");
    label();
    inerted = inertOutside(container);
    focusInside();
  }

  function closeDialog() {
    open = false;
    container.removeAttribute("role");
    container.removeAttribute("aria-modal");
    container.removeAttribute("aria-labelledby");
    container.removeAttribute("aria-label");
    if (assignedId) {
      const title = document.getElementById(assignedId);
      if (title && title.id === assignedId) title.removeAttribute("id");
      assignedId = null;
    }
    for (const element of inerted) element.inert = false;
    inerted = [];
    const target = findControl(document, container, returnTo);
    returnTo = null;
    if (target) target.focus();
    else if (!container.contains(document.activeElement)) focusInside();
  }

  function sync() {
    const presented = container.dataset.presented === "true";
    if (presented && !open) openDialog();
    else if (!presented && open) closeDialog();
    else if (presented && open) {
      // Another presented page, or the same one rendered again.
      label();
      focusInside();
    }
  }

  function onKeydown(event) {
    if (!open || event.defaultPrevented || event.isComposing) return;
    if (event.key === "Escape") {
      event.preventDefault();
      if (dismissing) return;
      dismissing = true;
      Promise.resolve()
        .then(() => dismiss())
        .catch(() => {})
        .finally(() => {
          dismissing = false;
        });
      return;
    }
    if (event.key !== "Tab" || event.altKey || event.ctrlKey || event.metaKey) return;
    const controls = tabbables(container);
    if (controls.length === 0) {
      event.preventDefault();
      focusInside();
      return;
    }
    const active = document.activeElement;
    const first = controls[0];
    const last = controls[controls.length - 1];
    const inside = container.contains(active);
    const follows = (element) => active && active.compareDocumentPosition(element) & Node.DOCUMENT_POSITION_FOLLOWING;
    if (event.shiftKey) {
      if (!inside || active === first || (!controls.includes(active) && !controls.some((c) => !follows(c)))) {
        event.preventDefault();
        last.focus();
      }
    } else if (!inside || active === last || (!controls.includes(active) && !controls.some(follows))) {
      event.preventDefault();
      first.focus();
    }
  }

  function onFocusin(event) {
    const target = event.target;
    if (open) {
      // Focus moved out of the dialog by script (inert keeps users from it): bring it back.
      if (target instanceof Element && !container.contains(target) && !target.matches(LIVE_REGION)) focusInside();
      return;
    }
    const described = describeControl(target);
    if (described) lastControl = described;
  }

  function onClick(event) {
    // Some browsers do not focus a clicked button: remember it as the opener all the same.
    if (open || !(event.target instanceof Element)) return;
    const described = describeControl(event.target.closest(FOCUSABLE));
    if (described) lastControl = described;
  }

  const observer = new MutationObserver(sync);
  observer.observe(container, { attributes: true, attributeFilter: ["data-presented", "data-unit"] });
  document.addEventListener("keydown", onKeydown);
  document.addEventListener("focusin", onFocusin);
  document.addEventListener("click", onClick, true);
  sync();

  return {
    sync,
    destroy() {
      observer.disconnect();
      document.removeEventListener("keydown", onKeydown);
      document.removeEventListener("focusin", onFocusin);
      document.removeEventListener("click", onClick, true);
      if (open) closeDialog();
    },
    get open() {
      return open;
    },
  };
}
