import { loadKubeconfig } from "../../../../core/kube/client.js";
import { forgeKubeconfig } from "../../../../core/kube/kubeconfig.js";
import { heldCertificateOf, withRenewedCertificate } from "../../../../core/authentication/stored-identity.js";

const parts = {
  name: "pulumi-liqo-p",
  server: "https://169.254.0.1:6443",
  caPem: "CA PEM",
  certPem: "OLD CERT",
  keyPem: "KEY PEM",
  tlsServerName: "kubernetes.default",
};

describe("an identity kubeconfig with a renewed certificate", () => {
  test(
    "GIVEN an in-band identity (a server inside the tunnel, verified under a name) WHEN its certificate is replaced THEN " +
      "only the certificate changes",
    () => {
      const renewed = withRenewedCertificate(forgeKubeconfig(parts), "NEW CERT", "Secret x/identity-p");
      expect(renewed).toBe(forgeKubeconfig({ ...parts, certPem: "NEW CERT" }));
      expect(heldCertificateOf(renewed, "renewed")).toEqual({ certificatePem: "NEW CERT", keyPem: "KEY PEM" });
      expect(loadKubeconfig(renewed, "renewed").getCurrentCluster()).toMatchObject({
        server: parts.server,
        tlsServerName: "kubernetes.default",
      });
    },
  );

  test("GIVEN an out-of-band identity (no server name) THEN none is added", () => {
    const { tlsServerName: _none, ...outOfBand } = parts;
    expect(withRenewedCertificate(forgeKubeconfig(outOfBand), "NEW CERT", "Secret x/identity-p")).toBe(
      forgeKubeconfig({ ...outOfBand, certPem: "NEW CERT" }),
    );
  });

  test("GIVEN text that is no kubeconfig THEN the error names where it came from and quotes none of it", () => {
    expect(() => withRenewedCertificate("key: SECRET-MATERIAL", "NEW", "Secret x/identity-p")).toThrow(
      /^Secret x\/identity-p: not a usable kubeconfig/,
    );
    expect(() => withRenewedCertificate("key: SECRET-MATERIAL", "NEW", "Secret x/identity-p")).not.toThrow(
      /SECRET-MATERIAL/,
    );
  });
});
