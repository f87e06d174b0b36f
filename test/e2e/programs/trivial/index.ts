import * as pulumi from "@pulumi/pulumi";

const config = new pulumi.Config();

// A dynamic provider with no I/O: its create and diff are all the engine needs to exercise.
const echo: pulumi.dynamic.ResourceProvider = {
  async create(inputs) {
    return { id: `echo-${inputs.message}`, outs: { message: inputs.message, length: String(inputs.message).length } };
  },
  async diff(_id, olds, news) {
    const changes = olds.message !== news.message;
    return { changes, replaces: changes ? ["message"] : [] };
  },
};

class Echo extends pulumi.dynamic.Resource {
  declare readonly length: pulumi.Output<number>;
  constructor(name: string, message: pulumi.Input<string>) {
    super(echo, name, { message, length: undefined }, {});
  }
}

const resource = new Echo("echo", config.get("message") ?? "hello");
export const length = resource.length;
