/**
 * The e2e tests' reading of where `pulumi up --non-interactive` printed each progress step: on a
 * resource's row, on the stack's, or on no row at all. Lines as pulumi 3.259 prints them.
 */
import { stepsByRow } from "../../../harness/pulumi.js";

describe("stepsByRow", () => {
  test("GIVEN steps as resources' live statuses WHEN read THEN each counts under its own row, in order, once per step", () => {
    const output = [
      "Updating (test):",
      "@ updating....",
      " +  pulumi-nodejs:dynamic/liqo:Peering b-to-a creating (0s) ",
      " +  pulumi-nodejs:dynamic/liqo:Peering b-to-a creating (0s) [1/4] network fabric: tunnel between the gateways of b and a",
      " +  pulumi-nodejs:dynamic/liqo:Peering b-to-a creating (1s) [1/4] (1/4) network fabric: asking the gateway of consumer b",
      " +  pulumi-nodejs:dynamic/liqo:Peering b-to-a creating (1s) [1/4] (1/4) network fabric: asking the gateway of consumer b",
      " -  pulumi-nodejs:dynamic/liqo:Tunnel b-to-a-tunnel deleting (2s) [1/1] network fabric: removing the tunnel on both gateways",
      " +  pulumi-nodejs:dynamic/liqo:Peering b-to-a creating (5s) [2/4] authentication: the agent of b asks https://10.0.0.1:8443",
      " +  pulumi-nodejs:dynamic/liqo:Peering b-to-a created (6s) ",
      " +  pulumi:pulumi:Stack in-band-test created (9s) ",
    ].join("\n");
    expect(stepsByRow(output)).toEqual({
      "liqo:Peering::b-to-a": ["[1/4] network fabric", "[1/4] (1/4) network fabric", "[2/4] authentication", ""],
      "liqo:Tunnel::b-to-a-tunnel": ["[1/1] network fabric"],
    });
  });

  test("GIVEN a row printed right after the engine's progress dots, on their line WHEN read THEN it counts under its row", () => {
    const output = [
      " +  pulumi-nodejs:dynamic/liqo:Peering b-to-a creating (0s) [1/3] authentication: asking https://a:8443",
      "@ updating.... +  pulumi-nodejs:dynamic/liqo:Peering b-to-a creating (1s) [2/3] negotiation: waiting for an offer from provider a",
      " +  pulumi-nodejs:dynamic/liqo:Peering b-to-a created (3s) ",
    ].join("\n");
    expect(stepsByRow(output)).toEqual({
      "liqo:Peering::b-to-a": ["[1/3] authentication", "[2/3] negotiation", ""],
    });
  });

  test("GIVEN a status never cleared, or an error after a step WHEN read THEN no clearing is seen", () => {
    const output = [
      " +  pulumi-nodejs:dynamic/liqo:Peering b-to-a creating (0s) ",
      " +  pulumi-nodejs:dynamic/liqo:Peering b-to-a creating (0s) [3/3] virtual node: creating Node liqo-a in consumer b",
      " +  pulumi-nodejs:dynamic/liqo:Peering b-to-a created (2s) [3/3] virtual node: creating Node liqo-a in consumer b",
      " +  pulumi-nodejs:dynamic/liqo:Tunnel t creating (0s) [1/4] network fabric: asking the gateway of consumer b",
      " +  pulumi-nodejs:dynamic/liqo:Tunnel t creating (9s) error: network fabric: no answer from the gateway of b",
      " +  pulumi-nodejs:dynamic/liqo:Tunnel t **creating failed** error: network fabric: no answer from the gateway of b",
    ].join("\n");
    expect(stepsByRow(output)).toEqual({
      "liqo:Peering::b-to-a": ["[3/3] virtual node"],
      "liqo:Tunnel::t": ["[1/4] network fabric"],
    });
  });

  test('GIVEN steps a provider wrote to its stderr WHEN read THEN they count under the stack\'s row, and whole under "" where Diagnostics repeats them', () => {
    const output = [
      " +  pulumi:pulumi:Stack local-peering-test creating (10s) peering: [1/3] authentication: asking https://a:8443 for an identity",
      "Diagnostics:",
      "  pulumi:pulumi:Stack (local-peering-test):",
      "    peering: [1/3] authentication: asking https://a:8443 for an identity",
    ].join("\n");
    expect(stepsByRow(output)).toEqual({
      "pulumi:pulumi:Stack::local-peering-test": ["[1/3] authentication"],
      "": ["peering: [1/3] authentication: asking https://a:8443 for an identity"],
    });
  });
});
