/** The hidden input through which a resource hands its own URN to its provider. */
import * as pulumi from "@pulumi/pulumi";
import { URN_INPUT } from "../../core/resources/hidden-inputs.js";

/**
 * `{ __urn: <the URN the engine will give resource `name` of `type`> }`, computed as the engine
 * does (stack, project, parent's type chain, the dynamic resource's type token), for the
 * resource's inputs.
 */
export function ownUrn(
  type: string,
  name: string,
  opts: pulumi.CustomResourceOptions | undefined,
): Record<string, pulumi.Output<string>> {
  return { [URN_INPUT]: pulumi.createUrn(name, `pulumi-nodejs:dynamic/liqo:${type}`, opts?.parent) };
}
