import { UNKNOWN } from "../../../core/resources/inputs.js";
import { conform, conformObject } from "../../../plugin/conform.js";
import { schemaFacts, schemaText } from "../../../plugin/schema.js";
import { SECRET_SIG, SIG_KEY } from "../../../plugin/values.js";

const envelope = (value: unknown) => ({ [SIG_KEY]: SECRET_SIG, value });

describe("conform", () => {
  test("GIVEN scalars of the wrong kind WHEN brought to their types THEN converted where no meaning is lost, else left", () => {
    expect(conform(2, { type: "string" }, {})).toBe("2");
    expect(conform("20", { type: "integer" }, {})).toBe(20);
    expect(conform("twenty", { type: "integer" }, {})).toBe("twenty");
    expect(conform("", { type: "number" }, {})).toBe("");
    expect(conform("false", { type: "boolean" }, {})).toBe(false);
    expect(conform(UNKNOWN, { type: "integer" }, {})).toBe(UNKNOWN);
  });

  test("GIVEN a secret, a list and a map WHEN conformed THEN inside them, the secret kept", () => {
    expect(conform(envelope(3), { type: "string" }, {})).toEqual(envelope("3"));
    expect(conform([1, "2"], { type: "array", items: { type: "string" } }, {})).toEqual(["1", "2"]);
    expect(conform({ tier: 1 }, { type: "object", additionalProperties: { type: "string" } }, {})).toEqual({
      tier: "1",
    });
    expect(conformObject({ x: 1, other: 2 }, { x: { type: "string" } }, {})).toEqual({ x: "1", other: 2 });
  });

  test("GIVEN a Peering's inputs as Pulumi YAML sent them WHEN brought to schema.json THEN cpu is the string it is there", () => {
    const facts = schemaFacts(schemaText());
    const sent = { resources: { cpu: 2, memory: "4Gi", pods: "20" }, timeoutSeconds: "120", labels: { tier: 1 } };
    expect(facts.conformInputs("liqo:index:Peering", sent)).toEqual({
      resources: { cpu: "2", memory: "4Gi", pods: 20 },
      timeoutSeconds: 120,
      labels: { tier: "1" },
    });
  });
});
