/**
 * Reading a request body with a size limit, and closing after a refusal without losing the answer:
 * for the agent's HTTPS services that take bodies from callers they do not trust yet (the auth
 * service, the placement webhook).
 */
import type { IncomingMessage } from "node:http";
import type { Socket } from "node:net";

/** How long a connection answered 413 still takes (and drops) what its client sends, at most. */
const LINGER_MS = 2_000;

/**
 * Reads a request body up to `limit` bytes; undefined when it is larger. Past the limit nothing
 * more is kept, and the connection is left open for the answer (see {@link closeLingering}).
 */
export function readBody(req: IncomingMessage, limit: number): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const take = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > limit) {
        req.off("data", take);
        resolve(undefined);
        return;
      }
      chunks.push(chunk);
    };
    req.on("data", take);
    req.on("end", () => resolve(Buffer.concat(chunks)));
    req.on("error", reject);
  });
}

/**
 * Makes the HTTP layer's close after the answer on `socket` a lingering one: this side ends (the
 * answer, then TLS close_notify and FIN) and drops whatever the client still sends until it ends
 * too, or for {@link LINGER_MS} at most: the staged close of RFC 9112 §9.6. Closed at once with the
 * client's bytes unread, the socket would make the kernel send a reset, which can destroy the
 * answer in the client's buffers before it is read: the client would see a connection reset
 * instead of the 413. (On loopback the answer won that race in every try measured; across a
 * network it need not.)
 */
export function closeLingering(socket: Socket): void {
  socket.destroySoon = () => {
    const timer = setTimeout(() => socket.destroy(), LINGER_MS).unref();
    socket.once("close", () => clearTimeout(timer));
    socket.once("end", () => socket.destroy());
    socket.end();
    socket.resume();
  };
}
