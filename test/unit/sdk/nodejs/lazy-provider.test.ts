import { lazyProvider } from "../../../../sdk/nodejs/lazy-provider.js";

describe("lazyProvider", () => {
  test("GIVEN resources of one kind WHEN their providers are built THEN they share one object (serialized once), and each kind has its own", () => {
    expect(lazyProvider("cluster")).toBe(lazyProvider("cluster"));
    expect(lazyProvider("cluster")).not.toBe(lazyProvider("peering"));
  });
});
