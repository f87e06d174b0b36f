/** How recorded owners (resource URNs) are named in messages. */
import { describeOwner } from "../../../../core/api/names.js";

describe("describeOwner", () => {
  test("GIVEN a resource's URN THEN its name, stack and project", () => {
    expect(describeOwner("urn:pulumi:dev::infra::pulumi-nodejs:dynamic/liqo:Peering::b-to-a")).toBe(
      '"b-to-a" (stack dev, project infra)',
    );
  });

  test("GIVEN a child resource's URN (a parent type chain) THEN still its own name", () => {
    expect(describeOwner("urn:pulumi:prod::infra::my:Mesh$pulumi-nodejs:dynamic/liqo:Cluster::eu-west")).toBe(
      '"eu-west" (stack prod, project infra)',
    );
  });

  test("GIVEN something that is not a URN THEN it as it is", () => {
    expect(describeOwner("someone")).toBe("someone");
  });
});
