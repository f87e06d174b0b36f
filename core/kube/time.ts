/** Kubernetes time formats that client-node's Date serialization does not produce. */

/**
 * A `MicroTime` (e.g. a Lease's `renewTime`): RFC 3339 with exactly six fractional digits, which
 * the API server requires and `Date.toISOString()` (three digits) does not give.
 */
export function microTime(date: Date): string {
  return date.toISOString().replace(/\.(\d{3})Z$/, ".$1000Z");
}
