// Command pulumi-language-nodejs is this project's own, minimal Pulumi
// language host for Node.js programs.
//
// Why it exists: the Pulumi CLI is built here from source fetched through the
// Go module proxy (see scripts/toolchain/pulumi.sh), but the upstream language
// host module (github.com/pulumi/pulumi/sdk/nodejs/cmd/pulumi-language-nodejs/v3)
// is not obtainable from that proxy at any version. Without a language host the
// engine cannot run `runtime: nodejs` programs, so we provide one.
//
// Scope: only what this project's programs need. The engine starts us, reads
// the port we print on stdout, and calls Run; we then start
// `node <@pulumi/pulumi>/cmd/run ...`, the program launcher that ships in the
// @pulumi/pulumi npm package, which connects back to the engine's resource
// monitor. Our programs use dynamic providers only, so no provider plugins are
// reported as required. Code generation, packing, policy and plugin hosting
// RPCs are left unimplemented.
//
// It depends only on github.com/pulumi/pulumi/sdk/v3 (the gRPC service
// definitions), pinned to the same version as the CLI.
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
	"sync"
	"syscall"
	"time"

	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/emptypb"
)

// version is stamped at build time (-ldflags "-X main.version=...") with the
// Pulumi version this host is built against.
var version = "0.0.0-dev"

// exitAlreadyReported is the exit code @pulumi/pulumi's cmd/run uses when it
// has already shown the user an actionable error; the engine must then stop
// without printing anything more (RunResponse.Bail).
const exitAlreadyReported = 32

// runScript is the launcher inside the @pulumi/pulumi npm package.
var runScript = filepath.Join("node_modules", "@pulumi", "pulumi", "cmd", "run")

// rpcLogEnv names an optional file to which every RPC method the engine calls
// is appended, one per line. For debugging only; unset by default.
const rpcLogEnv = "PULUMI_LIQO_LANGHOST_RPC_LOG"

func main() {
	engineAddress, tracing := parseArgs(os.Args[1:])

	// Let the kernel pick a free loopback port.
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fatalf("could not listen: %v", err)
	}

	srv := grpc.NewServer(
		grpc.MaxRecvMsgSize(400*1024*1024),
		grpc.UnaryInterceptor(logUnary),
		grpc.StreamInterceptor(logStream),
	)
	pulumirpc.RegisterLanguageRuntimeServer(srv, &host{engineAddress: engineAddress, tracing: tracing})

	// The engine reads the first line of our stdout as the port to dial.
	fmt.Printf("%d\n", lis.Addr().(*net.TCPAddr).Port)

	go exitWhenEngineGoes(os.Getppid(), time.Second)

	if err := srv.Serve(lis); err != nil {
		fatalf("language host stopped serving: %v", err)
	}
}

// parseArgs accepts the command line the engine uses for language plugins:
// optional logging/tracing flags (--logtostderr, -v=N, --tracing URL) followed
// by the engine's gRPC address as the last positional argument. Unknown flags
// are ignored rather than fatal, so newer engines passing extra flags still work.
func parseArgs(args []string) (engineAddress, tracing string) {
	var positional []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") {
			positional = append(positional, a)
			continue
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		switch name {
		case "tracing":
			if !hasValue && i+1 < len(args) {
				i++
				value = args[i]
			}
			tracing = value
		}
	}
	if len(positional) > 0 {
		engineAddress = positional[len(positional)-1]
	}
	return engineAddress, tracing
}

// exitWhenEngineGoes ends this host, and the program it runs, once the engine
// that started it is gone (killed, say): nothing would read their results, and
// the program would otherwise go on changing clusters for nobody. The engine is
// the parent; its death shows as this process being given another parent.
func exitWhenEngineGoes(engine int, every time.Duration) {
	for range time.Tick(every) {
		if os.Getppid() == engine {
			continue
		}
		fmt.Fprintf(os.Stderr, "pulumi-language-nodejs: the engine (pid %d) is gone; stopping the program\n", engine)
		programs.stopAll(5 * time.Second)
		os.Exit(1)
	}
}

// programs are the Node processes this host runs, so that they end with it.
var programs = &running{procs: map[*os.Process]struct{}{}}

type running struct {
	mu    sync.Mutex
	procs map[*os.Process]struct{}
}

func (r *running) add(p *os.Process) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.procs[p] = struct{}{}
}

func (r *running) remove(p *os.Process) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.procs, p)
}

// stopAll interrupts every program, as the engine's cancellation would, and
// kills those still running after grace.
func (r *running) stopAll(grace time.Duration) {
	r.mu.Lock()
	procs := make([]*os.Process, 0, len(r.procs))
	for p := range r.procs {
		procs = append(procs, p)
	}
	r.mu.Unlock()
	for _, p := range procs {
		_ = p.Signal(os.Interrupt)
	}
	deadline := time.Now().Add(grace)
	for _, p := range procs {
		for time.Now().Before(deadline) && p.Signal(syscall.Signal(0)) == nil {
			time.Sleep(100 * time.Millisecond)
		}
		_ = p.Kill()
	}
}

func fatalf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "pulumi-language-nodejs: "+format+"\n", args...)
	os.Exit(1)
}

type host struct {
	pulumirpc.UnimplementedLanguageRuntimeServer

	engineAddress string
	tracing       string
}

func (h *host) Handshake(ctx context.Context,
	req *pulumirpc.LanguageHandshakeRequest,
) (*pulumirpc.LanguageHandshakeResponse, error) {
	if req.GetEngineAddress() != "" {
		h.engineAddress = req.GetEngineAddress()
	}
	return &pulumirpc.LanguageHandshakeResponse{}, nil
}

func (h *host) GetPluginInfo(context.Context, *emptypb.Empty) (*pulumirpc.PluginInfo, error) {
	return &pulumirpc.PluginInfo{Version: version}, nil
}

// GetRequiredPlugins and GetRequiredPackages report nothing: this project's
// programs only use dynamic providers (served by pulumi-resource-pulumi-nodejs,
// which the engine finds by itself), and plugin acquisition is disabled offline.
func (h *host) GetRequiredPlugins(context.Context,
	*pulumirpc.GetRequiredPluginsRequest,
) (*pulumirpc.GetRequiredPluginsResponse, error) {
	return &pulumirpc.GetRequiredPluginsResponse{}, nil
}

func (h *host) GetRequiredPackages(context.Context,
	*pulumirpc.GetRequiredPackagesRequest,
) (*pulumirpc.GetRequiredPackagesResponse, error) {
	return &pulumirpc.GetRequiredPackagesResponse{}, nil
}

// InstallDependencies is a no-op: the project installs node_modules itself
// (npm ci) before any pulumi command runs.
func (h *host) InstallDependencies(req *pulumirpc.InstallDependenciesRequest,
	stream grpc.ServerStreamingServer[pulumirpc.InstallDependenciesResponse],
) error {
	return stream.Send(&pulumirpc.InstallDependenciesResponse{
		Stdout: []byte("pulumi-language-nodejs: dependencies are installed by the project (npm ci); nothing to do\n"),
	})
}

func (h *host) About(ctx context.Context, req *pulumirpc.AboutRequest) (*pulumirpc.AboutResponse, error) {
	node, err := exec.LookPath("node")
	if err != nil {
		return nil, status.Error(codes.FailedPrecondition, errNoNode.Error())
	}
	out, err := exec.CommandContext(ctx, node, "--version").Output()
	if err != nil {
		return nil, status.Errorf(codes.Internal, "running %s --version: %v", node, err)
	}
	return &pulumirpc.AboutResponse{
		Executable: node,
		Version:    strings.TrimPrefix(strings.TrimSpace(string(out)), "v"),
	}, nil
}

var errNoNode = errors.New("could not find `node` on $PATH; put the project's Node.js first on PATH " +
	"(see scripts/toolchain) and try again")

// Run launches the program and waits for it. Program errors are returned in
// RunResponse (not as gRPC errors), as the engine expects.
func (h *host) Run(ctx context.Context, req *pulumirpc.RunRequest) (*pulumirpc.RunResponse, error) {
	node, err := exec.LookPath("node")
	if err != nil {
		return &pulumirpc.RunResponse{Error: errNoNode.Error()}, nil
	}

	programDir, entryPoint, rootDir := req.GetPwd(), req.GetProgram(), req.GetPwd()
	var options map[string]any
	if info := req.GetInfo(); info != nil {
		programDir, entryPoint, rootDir = info.GetProgramDirectory(), info.GetEntryPoint(), info.GetRootDirectory()
		options = info.GetOptions().AsMap()
	}
	if entryPoint == "" {
		entryPoint = "."
	}
	program := entryPoint
	if !filepath.IsAbs(program) && programDir != "" {
		program = filepath.Join(programDir, entryPoint)
	}

	launcher, err := findRunScript(programDir)
	if err != nil {
		return &pulumirpc.RunResponse{Error: err.Error()}, nil
	}

	env, err := runEnv(req, options)
	if err != nil {
		return nil, err
	}

	var args []string
	if nodeArgs, ok := options["nodeargs"].(string); ok {
		args = append(args, strings.Fields(nodeArgs)...)
	}
	args = append(args, launcher)
	flag := func(name, value string) {
		if value != "" {
			args = append(args, "--"+name+"="+value)
		}
	}
	flag("monitor", req.GetMonitorAddress())
	flag("engine", h.engineAddress)
	flag("project", req.GetProject())
	flag("stack", req.GetStack())
	flag("pwd", req.GetPwd())
	flag("organization", req.GetOrganization())
	flag("root-directory", rootDir)
	if req.GetDryRun() {
		args = append(args, "--dry-run")
	}
	if req.GetParallel() > 0 {
		flag("parallel", strconv.Itoa(int(req.GetParallel())))
	}
	flag("tracing", h.tracing)
	args = append(args, program)
	args = append(args, req.GetArgs()...)

	cmd := exec.CommandContext(ctx, node, args...)
	cmd.Dir = req.GetPwd()
	cmd.Env = env
	// Stream the program's output through: the engine turns our stdout and
	// stderr into diagnostics shown to the user.
	cmd.Stdout = os.Stdout
	cmd.Stderr = os.Stderr
	// If the engine abandons the call, interrupt node first, then kill it.
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 10 * time.Second

	if err = cmd.Start(); err == nil {
		programs.add(cmd.Process)
		err = cmd.Wait()
		programs.remove(cmd.Process)
	}
	var exitErr *exec.ExitError
	switch {
	case err == nil:
		return &pulumirpc.RunResponse{}, nil
	case errors.As(err, &exitErr):
		if ws, ok := exitErr.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return &pulumirpc.RunResponse{Error: fmt.Sprintf("program was terminated by signal %v", ws.Signal())}, nil
		}
		if exitErr.ExitCode() == exitAlreadyReported {
			return &pulumirpc.RunResponse{Bail: true}, nil
		}
		return &pulumirpc.RunResponse{
			Error: fmt.Sprintf("program exited with non-zero exit code: %d", exitErr.ExitCode()),
		}, nil
	default:
		return &pulumirpc.RunResponse{Error: fmt.Sprintf("could not run %s: %v", node, err)}, nil
	}
}

// findRunScript looks for node_modules/@pulumi/pulumi/cmd/run in the program
// directory and its parents, as Node's own module resolution would (this also
// covers npm workspaces, where node_modules is hoisted to the repository root).
func findRunScript(programDir string) (string, error) {
	dir, err := filepath.Abs(programDir)
	if err != nil {
		return "", err
	}
	for {
		candidate := filepath.Join(dir, runScript)
		if st, err := os.Stat(candidate); err == nil && st.IsDir() {
			return candidate, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("could not find %s in %s or any parent directory; "+
				"has `npm install` been run for this program?", runScript, programDir)
		}
		dir = parent
	}
}

// runEnv is our environment plus what @pulumi/pulumi reads at startup:
// configuration (PULUMI_CONFIG, a JSON object of "<ns>:<key>" -> value),
// secret config keys (PULUMI_CONFIG_SECRET_KEYS, a JSON array), and the
// TypeScript switches driven by Pulumi.yaml's runtime options
// (typescript: default true, which makes cmd/run load its bundled ts-node;
// tsconfig: alternative tsconfig path).
func runEnv(req *pulumirpc.RunRequest, options map[string]any) ([]string, error) {
	config := req.GetConfig()
	if config == nil {
		config = map[string]string{}
	}
	configJSON, err := json.Marshal(config)
	if err != nil {
		return nil, status.Errorf(codes.Internal, "serializing config: %v", err)
	}
	secretKeys := req.GetConfigSecretKeys()
	if secretKeys == nil {
		secretKeys = []string{}
	}
	secretKeysJSON, err := json.Marshal(secretKeys)
	if err != nil {
		return nil, status.Errorf(codes.Internal, "serializing secret config keys: %v", err)
	}

	typescript := true
	if v, ok := options["typescript"].(bool); ok {
		typescript = v
	}

	// Appended last, so these win over anything inherited (exec keeps the last duplicate).
	env := append(os.Environ(),
		"PULUMI_CONFIG="+string(configJSON),
		"PULUMI_CONFIG_SECRET_KEYS="+string(secretKeysJSON),
		"PULUMI_NODEJS_TYPESCRIPT="+strconv.FormatBool(typescript),
	)
	if ts, ok := options["tsconfig"].(string); ok && ts != "" {
		env = append(env, "PULUMI_NODEJS_TSCONFIG_PATH="+ts)
	}
	return env, nil
}

var rpcLogMu sync.Mutex

func logRPC(method string) {
	path := os.Getenv(rpcLogEnv)
	if path == "" {
		return
	}
	rpcLogMu.Lock()
	defer rpcLogMu.Unlock()
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return
	}
	defer f.Close()
	fmt.Fprintln(f, method)
}

func logUnary(ctx context.Context, req any, info *grpc.UnaryServerInfo,
	handler grpc.UnaryHandler,
) (any, error) {
	logRPC(info.FullMethod)
	return handler(ctx, req)
}

func logStream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	logRPC(info.FullMethod)
	return handler(srv, ss)
}
