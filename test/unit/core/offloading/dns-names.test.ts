import {
  clusterDomainOf,
  consumerNamespaceOf,
  decideQuestion,
  nameAsSeen,
  nameserverOf,
  podOwnName,
  searchesOf,
  zonesOf,
  type ConsumerZone,
} from "../../../../core/offloading/dns-names.js";

const domains = { consumer: "cluster.local", provider: "cluster.local" };
const zone: ConsumerZone = {
  consumer: "b-id",
  namespaces: new Map([
    ["store", "store-b-id"],
    ["tools", "tools-b-id"],
  ]),
};

describe("the names an offloaded pod asks", () => {
  test.each([
    ["db.store.svc.cluster.local", "db.store-b-id.svc.cluster.local"],
    ["DB.Store.svc.cluster.local.", "db.store-b-id.svc.cluster.local"],
    ["db-0.db.store.svc.cluster.local", "db-0.db.store-b-id.svc.cluster.local"],
    ["_http._tcp.web.tools.svc.cluster.local", "_http._tcp.web.tools-b-id.svc.cluster.local"],
    ["example.com", "example.com"],
    ["registry.example.org.", "registry.example.org"],
  ])("GIVEN %s THEN the provider's DNS is asked %s", (asked, name) => {
    expect(decideQuestion(asked, zone, domains)).toEqual({ kind: "ask", name });
  });

  test.each([
    // A namespace of the consumer's that is not here, or one of the provider's own: nothing behind it.
    ["kubernetes.default.svc.cluster.local"],
    ["kube-dns.kube-system.svc.cluster.local"],
    // The namespace as it is named here: the consumer's pods never knew it by that name.
    ["db.store-b-id.svc.cluster.local"],
    // A pod name that spells no address, the domain itself: they would name the provider's pods.
    ["10-0-0-256.store.pod.cluster.local"],
    ["web.store.pod.cluster.local"],
    ["store.svc.cluster.local"],
    ["cluster.local"],
    // The reverse zones themselves, and names in them that are no one address.
    ["in-addr.arpa"],
    ["96.10.in-addr.arpa"],
    ["1.0.96.256.in-addr.arpa"],
    ["01.0.96.10.in-addr.arpa"],
    ["1.0.0.0.ip6.arpa"],
    // Not a name: empty or overlong labels would be read otherwise by the provider's DNS.
    ["db..store.svc.cluster.local"],
    [`${"a".repeat(64)}.example.com`],
    ["."],
  ])("GIVEN %s THEN it is unknown", (asked) => {
    expect(decideQuestion(asked, zone, domains)).toEqual({ kind: "unknown" });
  });

  test.each([["1.0.96.10.in-addr.arpa"], ["122.69.96.10.IN-ADDR.ARPA."], [`${"0.".repeat(31)}1.ip6.arpa`]])(
    "GIVEN the reverse name of one address, %s THEN it is asked as a reverse lookup",
    (asked) => {
      expect(decideQuestion(asked, zone, domains)).toEqual({
        kind: "reverse",
        name: asked.toLowerCase().replace(/\.$/, ""),
      });
    },
  );

  test("GIVEN a provider of another cluster domain THEN its names are unknown and the consumer's are asked in it", () => {
    const other = { consumer: "cluster.local", provider: "provider.internal" };
    expect(decideQuestion("db.store.svc.cluster.local", zone, other)).toEqual({
      kind: "ask",
      name: "db.store-b-id.svc.provider.internal",
    });
    expect(decideQuestion("api.payments.svc.provider.internal", zone, other)).toEqual({ kind: "unknown" });
  });
});

describe("the names whose address the answerer knows itself", () => {
  const reached: ConsumerZone = {
    ...zone,
    apiAddress: "10.80.0.2",
    ownNames: new Map([["10.244.1.7", "db-0.db.store.svc.cluster.local"]]),
  };

  test.each([
    // The consumer's API server, as its pods reach it here: kubernetes.default's address at home.
    ["kubernetes.default.svc.cluster.local", undefined, "10.80.0.2"],
    ["Kubernetes.Default.svc.cluster.local.", undefined, "10.80.0.2"],
    // A pod name spells its address, as `pods insecure` answers it at home.
    ["10-244-1-9.store.pod.cluster.local", undefined, "10.244.1.9"],
    // The asking pod's own name: what its /etc/hosts holds at home.
    ["db-0.db.store.svc.cluster.local", "10.244.1.7", "10.244.1.7"],
  ])("GIVEN %s asked by %s THEN the answer is %s", (asked, asker, address) => {
    expect(decideQuestion(asked, reached, domains, asker)).toEqual({ kind: "address", address });
  });

  test("GIVEN another pod's own name, or kubernetes.default before the tunnel is up THEN the answerer does not make up an address", () => {
    // Another pod asks db-0's name: the provider's DNS answers it, under a headless Service, as at home.
    expect(decideQuestion("db-0.db.store.svc.cluster.local", reached, domains, "10.244.1.8")).toEqual({
      kind: "ask",
      name: "db-0.db.store-b-id.svc.cluster.local",
    });
    expect(decideQuestion("kubernetes.default.svc.cluster.local", zone, domains)).toEqual({ kind: "unknown" });
  });

  test.each([
    ["db-0", "db", "db-0.db.store.svc.cluster.local"],
    ["db-0", undefined, undefined],
    [undefined, "db", undefined],
    ["Not_A_Label", "db", undefined],
  ])("GIVEN hostname %s and subdomain %s THEN the pod's own name is %s", (hostname, subdomain, name) => {
    expect(podOwnName(hostname, subdomain, "store", "cluster.local")).toBe(name);
  });
});

describe("the consumer's ExternalName Services", () => {
  const aliased: ConsumerZone = { ...zone, aliases: new Map([["ext.store", "db.store.svc.cluster.local"]]) };
  test("GIVEN its Service's names THEN a CNAME to its host; other names of the namespace as before", () => {
    for (const asked of ["ext.store.svc.cluster.local", "EXT.store.svc.cluster.local."])
      expect(decideQuestion(asked, aliased, domains)).toEqual({ kind: "alias", target: "db.store.svc.cluster.local" });
    expect(decideQuestion("x.ext.store.svc.cluster.local", aliased, domains)).toEqual({
      kind: "ask",
      name: "x.ext.store-b-id.svc.cluster.local",
    });
  });

  test("GIVEN one held in a namespace of another consumer's THEN it is not this consumer's", () => {
    const zones = zonesOf(
      [
        { here: "store-b", consumer: "b", consumerNamespace: "store" },
        { here: "store-c", consumer: "c", consumerNamespace: "store" },
      ],
      [
        { consumer: "b", here: "store-b", service: "ext", target: "b.example" },
        { consumer: "c", here: "store-b", service: "evil", target: "c.example" },
      ],
    );
    expect(zones.get("b")!.aliases).toEqual(new Map([["ext.store", "b.example"]]));
    expect(zones.get("c")!.aliases).toBeUndefined();
  });
});

describe("the names in an answer", () => {
  test("GIVEN names of the zone's namespaces here THEN the pod sees its own namespaces' names", () => {
    expect(nameAsSeen("db.store-b-id.svc.cluster.local.", zone, domains)).toBe("db.store.svc.cluster.local");
    expect(nameAsSeen("example.com", zone, domains)).toBe("example.com");
  });

  test("GIVEN names of other namespaces here, of another consumer's, or of the zone itself THEN none is seen", () => {
    expect(nameAsSeen("kubernetes.default.svc.cluster.local", zone, domains)).toBeUndefined();
    expect(nameAsSeen("db.store-c-id.svc.cluster.local", zone, domains)).toBeUndefined();
    expect(nameAsSeen("cluster.local", zone, domains)).toBeUndefined();
    expect(nameAsSeen("4.3.2.1.in-addr.arpa", zone, domains)).toBeUndefined();
  });
});

describe("zones", () => {
  test("GIVEN a claim that is no namespace name THEN the name here stands for it", () => {
    expect(consumerNamespaceOf("store-b-id", "store")).toBe("store");
    expect(consumerNamespaceOf("store-b-id", "Store.evil")).toBe("store-b-id");
    expect(consumerNamespaceOf("store-b-id", undefined)).toBe("store-b-id");
  });

  test("GIVEN two namespaces claiming one consumer namespace THEN the first by name wins, and consumers stay apart", () => {
    const zones = zonesOf([
      { here: "z-b", consumer: "b", consumerNamespace: "store" },
      { here: "a-b", consumer: "b", consumerNamespace: "store" },
      { here: "store-c", consumer: "c", consumerNamespace: "store" },
    ]);
    expect(zones.get("b")!.namespaces).toEqual(new Map([["store", "a-b"]]));
    expect(zones.get("c")!.namespaces).toEqual(new Map([["store", "store-c"]]));
  });

  test("GIVEN a resolv.conf THEN its nameserver and cluster domain are read, and the search list is kubelet's", () => {
    const conf =
      "search pulumi-liqo-system.svc.cluster.local svc.cluster.local cluster.local\nnameserver 10.96.0.10\noptions ndots:5\n";
    expect(nameserverOf(conf)).toBe("10.96.0.10");
    expect(clusterDomainOf(conf)).toBe("cluster.local");
    expect(clusterDomainOf("nameserver 1.1.1.1\n")).toBeUndefined();
    expect(searchesOf("store", "cluster.local")).toEqual([
      "store.svc.cluster.local",
      "svc.cluster.local",
      "cluster.local",
    ]);
  });
});
