// An empty Pulumi program as `pulumi new typescript` starts one: it loads the SDK and declares no
// resource. `pulumi up` of it is the engine's, the language host's and the SDK's fixed cost.
import * as pulumi from "@pulumi/pulumi";

export const stack = pulumi.getStack();
