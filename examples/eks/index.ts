import * as aws from "@pulumi/aws";
import * as eks from "@pulumi/eks";
import * as pulumi from "@pulumi/pulumi";
import { Cluster, Peering, PeeringToken } from "pulumi-liqo";

const config = new pulumi.Config();
const agentImage = config.require("agentImage");

// The cloud side: an EKS cluster in the account's default VPC, its nodes sized from config.
const vpc = aws.ec2.getVpcOutput({ default: true });
const subnets = aws.ec2.getSubnetsOutput({
  filters: [
    { name: "vpc-id", values: [vpc.id] },
    { name: "default-for-az", values: ["true"] },
  ],
});
const eksCluster = new eks.Cluster("cloud", {
  vpcId: vpc.id,
  publicSubnetIds: subnets.ids,
  instanceType: config.get("instanceType") ?? "t3.large",
  desiredCapacity: config.getNumber("desiredNodes") ?? 2,
  minSize: config.getNumber("minNodes") ?? 1,
  maxSize: config.getNumber("maxNodes") ?? 3,
  // Chosen, not left to EKS: unset, it picks 10.100.0.0/16 or 172.20.0.0/16 depending on the VPC.
  kubernetesServiceIpAddressRange: config.get("eksServiceCidr") ?? "172.20.0.0/16",
});

// The EKS cluster takes part as the consumer. Its CIDRs: the VPC CNI gives pods addresses from the
// VPC's own subnets (no overlay), so the pod CIDR to announce is the VPC's; services come from
// the range EKS reports back. Its auth service is exposed only on node ports: nobody
// authenticates to it here (EKS does not sign `kube-apiserver-client` CSRs, so it cannot issue
// the client certificates a provider gives its consumers), and a load balancer would cost for
// nothing. The agent needs nodes to run on: hence the dependency on the whole EKS component.
const cloud = new Cluster(
  "cloud",
  {
    name: "cloud",
    kubeconfig: pulumi.secret(eksCluster.kubeconfigJson),
    podCidr: vpc.cidrBlock,
    serviceCidr: eksCluster.eksCluster.apply((c) => c.kubernetesNetworkConfig.serviceIpv4Cidr),
    agent: { image: agentImage, exposure: "NodePort" },
    timeoutSeconds: 600,
  },
  { dependsOn: [eksCluster] },
);

// The on-premises cluster already exists: its kubeconfig is a secret of this stack's config. It
// is the provider, so its auth service is exposed by a LoadBalancer Service, at an address known
// in advance (the one its load balancer hands out, or a firewall forward to it).
const onPrem = new Cluster("on-prem", {
  name: "on-prem",
  kubeconfig: config.requireSecret("onPremKubeconfig"),
  podCidr: config.require("onPremPodCidr"),
  serviceCidr: config.require("onPremServiceCidr"),
  apiServerUrl: config.get("onPremApiServerUrl"),
  authService: { address: config.require("onPremAuthAddress") },
  agent: { image: agentImage, exposure: "LoadBalancer" },
});

// Out-of-band: the on-premises cluster issues a token, and the EKS cluster peers with it. The
// EKS cluster gets a virtual node `liqo-on-prem` standing for the capacity asked for.
const token = new PeeringToken("on-prem-token", { cluster: onPrem, rotation: config.get("rotation") ?? "1" });
const peering = new Peering("cloud-to-on-prem", {
  consumer: cloud,
  provider: { clusterId: token.clusterId, authUrl: token.authUrl, authCaCert: token.authCaCert, token: token.token },
  resources: {
    cpu: config.get("cpu") ?? "4",
    memory: config.get("memory") ?? "8Gi",
    pods: config.getNumber("pods") ?? 40,
  },
  timeoutSeconds: 600,
});

export const eksClusterName = eksCluster.eksCluster.name;
export const kubeconfig = pulumi.secret(eksCluster.kubeconfigJson);
export const virtualNode = peering.virtualNodeName;
export const status = peering.status;
export const offer = peering.offer;
