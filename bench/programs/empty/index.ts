// No resources: `pulumi up` of this program is the engine's and the language host's fixed cost.
export const nothing = "declared";
