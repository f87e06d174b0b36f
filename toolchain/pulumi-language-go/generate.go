package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	dotnetgen "github.com/pulumi/pulumi-dotnet/pulumi-language-dotnet/v3/codegen"
	gogen "github.com/pulumi/pulumi/pkg/v3/codegen/go"
	pygen "github.com/pulumi/pulumi/pkg/v3/codegen/python"
	"github.com/pulumi/pulumi/pkg/v3/codegen/schema"
	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
)

// generator writes the files of a bound package's SDK, by their paths in the request's directory.
type generator func(pkg *schema.Package, req *pulumirpc.GeneratePackageRequest, loader schema.ReferenceLoader) (map[string][]byte, error)

// generators holds each language's generator, called as its upstream host calls it: pkg/v3's
// codegen/go and codegen/python at the CLI's version, and for .NET (which pkg/v3 3.259.0 no longer
// has) pulumi-dotnet v3.112.1's codegen, a module dependency like the others.
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
	"dotnet": func(pkg *schema.Package, req *pulumirpc.GeneratePackageRequest, _ schema.ReferenceLoader) (map[string][]byte, error) {
		// The generator downloads the package's logo (the schema's logoUrl) with http.Get, which
		// goes through http.DefaultTransport: the host answers it from the checkout (projectFiles).
		http.DefaultTransport = projectFiles{}
		return dotnetgen.GeneratePackage("pulumi-language-dotnet", pkg, req.GetExtraFiles(), req.GetLocalDependencies())
	},
}

// projectURL is where the project's repository publishes its files; the schema's logoUrl is the
// logo's address there.
const projectURL = "https://raw.githubusercontent.com/pulumi-liqo/pulumi-liqo/main/"

// projectFiles answers a GET of a file under projectURL with that file of the checkout (the host's
// working directory: the CLI's, the repository's root where scripts/sdk.sh runs it), and refuses
// every other request: generating an SDK needs no network, and the published address may not be
// reachable (raw.githubusercontent.com is not, here) nor hold the checkout's version of the file.
type projectFiles struct{}

func (projectFiles) RoundTrip(req *http.Request) (*http.Response, error) {
	url := req.URL.String()
	name, ok := strings.CutPrefix(url, projectURL)
	if !ok || req.Method != http.MethodGet || name == "" || strings.Contains(name, "..") {
		return nil, fmt.Errorf("pulumi-language-dotnet downloads nothing: %s is not a file of the project's repository (%s...), "+
			"which it reads from the checkout instead", url, projectURL)
	}
	content, err := os.Open(filepath.FromSlash(name))
	if err != nil {
		return nil, fmt.Errorf("%s is read from the checkout, the host's working directory: %w", url, err)
	}
	return &http.Response{Status: "200 OK", StatusCode: http.StatusOK, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: http.Header{}, Body: content, ContentLength: -1, Request: req}, nil
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
