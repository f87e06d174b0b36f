// go-peering: examples/local-peering in Go, through the provider plugin and the Go SDK generated
// from schema.json (sdk/go). Cluster b borrows from cluster a out-of-band, with a WireGuard tunnel,
// and offloads a namespace. Where the TypeScript resources take a Cluster or a Peering, these take
// its Access output.
package main

import (
	"fmt"
	"os"

	"github.com/pulumi-liqo/pulumi-liqo/sdk/go/liqo"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi/config"
)

func main() {
	pulumi.Run(func(ctx *pulumi.Context) error {
		cfg := config.New(ctx, "")
		cluster := func(name string) (*liqo.Cluster, error) {
			kubeconfig, err := os.ReadFile(cfg.Require(name + "Kubeconfig"))
			if err != nil {
				return nil, fmt.Errorf("cluster %s: %w", name, err)
			}
			args := &liqo.ClusterArgs{
				Name:       pulumi.String(name),
				Kubeconfig: pulumi.String(string(kubeconfig)), // made secret by the SDK
			}
			// Without CIDRs, the Cluster reads the ranges its cluster declares.
			if cidr := cfg.Get(name + "PodCidr"); cidr != "" {
				args.PodCidr = pulumi.String(cidr)
			}
			if cidr := cfg.Get(name + "ServiceCidr"); cidr != "" {
				args.ServiceCidr = pulumi.String(cidr)
			}
			// The agent image the clusters' nodes hold (`npm run clusters -- agent-image`), deployed at
			// the default exposure (LoadBalancer, whose addresses the Cluster reads back); without it,
			// the lab's own agents serve.
			if image := cfg.Get("agentImage"); image != "" {
				args.Agent = liqo.AgentArgs{Image: pulumi.String(image)}
			}
			return liqo.NewCluster(ctx, name, args)
		}
		a, err := cluster("a") // the provider
		if err != nil {
			return err
		}
		b, err := cluster("b") // the consumer
		if err != nil {
			return err
		}

		// On the provider: the token b peers with; its outputs are all b needs.
		token, err := liqo.NewPeeringToken(ctx, "a-token", &liqo.PeeringTokenArgs{
			Cluster:  a.Access.Elem(),
			Rotation: pulumi.String("1"),
		})
		if err != nil {
			return err
		}
		cpu := cfg.Get("cpu")
		if cpu == "" {
			cpu = "2"
		}
		peering, err := liqo.NewPeering(ctx, "b-to-a", &liqo.PeeringArgs{
			Consumer: b.Access.Elem(),
			Provider: liqo.ProviderHandoverArgs{
				ClusterId:  token.ClusterId,
				AuthUrl:    token.AuthUrl,
				AuthCaCert: token.AuthCaCert,
				Token:      token.Token,
			},
			Resources:      liqo.ResourceRequestArgs{Cpu: pulumi.String(cpu), Memory: pulumi.String("4Gi"), Pods: pulumi.Int(20)},
			TimeoutSeconds: pulumi.Int(120),
		})
		if err != nil {
			return err
		}

		// The network fabric: WireGuard between the gateways, a's serving; b's dials where a's Cluster
		// says its gateway is reached (its gatewayEndpoint), once b's side has checked that address.
		tunnel, err := liqo.NewTunnel(ctx, "b-to-a-tunnel", &liqo.TunnelArgs{
			Peering:        peering.Access.Elem(),
			Port:           pulumi.Int(51820),
			TimeoutSeconds: pulumi.Int(120),
		})
		if err != nil {
			return err
		}

		// Pods of this namespace of b (it must exist) may run on a, in a namespace made for b there.
		namespace := cfg.Get("offloadNamespace")
		if namespace == "" {
			namespace = "shop"
		}
		offloading, err := liqo.NewNamespaceOffloading(ctx, "b-offloads", &liqo.NamespaceOffloadingArgs{
			Consumer:  b.Access.Elem(),
			Namespace: pulumi.String(namespace),
			Peerings:  liqo.PeeringAccessArray{peering.Access.Elem()},
		})
		if err != nil {
			return err
		}

		ctx.Export("virtualNode", peering.VirtualNodeName)
		ctx.Export("peeringStatus", peering.Status)
		ctx.Export("tunnelStatus", tunnel.Status)
		ctx.Export("offloadedAs", offloading.RemoteNamespace)
		// A secret output: stored only as ciphertext.
		ctx.Export("peeringToken", token.Token)
		return nil
	})
}
