// podtool: the one small static program inside the project's test images. The pause image runs
// `podtool pause` (the sandbox's placeholder process); the podtool image runs `podtool serve` and
// tests `kubectl exec` into it for `podtool tcp` and `podtool ping`. Standard library only, so it
// builds offline and links statically with CGO_ENABLED=0.
//
//	podtool pause                 sleeps until SIGTERM or SIGINT (says when it is ready for them)
//	podtool serve [--tcp :8080]   answers each TCP connection with "podtool <hostname> <local addr>",
//	                              and each UDP datagram to the same address with "podtool <hostname>
//	                              heard <datagram>"; and echoes every line of each connection on TCP 8081
//	podtool tcp HOST:PORT         connects, prints what it got; exit 0 on an answer, 1 otherwise
//	podtool udp HOST:PORT         sends one datagram, prints the answer; exit 0 on an answer within 3 s,
//	                              1 otherwise
//	podtool ping HOST             one ICMP echo over a raw socket, prints the rtt; exit 0 or 1
//	podtool flow HOST SECONDS     a flow in flight: an ICMP echo every 200 ms and a TCP connection to
//	                              HOST:8081 opened at once, left idle, and sent a line at the end;
//	                              prints "started" once the connection is up, then one JSON line
//	                              (see flowReport); exit 0 when it ran
//	podtool api [--server HOST:PORT] PATH [BODY]       the pod's API server, through the `kubernetes` Service, as its
//	                              ServiceAccount: GET PATH (POST BODY); prints status and body; exit 0 on 2xx
//	podtool exit CODE MESSAGE     writes MESSAGE to /dev/termination-log (the kubelet's termination
//	                              message) and exits with CODE: a Job's pod that succeeds or fails
//	podtool burn SECONDS          keeps one core busy for SECONDS (as much of it as the pod's limit
//	                              lets it have), then prints "burned" and exits 0: CPU load for metrics
//	podtool names ADDRESS         the names the pod's resolver finds for ADDRESS (a reverse lookup,
//	                              PTR), one per line; exit 0 when there is one, 1 otherwise
//	podtool heard                 answers each line of standard input with "podtool heard: LINE";
//	                              exit 0 at its end (`kubectl run -i`, `kubectl attach`)
//	podtool write PATH TEXT       writes TEXT to the file PATH (made, or replaced) and syncs it: a volume's data
//	podtool read PATH             prints the file PATH; exit 1 when it cannot be read
package main

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

const usage = "usage: podtool pause | serve [--tcp :8080] | tcp HOST:PORT | udp HOST:PORT | ping HOST | flow HOST SECONDS | api [--server HOST:PORT] PATH [BODY] | exit CODE MESSAGE | burn SECONDS | names ADDRESS | heard | write PATH TEXT | read PATH"

func main() {
	if len(os.Args) < 2 {
		fail(usage)
	}
	switch os.Args[1] {
	case "pause":
		pause()
	case "serve":
		listen := ":8080"
		if len(os.Args) == 4 && os.Args[2] == "--tcp" {
			listen = os.Args[3]
		} else if len(os.Args) != 2 {
			fail(usage)
		}
		serve(listen)
	case "tcp":
		if len(os.Args) != 3 {
			fail(usage)
		}
		tcp(os.Args[2])
	case "udp":
		if len(os.Args) != 3 {
			fail(usage)
		}
		udp(os.Args[2])
	case "ping":
		if len(os.Args) != 3 {
			fail(usage)
		}
		ping(os.Args[2])
	case "flow":
		if len(os.Args) != 4 {
			fail(usage)
		}
		seconds, err := strconv.Atoi(os.Args[3])
		if err != nil || seconds < 1 {
			fail(usage)
		}
		flow(os.Args[2], time.Duration(seconds)*time.Second)
	case "api":
		args, other := os.Args[2:], ""
		if len(args) >= 2 && args[0] == "--server" {
			args, other = args[2:], args[1]
		}
		if len(args) != 1 && len(args) != 2 {
			fail(usage)
		}
		api(other, args[0], args[1:])
	case "burn":
		if len(os.Args) != 3 {
			fail(usage)
		}
		seconds, err := strconv.Atoi(os.Args[2])
		if err != nil || seconds < 1 {
			fail(usage)
		}
		burn(time.Duration(seconds) * time.Second)
	case "names":
		if len(os.Args) != 3 {
			fail(usage)
		}
		names(os.Args[2])
	case "heard":
		if len(os.Args) != 2 {
			fail(usage)
		}
		heard()
	case "write":
		if len(os.Args) != 4 {
			fail(usage)
		}
		writeFile(os.Args[2], os.Args[3])
	case "read":
		if len(os.Args) != 3 {
			fail(usage)
		}
		readFile(os.Args[2])
	case "exit":
		if len(os.Args) != 4 {
			fail(usage)
		}
		code, err := strconv.Atoi(os.Args[2])
		if err != nil || code < 0 || code > 255 {
			fail(usage)
		}
		// Where the kubelet reads it from unless the pod says otherwise; absent outside a pod.
		_ = os.WriteFile("/dev/termination-log", []byte(os.Args[3]), 0o644)
		fmt.Println(os.Args[3])
		os.Exit(code)
	default:
		fail(usage)
	}
}

func fail(message string) {
	fmt.Fprintln(os.Stderr, message)
	os.Exit(1)
}

// pause is a sandbox's process: it holds the pod's namespaces until the runtime stops it. As PID 1
// it gets no default signal handling, so it must catch the signals itself or never end.
// heard answers each line of its standard input with "podtool heard: <line>" and ends at its end:
// what `kubectl run -i` and `kubectl attach` show went both ways.
func heard() {
	lines := bufio.NewScanner(os.Stdin)
	for lines.Scan() {
		fmt.Printf("podtool heard: %s\n", lines.Text())
	}
}

// burn spins until the time is up, reading the clock now and then: one busy core, whatever it
// computes, is what a CPU-bound workload looks like to the kubelet's metrics.
func burn(span time.Duration) {
	end := time.Now().Add(span)
	x := uint64(1)
	for time.Now().Before(end) {
		for i := 0; i < 1_000_000; i++ {
			x = x*6364136223846793005 + 1442695040888963407
		}
	}
	fmt.Printf("burned %d\n", x%10)
}

func pause() {
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT)
	// Said once the handler is set: a SIGTERM before it would kill the process outright, as the
	// Go runtime does with any signal nobody asked for.
	fmt.Println("podtool pause: waiting for SIGTERM")
	<-signals
}

func serve(listen string) {
	hostname, _ := os.Hostname()
	listener, err := net.Listen("tcp", listen)
	if err != nil {
		fail(fmt.Sprintf("podtool serve: %v", err))
	}
	fmt.Printf("podtool %s listening on %s\n", hostname, listener.Addr())
	go echo(":8081")
	go answerDatagrams(listen, hostname)
	go func() {
		signals := make(chan os.Signal, 1)
		signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT)
		<-signals
		os.Exit(0)
	}()
	for {
		conn, err := listener.Accept()
		if err != nil {
			fail(fmt.Sprintf("podtool serve: %v", err))
		}
		fmt.Printf("connection from %s\n", conn.RemoteAddr())
		fmt.Fprintf(conn, "podtool %s %s\n", hostname, conn.LocalAddr())
		conn.Close()
	}
}

func tcp(target string) {
	conn, err := net.DialTimeout("tcp", target, 5*time.Second)
	if err != nil {
		fail(fmt.Sprintf("podtool tcp %s: %v", target, err))
	}
	defer conn.Close()
	_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	line, err := bufio.NewReader(conn).ReadString('\n')
	// A server that speaks first (podtool serve) sends a line; one that waits for the client
	// (an API server's TLS) sends nothing: the connection itself is the answer.
	var timeout net.Error
	if err != nil && !(errors.As(err, &timeout) && timeout.Timeout()) && line == "" {
		fail(fmt.Sprintf("podtool tcp %s: connected, then %v", target, err))
	}
	fmt.Printf("connected to %s from %s: %q\n", target, conn.LocalAddr(), line)
}

// answerDatagrams answers every UDP datagram to `listen` with "podtool <hostname> heard <datagram>",
// sent back to its sender.
func answerDatagrams(listen string, hostname string) {
	conn, err := net.ListenPacket("udp", listen)
	if err != nil {
		fail(fmt.Sprintf("podtool serve: udp: %v", err))
	}
	buffer := make([]byte, 2048)
	for {
		n, from, err := conn.ReadFrom(buffer)
		if err != nil {
			fail(fmt.Sprintf("podtool serve: udp: %v", err))
		}
		fmt.Printf("datagram from %s\n", from)
		_, _ = conn.WriteTo([]byte(fmt.Sprintf("podtool %s heard %s\n", hostname, buffer[:n])), from)
	}
}

func udp(target string) {
	conn, err := net.Dial("udp", target)
	if err != nil {
		fail(fmt.Sprintf("podtool udp %s: %v", target, err))
	}
	defer conn.Close()
	if _, err := fmt.Fprintf(conn, "a datagram from %s", conn.LocalAddr()); err != nil {
		fail(fmt.Sprintf("podtool udp %s: %v", target, err))
	}
	_ = conn.SetReadDeadline(time.Now().Add(3 * time.Second))
	buffer := make([]byte, 2048)
	n, err := conn.Read(buffer)
	if err != nil {
		fail(fmt.Sprintf("podtool udp %s: sent, then %v", target, err))
	}
	fmt.Printf("answer from %s to %s: %q\n", target, conn.LocalAddr(), buffer[:n])
}

func checksum(b []byte) uint16 {
	var sum uint32
	for i := 0; i+1 < len(b); i += 2 {
		sum += uint32(binary.BigEndian.Uint16(b[i:]))
	}
	if len(b)%2 == 1 {
		sum += uint32(b[len(b)-1]) << 8
	}
	for sum>>16 != 0 {
		sum = sum&0xffff + sum>>16
	}
	return ^uint16(sum)
}

func ping(host string) {
	addr, err := net.ResolveIPAddr("ip4", host)
	if err != nil {
		fail(fmt.Sprintf("podtool ping %s: %v", host, err))
	}
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_RAW, syscall.IPPROTO_ICMP)
	if err != nil {
		fail(fmt.Sprintf("podtool ping %s: raw socket (needs CAP_NET_RAW): %v", host, err))
	}
	defer syscall.Close(fd)
	id := uint16(os.Getpid())
	packet := []byte{8, 0, 0, 0, byte(id >> 8), byte(id), 0, 1, 'p', 'o', 'd', 't', 'o', 'o', 'l', '!'}
	binary.BigEndian.PutUint16(packet[2:], checksum(packet))
	var to syscall.SockaddrInet4
	copy(to.Addr[:], addr.IP.To4())
	_ = syscall.SetsockoptTimeval(fd, syscall.SOL_SOCKET, syscall.SO_RCVTIMEO, &syscall.Timeval{Sec: 1})
	started := time.Now()
	if err := syscall.Sendto(fd, packet, 0, &to); err != nil {
		fail(fmt.Sprintf("podtool ping %s: %v", host, err))
	}
	buffer := make([]byte, 1500)
	for time.Since(started) < 3*time.Second {
		n, from, err := syscall.Recvfrom(fd, buffer, 0)
		if err != nil {
			continue // The receive timeout: look again until the deadline.
		}
		source, ok := from.(*syscall.SockaddrInet4)
		headerLength := int(buffer[0]&0x0f) * 4
		if !ok || source.Addr != to.Addr || n < headerLength+8 {
			continue
		}
		reply := buffer[headerLength:n]
		if reply[0] == 0 && binary.BigEndian.Uint16(reply[4:]) == id {
			fmt.Printf("reply from %s: rtt %.3f ms\n", host, float64(time.Since(started).Microseconds())/1000)
			return
		}
	}
	fail(fmt.Sprintf("podtool ping %s: no reply within 3 s", host))
}

// The files kubelet mounts into every pod of a ServiceAccount.
const serviceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount"

// api calls the pod's API server the way an in-cluster client does: at the `kubernetes` Service
// (KUBERNETES_SERVICE_HOST/PORT, which kubelet sets), trusting the cluster CA, with the token.
func api(other string, path string, body []string) {
	token, err := os.ReadFile(serviceAccountDir + "/token")
	if err != nil {
		fail(fmt.Sprintf("podtool api: no ServiceAccount token: %v", err))
	}
	ca, err := os.ReadFile(serviceAccountDir + "/ca.crt")
	if err != nil {
		fail(fmt.Sprintf("podtool api: no cluster CA: %v", err))
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(ca)
	tlsConfig := &tls.Config{RootCAs: roots}
	server := net.JoinHostPort(os.Getenv("KUBERNETES_SERVICE_HOST"), os.Getenv("KUBERNETES_SERVICE_PORT"))
	// --server: another API server than the pod's own, whose certificate the pod's CA does not
	// sign; what is asked is only whether it takes the pod's token.
	if other != "" {
		server, tlsConfig = other, &tls.Config{InsecureSkipVerify: true}
	}
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: tlsConfig}}
	url := "https://" + server + path
	method, payload := http.MethodGet, io.Reader(nil)
	if len(body) == 1 {
		method, payload = http.MethodPost, strings.NewReader(body[0])
	}
	request, err := http.NewRequest(method, url, payload)
	if err != nil {
		fail(fmt.Sprintf("podtool api: %v", err))
	}
	request.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(token)))
	request.Header.Set("Content-Type", "application/json")
	response, err := client.Do(request)
	if err != nil {
		fail(fmt.Sprintf("podtool api %s %s: %v", method, url, err))
	}
	defer response.Body.Close()
	answer, _ := io.ReadAll(response.Body)
	line := fmt.Sprintf("%s %s: HTTP %d\n%s", method, url, response.StatusCode, answer)
	if response.StatusCode/100 != 2 {
		fail(line)
	}
	fmt.Println(line)
}

// echo answers each line of each connection with the same line, for as long as the connection
// lasts: the far end of `podtool flow`'s idle connection.
func echo(listen string) {
	listener, err := net.Listen("tcp", listen)
	if err != nil {
		fail(fmt.Sprintf("podtool serve: echo: %v", err))
	}
	for {
		conn, err := listener.Accept()
		if err != nil {
			fail(fmt.Sprintf("podtool serve: echo: %v", err))
		}
		go func() {
			defer conn.Close()
			reader := bufio.NewReader(conn)
			for {
				line, err := reader.ReadString('\n')
				if err != nil {
					return
				}
				if _, err := conn.Write([]byte(line)); err != nil {
					return
				}
			}
		}()
	}
}

// flowReport is what `podtool flow` prints: times are milliseconds from the flow's start.
type flowReport struct {
	// Sent and Received count the ICMP echoes and their answers.
	Sent     int `json:"sent"`
	Received int `json:"received"`
	// LongestGapMs is the longest stretch of unanswered echoes (their count times the interval);
	// GapFromMs is when its first echo was sent, and ResumedAtMs when the echo that ended it was
	// (0 when no echo went unanswered, or none was answered after).
	LongestGapMs int64 `json:"longestGapMs"`
	GapFromMs    int64 `json:"gapFromMs"`
	ResumedAtMs  int64 `json:"resumedAtMs"`
	// AnsweredAfterGap counts the answers to echoes sent after the longest gap.
	AnsweredAfterGap int `json:"answeredAfterGap"`
	// TCP is "echoed" when the idle connection carried a line back at the end, else what failed.
	TCP string `json:"tcp"`
}

const flowInterval = 200 * time.Millisecond

func flow(host string, duration time.Duration) {
	addr, err := net.ResolveIPAddr("ip4", host)
	if err != nil {
		fail(fmt.Sprintf("podtool flow %s: %v", host, err))
	}
	conn, err := net.DialTimeout("tcp", net.JoinHostPort(host, "8081"), 5*time.Second)
	if err != nil {
		fail(fmt.Sprintf("podtool flow %s: the TCP connection: %v", host, err))
	}
	defer conn.Close()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_RAW, syscall.IPPROTO_ICMP)
	if err != nil {
		fail(fmt.Sprintf("podtool flow %s: raw socket (needs CAP_NET_RAW): %v", host, err))
	}
	defer syscall.Close(fd)
	// Whoever breaks the path waits for this line, not for a guess at how long an exec takes to start.
	fmt.Println("started")
	_ = syscall.SetsockoptTimeval(fd, syscall.SOL_SOCKET, syscall.SO_RCVTIMEO, &syscall.Timeval{Usec: 100_000})
	var to syscall.SockaddrInet4
	copy(to.Addr[:], addr.IP.To4())
	id := uint16(os.Getpid())
	count := int(duration / flowInterval)
	answered := make([]bool, count)
	var mu sync.Mutex
	done := make(chan struct{})
	go func() {
		buffer := make([]byte, 1500)
		for {
			select {
			case <-done:
				return
			default:
			}
			n, from, err := syscall.Recvfrom(fd, buffer, 0)
			if err != nil {
				continue
			}
			source, ok := from.(*syscall.SockaddrInet4)
			headerLength := int(buffer[0]&0x0f) * 4
			if !ok || source.Addr != to.Addr || n < headerLength+8 {
				continue
			}
			reply := buffer[headerLength:n]
			seq := int(binary.BigEndian.Uint16(reply[6:]))
			if reply[0] == 0 && binary.BigEndian.Uint16(reply[4:]) == id && seq < count {
				mu.Lock()
				answered[seq] = true
				mu.Unlock()
			}
		}
	}()
	started := time.Now()
	for seq := 0; seq < count; seq++ {
		time.Sleep(time.Until(started.Add(time.Duration(seq) * flowInterval)))
		packet := []byte{8, 0, 0, 0, byte(id >> 8), byte(id), byte(seq >> 8), byte(seq), 'f', 'l', 'o', 'w'}
		binary.BigEndian.PutUint16(packet[2:], checksum(packet))
		_ = syscall.Sendto(fd, packet, 0, &to)
	}
	// The last echoes' answers: a round trip is well under a second.
	time.Sleep(time.Second)
	close(done)
	report := flowReport{Sent: count, TCP: "echoed"}
	mu.Lock()
	run, runFrom := 0, 0
	for seq := 0; seq <= count; seq++ {
		if seq < count && !answered[seq] {
			if run == 0 {
				runFrom = seq
			}
			run++
			continue
		}
		if run > 0 && int64(run)*flowInterval.Milliseconds() > report.LongestGapMs {
			report.LongestGapMs = int64(run) * flowInterval.Milliseconds()
			report.GapFromMs = int64(runFrom) * flowInterval.Milliseconds()
			report.ResumedAtMs = 0
			if seq < count {
				report.ResumedAtMs = int64(seq) * flowInterval.Milliseconds()
			}
		}
		run = 0
	}
	for seq, ok := range answered {
		if ok {
			report.Received++
			if report.LongestGapMs > 0 && int64(seq)*flowInterval.Milliseconds() > report.GapFromMs {
				report.AnsweredAfterGap++
			}
		}
	}
	mu.Unlock()
	_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := conn.Write([]byte("after the move\n")); err != nil {
		report.TCP = fmt.Sprintf("write: %v", err)
	} else if line, err := bufio.NewReader(conn).ReadString('\n'); err != nil || line != "after the move\n" {
		report.TCP = fmt.Sprintf("read: %q %v", line, err)
	}
	out, _ := json.Marshal(report)
	fmt.Println(string(out))
}

// writeFile writes text to path and syncs it to its disk, so that it outlives the pod.
func writeFile(path string, text string) {
	file, err := os.Create(path)
	if err != nil {
		fail(fmt.Sprintf("podtool write %s: %v", path, err))
	}
	if _, err := file.WriteString(text); err != nil {
		fail(fmt.Sprintf("podtool write %s: %v", path, err))
	}
	if err := file.Sync(); err != nil {
		fail(fmt.Sprintf("podtool write %s: %v", path, err))
	}
	if err := file.Close(); err != nil {
		fail(fmt.Sprintf("podtool write %s: %v", path, err))
	}
	fmt.Printf("wrote %s\n", path)
}

// readFile prints the file at path.
func readFile(path string) {
	content, err := os.ReadFile(path)
	if err != nil {
		fail(fmt.Sprintf("podtool read %s: %v", path, err))
	}
	fmt.Print(string(content))
}

// names prints the names the pod's resolver (its /etc/resolv.conf) finds for address: each PTR
// record of its reverse name, as the pod's DNS answers it.
func names(address string) {
	found, err := net.LookupAddr(address)
	if err != nil {
		fail(err.Error())
	}
	for _, name := range found {
		fmt.Println(name)
	}
}
