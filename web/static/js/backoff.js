// Asking again, later each time. A list that holds something on its way (a
// payment moving, a recipient PENDING) is asked for again after the first of
// its delays, then after each next one, the last repeating, until nothing
// moves. The Activity list (views/activity.js) and the recipients' store
// (recipients.js) wait this way.

/**
 * A timer that waits longer each time it is set, along delays.
 *
 * @param {number[]} delays in ms, the last one repeating
 * @returns {{later: (fn: () => void) => void, stop: () => void, reset: () => void, readonly pending: boolean}}
 */
export function backoff(delays) {
  let timer = 0;
  let delay = 0; // the last delay waited, 0 before the first
  return {
    /** Calls fn after the next delay (the call set before, if any, is cancelled). */
    later(fn) {
      clearTimeout(timer);
      const i = delays.indexOf(delay);
      delay = delays[Math.min(i + 1, delays.length - 1)];
      timer = setTimeout(() => {
        timer = 0;
        fn();
      }, delay);
    },
    /** Cancels the call set, if any; the next one waits longer still. */
    stop() {
      clearTimeout(timer);
      timer = 0;
    },
    /** Cancels the call set, if any, and starts again from the first delay. */
    reset() {
      this.stop();
      delay = 0;
    },
    /** A call is set. */
    get pending() {
      return timer !== 0;
    },
  };
}
