/** failingReadyChecks: which checks a `/readyz?verbose` answer says fail, as the short probe reports them. */
import { failingReadyChecks } from "../../../../core/kube/client.js";

describe("failingReadyChecks", () => {
  test("GIVEN an API server whose etcd is stopped WHEN its verbose answer is read THEN the etcd checks are named", () => {
    const body = [
      "[+]ping ok",
      "[+]log ok",
      "[-]etcd failed: reason withheld",
      "[+]informer-sync ok",
      "[-]etcd-readiness failed: reason withheld",
      "readyz check failed",
    ].join("\n");
    expect(failingReadyChecks(body)).toEqual(["etcd", "etcd-readiness"]);
  });

  test("GIVEN a ready answer or a body of another shape WHEN read THEN no check is named", () => {
    expect(failingReadyChecks("[+]ping ok\n[+]etcd ok\nreadyz check passed\n")).toEqual([]);
    expect(failingReadyChecks("not a list [-]etcd failed")).toEqual([]);
  });
});
