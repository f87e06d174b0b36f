// coredns: the local clusters' DNS server, CoreDNS at the version kubeadm pins, with just the
// plugins kubeadm's Corefile uses (prometheus aside), and hosts, which the Corefile of upstream's
// conformance DNS test uses (the image npm run conformance makes runs it as /coredns): the full build
// links every cloud provider's SDK, which these clusters never call. The directives keep CoreDNS's
// own order (plugin.cfg).
package main

import (
	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/coremain"

	_ "github.com/coredns/coredns/plugin/cache"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/forward"
	_ "github.com/coredns/coredns/plugin/health"
	_ "github.com/coredns/coredns/plugin/hosts"
	_ "github.com/coredns/coredns/plugin/kubernetes"
	_ "github.com/coredns/coredns/plugin/loadbalance"
	_ "github.com/coredns/coredns/plugin/log"
	_ "github.com/coredns/coredns/plugin/loop"
	_ "github.com/coredns/coredns/plugin/ready"
	_ "github.com/coredns/coredns/plugin/reload"
)

func init() {
	dnsserver.Directives = []string{
		"reload", "ready", "health", "errors", "log", "loadbalance", "cache", "hosts", "kubernetes", "loop", "forward",
	}
}

func main() {
	coremain.Run()
}
