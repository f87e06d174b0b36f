// Our own Node.js language host; see main.go for why it exists.
module pulumi-liqo.local/toolchain/pulumi-language-nodejs

go 1.25.11

require (
	github.com/pulumi/pulumi/sdk/v3 v3.259.0
	google.golang.org/grpc v1.82.1
	google.golang.org/protobuf v1.36.11
)

require (
	golang.org/x/net v0.57.0 // indirect
	golang.org/x/sys v0.47.0 // indirect
	golang.org/x/text v0.40.0 // indirect
	google.golang.org/genproto/googleapis/rpc v0.0.0-20260414002931-afd174a4e478 // indirect
)
