// Command etcd is the upstream etcd server, built from the Go module proxy at the version that
// scripts/versions.sh pins. Debian's etcd (3.4) is too old for Kubernetes 1.36.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
