// Command pulumi-language-go is this project's own Pulumi language host for Go programs, and the
// generator of its SDKs: the same executable, run as pulumi-language-python or
// pulumi-language-dotnet (links toolchain.sh makes), answers `pulumi package gen-sdk --language
// python|dotnet` and runs no program.
//
// Why it exists: the upstream hosts (github.com/pulumi/pulumi/sdk/go/pulumi-language-go/v3,
// .../sdk/python/cmd/pulumi-language-python/v3) are modules the Go module proxy refuses here at
// every version (403 "This module version is not available"), while the engine needs a host to run
// `runtime: go` programs, and `pulumi package gen-sdk --language <language>` hands the generation
// to the language's host. The generators themselves are upstream's (generate.go).
//
// What it does: Run compiles the program with `go build` (or runs the prebuilt `binary` the
// project's runtime options name) and starts it with the PULUMI_* variables that
// github.com/pulumi/pulumi/sdk/v3/go/pulumi reads; GeneratePackage writes a package's SDK.
// Plugins are not reported as required (the engine runs offline here and finds installed plugins
// by itself); other RPCs answer "unimplemented".
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/pulumi/pulumi/sdk/v3/go/common/constant"
	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/emptypb"
)

// version is set at link time to the Pulumi version the host is built against.
var version = "0.0.0-dev"

func main() {
	// The engine passes flags (--logtostderr, -v=N, --tracing URL) and, last, its own address.
	var engine string
	if n := len(os.Args); n > 1 && !strings.HasPrefix(os.Args[n-1], "-") {
		engine = os.Args[n-1]
	}
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintf(os.Stderr, "pulumi-language-go: cannot listen: %v\n", err)
		os.Exit(1)
	}
	// The language is the one of the name the engine ran us by: pulumi-language-<language>.
	language := strings.TrimPrefix(filepath.Base(os.Args[0]), "pulumi-language-")
	if _, known := generators[language]; !known {
		fmt.Fprintf(os.Stderr, "pulumi-language-go: run as %s, which names no language it serves\n", os.Args[0])
		os.Exit(1)
	}
	server := grpc.NewServer(grpc.MaxRecvMsgSize(400 << 20))
	pulumirpc.RegisterLanguageRuntimeServer(server, &host{engine: engine, language: language})
	// The engine dials the port on our first line of output.
	fmt.Println(listener.Addr().(*net.TCPAddr).Port)
	go orphanWatch(os.Getppid())
	if err := server.Serve(listener); err != nil {
		fmt.Fprintf(os.Stderr, "pulumi-language-go: %v\n", err)
		os.Exit(1)
	}
}

// orphanWatch exits once the engine that started the host is gone: the program it runs is then
// stopped too (its parent-death signal), rather than changing clusters for nobody.
func orphanWatch(engine int) {
	for os.Getppid() == engine {
		time.Sleep(time.Second)
	}
	os.Exit(1)
}

type host struct {
	pulumirpc.UnimplementedLanguageRuntimeServer
	engine   string
	language string
}

func (h *host) Handshake(_ context.Context, req *pulumirpc.LanguageHandshakeRequest) (*pulumirpc.LanguageHandshakeResponse, error) {
	if req.GetEngineAddress() != "" {
		h.engine = req.GetEngineAddress()
	}
	return &pulumirpc.LanguageHandshakeResponse{}, nil
}

func (h *host) GetPluginInfo(context.Context, *emptypb.Empty) (*pulumirpc.PluginInfo, error) {
	return &pulumirpc.PluginInfo{Version: version}, nil
}

// GetRequiredPlugins and GetRequiredPackages name nothing: plugin acquisition is off here, and
// the engine starts an installed provider plugin when the program registers its first resource.
func (h *host) GetRequiredPlugins(context.Context, *pulumirpc.GetRequiredPluginsRequest) (*pulumirpc.GetRequiredPluginsResponse, error) {
	return &pulumirpc.GetRequiredPluginsResponse{}, nil
}

func (h *host) GetRequiredPackages(context.Context, *pulumirpc.GetRequiredPackagesRequest) (*pulumirpc.GetRequiredPackagesResponse, error) {
	return &pulumirpc.GetRequiredPackagesResponse{}, nil
}

// InstallDependencies has nothing to do: `go build` fetches the modules go.mod names when it needs them.
func (h *host) InstallDependencies(_ *pulumirpc.InstallDependenciesRequest, stream grpc.ServerStreamingServer[pulumirpc.InstallDependenciesResponse]) error {
	return stream.Send(&pulumirpc.InstallDependenciesResponse{Stdout: []byte("pulumi-language-go: go build fetches the modules itself\n")})
}

func (h *host) About(ctx context.Context, _ *pulumirpc.AboutRequest) (*pulumirpc.AboutResponse, error) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		return nil, err
	}
	out, err := exec.CommandContext(ctx, goTool, "env", "GOVERSION").Output()
	if err != nil {
		return nil, fmt.Errorf("%s env GOVERSION: %w", goTool, err)
	}
	return &pulumirpc.AboutResponse{Executable: goTool, Version: strings.TrimPrefix(strings.TrimSpace(string(out)), "go")}, nil
}

// Run builds the program (unless the runtime option `binary` names one already built) and runs
// it. A failure of the build or of the program is an answer, not an RPC error, as the engine expects.
func (h *host) Run(ctx context.Context, req *pulumirpc.RunRequest) (*pulumirpc.RunResponse, error) {
	if h.language != "go" {
		return &pulumirpc.RunResponse{Error: fmt.Sprintf("pulumi-language-%s here only generates SDKs (pulumi package gen-sdk): "+
			"it runs no program (this project's docs/plugin.md says why)", h.language)}, nil
	}
	dir, root, options := req.GetPwd(), req.GetPwd(), map[string]any{}
	if info := req.GetInfo(); info != nil {
		dir, root, options = info.GetProgramDirectory(), info.GetRootDirectory(), info.GetOptions().AsMap()
	}
	program, _ := options["binary"].(string)
	if program == "" {
		built, err := os.MkdirTemp("", "pulumi-go-program-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(built)
		program = filepath.Join(built, "program")
		// The build's own output (compile errors) goes to the engine, which shows it to the user.
		build := exec.CommandContext(ctx, "go", "build", "-o", program, ".")
		build.Dir, build.Stdout, build.Stderr = dir, os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			return &pulumirpc.RunResponse{Error: fmt.Sprintf("go build of the program in %s failed: %v", dir, err)}, nil
		}
	} else if !filepath.IsAbs(program) {
		program = filepath.Join(dir, program)
	}

	config, err := json.Marshal(nonNil(req.GetConfig()))
	if err != nil {
		return nil, err
	}
	secretKeys, err := json.Marshal(append([]string{}, req.GetConfigSecretKeys()...))
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, program, req.GetArgs()...)
	cmd.Dir, cmd.Stdout, cmd.Stderr = req.GetPwd(), os.Stdout, os.Stderr
	// Later entries win over the inherited ones of the same name.
	cmd.Env = append(os.Environ(),
		"PULUMI_MONITOR="+req.GetMonitorAddress(),
		"PULUMI_ENGINE="+h.engine,
		"PULUMI_PROJECT="+req.GetProject(),
		"PULUMI_STACK="+req.GetStack(),
		"PULUMI_ORGANIZATION="+req.GetOrganization(),
		"PULUMI_ROOT_DIRECTORY="+root,
		"PULUMI_CONFIG="+string(config),
		"PULUMI_CONFIG_SECRET_KEYS="+string(secretKeys),
		"PULUMI_DRY_RUN="+strconv.FormatBool(req.GetDryRun()),
		"PULUMI_PARALLEL="+strconv.Itoa(int(req.GetParallel())),
	)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	// An abandoned call interrupts the program first, so that its operations can say where they stopped.
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 10 * time.Second
	var exit *exec.ExitError
	switch err := cmd.Run(); {
	case err == nil:
		return &pulumirpc.RunResponse{}, nil
	case errors.As(err, &exit) && exit.ExitCode() == constant.ExitStatusLoggedError:
		// An error the program has already shown the user: the engine adds nothing.
		return &pulumirpc.RunResponse{Bail: true}, nil
	default:
		return &pulumirpc.RunResponse{Error: fmt.Sprintf("the program %s: %v", program, err)}, nil
	}
}

func nonNil(config map[string]string) map[string]string {
	if config == nil {
		return map[string]string{}
	}
	return config
}
