/** The progress steps an in-band peering's create shows, in order: the tunnel's own counted inside the first. */
export const IN_BAND_CREATE_STEPS: readonly string[] = [
  "[1/4] network fabric",
  "[1/4] (1/4) network fabric",
  "[1/4] (2/4) network fabric",
  "[1/4] (3/4) network fabric",
  "[1/4] (4/4) network fabric",
  "[2/4] authentication",
  "[3/4] negotiation",
  "[4/4] virtual node",
];
