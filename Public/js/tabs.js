// One session per browser tab. A tab keeps its session id in sessionStorage, which survives a
// reload but is copied when the tab is duplicated (or opened from a link that shares it). So
// before resuming a stored id, the tab claims it: a Web Lock held for the tab's lifetime where
// the browser has them (secure contexts: https, localhost), else a BroadcastChannel roll call.
// A copy whose id another open tab holds starts its own session instead of moving that tab.
// No DOM: the lock manager and the channel class are injected, so this runs in Node.

const LOCK_PREFIX = "mvvmr.session.";
const CHANNEL_NAME = "mvvmr.sessions";

/**
 * @typedef {{claimed: boolean, release: () => void}} Claim  `claimed`: no other open tab holds the id
 */

/**
 * Claims a session id for this tab.
 * @param {string} session the id from sessionStorage
 * @param {object} environment
 * @param {{request: Function}|null|undefined} environment.locks `navigator.locks`, when there
 * @param {typeof BroadcastChannel|null|undefined} environment.BroadcastChannel the channel class, when there
 * @param {number} [environment.lockWait] ms to wait for a lock held by the document this one
 *   replaces (a reload): a live tab holds it for longer
 * @param {number} [environment.rollCallWait] ms to wait for another tab's answer on the channel
 * @returns {Promise<Claim>}
 */
export async function claimSession(session, { locks = null, BroadcastChannel: Channel = null, lockWait = 500, rollCallWait = 150 } = {}) {
  if (locks && typeof locks.request === "function") return claimWithLock(session, locks, lockWait);
  if (typeof Channel === "function") return claimByRollCall(session, Channel, rollCallWait);
  return { claimed: true, release: () => {} };
}

function claimWithLock(session, locks, wait) {
  let release = () => {};
  const held = new Promise((resolve) => {
    release = resolve;
  });
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), wait);
  return new Promise((resolve) => {
    locks
      .request(LOCK_PREFIX + session, { signal: controller.signal }, () => {
        clearTimeout(timer);
        resolve({ claimed: true, release });
        return held; // kept until released, or until the tab goes away
      })
      .catch(() => {
        clearTimeout(timer);
        resolve({ claimed: false, release: () => {} });
      });
  });
}

function claimByRollCall(session, Channel, wait) {
  const channel = new Channel(CHANNEL_NAME);
  let holding = false;
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      holding = true;
      resolve({ claimed: true, release: () => ((holding = false), channel.close()) });
    }, wait);
    channel.onmessage = ({ data }) => {
      if (data?.session !== session) return;
      if (data.type === "who" && holding) channel.postMessage({ type: "mine", session });
      if (data.type === "mine" && !holding) {
        clearTimeout(timer);
        channel.close();
        resolve({ claimed: false, release: () => {} });
      }
    };
    channel.postMessage({ type: "who", session });
  });
}
