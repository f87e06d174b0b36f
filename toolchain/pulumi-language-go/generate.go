package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	gogen "github.com/pulumi/pulumi/pkg/v3/codegen/go"
	pygen "github.com/pulumi/pulumi/pkg/v3/codegen/python"
	"github.com/pulumi/pulumi/pkg/v3/codegen/schema"
	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
)

// generator writes the files of a bound package's SDK, by their paths in the request's directory.
type generator func(pkg *schema.Package, req *pulumirpc.GeneratePackageRequest, loader schema.ReferenceLoader) (map[string][]byte, error)

// generators holds each language's generator, called as its upstream host calls it: pkg/v3's
// codegen/go and codegen/python at the CLI's version.
var generators = map[string]generator{
	"go": func(pkg *schema.Package, req *pulumirpc.GeneratePackageRequest, _ schema.ReferenceLoader) (map[string][]byte, error) {
		files, err := gogen.GeneratePackage("pulumi-language-go", pkg, req.GetLocalDependencies())
		if err != nil {
			return nil, err
		}
		for name, content := range req.GetExtraFiles() {
			files[name] = content
		}
		return files, nil
	},
	"python": func(pkg *schema.Package, req *pulumirpc.GeneratePackageRequest, loader schema.ReferenceLoader) (map[string][]byte, error) {
		return pygen.GeneratePackage("pulumi-language-python", pkg, req.GetExtraFiles(), loader)
	},
}

// GeneratePackage writes the SDK of the request's schema in the host's language into the request's
// directory: what `pulumi package gen-sdk --language <language>` asks for.
func (h *host) GeneratePackage(_ context.Context, req *pulumirpc.GeneratePackageRequest) (*pulumirpc.GeneratePackageResponse, error) {
	var spec schema.PackageSpec
	if err := json.Unmarshal([]byte(req.GetSchema()), &spec); err != nil {
		return nil, fmt.Errorf("the schema is not a package schema: %w", err)
	}
	client, err := schema.NewLoaderClient(req.GetLoaderTarget())
	if err != nil {
		return nil, err
	}
	defer client.Close()
	loader := schema.NewCachedLoader(client)
	pkg, diags, err := schema.BindSpec(spec, loader, schema.ValidationOptions{})
	if err != nil {
		return nil, err
	}
	if diags.HasErrors() {
		return nil, fmt.Errorf("binding the schema: %w", diags)
	}
	files, err := generators[h.language](pkg, req, loader)
	if err != nil {
		return nil, err
	}
	for name, content := range files {
		path := filepath.Join(req.GetDirectory(), name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(path, content, 0o644); err != nil {
			return nil, err
		}
	}
	return &pulumirpc.GeneratePackageResponse{}, nil
}
