/**
 * Progress lines: their numbering, the sub-count of a step's own steps, and a live status that
 * sends them one at a time, in order, and clears itself at the end.
 */
import { liveStatus, progressTo, withinStep } from "../../../../core/operation/progress.js";

describe("progress lines", () => {
  test("GIVEN steps WHEN written THEN each line is numbered [index/total] before its message", () => {
    const lines: string[] = [];
    const progress = progressTo((line) => lines.push(line));
    progress.step(1, 3, "authentication: asking https://a:6443 for an identity");
    progress.step(2, 3, "negotiation: waiting for an offer from provider a");
    expect(lines).toEqual([
      "[1/3] authentication: asking https://a:6443 for an identity",
      "[2/3] negotiation: waiting for an offer from provider a",
    ]);
  });

  test("GIVEN the steps of a step WHEN written THEN they keep the outer count and add their own", () => {
    const lines: string[] = [];
    const outer = progressTo((line) => lines.push(line));
    outer.step(1, 4, "network fabric: tunnel between the gateways of b and a");
    const inner = withinStep(outer, 1, 4);
    inner.step(2, 4, "network fabric: telling the gateway of provider a");
    outer.step(2, 4, "authentication: the agent of b asks for an identity");
    expect(lines).toEqual([
      "[1/4] network fabric: tunnel between the gateways of b and a",
      "[1/4] (2/4) network fabric: telling the gateway of provider a",
      "[2/4] authentication: the agent of b asks for an identity",
    ]);
  });
});

describe("liveStatus", () => {
  /** A send that takes `delayMs` and records what it sent and how many sends were in flight at once. */
  function slowSend(delayMs: number) {
    const sent: string[] = [];
    let inFlight = 0;
    let mostInFlight = 0;
    const send = async (status: string): Promise<void> => {
      inFlight++;
      mostInFlight = Math.max(mostInFlight, inFlight);
      await new Promise((resolve) => setTimeout(resolve, delayMs));
      sent.push(status);
      inFlight--;
    };
    return { send, sent, mostInFlight: () => mostInFlight };
  }

  test('GIVEN steps started faster than they are sent WHEN the status ends THEN each went in order, one at a time, and the clearing "" last', async () => {
    const engine = slowSend(20);
    const status = liveStatus(engine.send);
    status.step(1, 2, "negotiation: renegotiating with provider a");
    status.step(2, 2, "virtual node: resizing Node liqo-a");
    expect(engine.sent).toEqual([]);
    await status.end();
    expect(engine.sent).toEqual([
      "[1/2] negotiation: renegotiating with provider a",
      "[2/2] virtual node: resizing Node liqo-a",
      "",
    ]);
    expect(engine.mostInFlight()).toBe(1);
  });

  test("GIVEN no step WHEN the status ends THEN it is cleared all the same", async () => {
    const engine = slowSend(0);
    await liveStatus(engine.send).end();
    expect(engine.sent).toEqual([""]);
  });

  test("GIVEN a send that fails WHEN the status goes on and ends THEN the later lines are still sent and end resolves", async () => {
    const sent: string[] = [];
    const status = liveStatus(async (line) => {
      if (line.startsWith("[1/2]")) throw new Error("engine gone");
      sent.push(line);
    });
    status.step(1, 2, "authentication: removing the tenant");
    status.step(2, 2, "virtual node: removing Node liqo-a");
    await expect(status.end()).resolves.toBeUndefined();
    expect(sent).toEqual(["[2/2] virtual node: removing Node liqo-a", ""]);
  });
});
