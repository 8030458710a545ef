// Command server is the avatar redirector over HTTP/3 on quic-go's http3, beside net/http over TLS
// on TCP (HTTP/1.1 and h2), one port number for both: every request gets a
// 302 to one of N fox avatars picked at random.
//
// Usage: server PORT N CERT KEY [TEMPLATE]
package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/quic-go/quic-go/http3"
)

const usage = "usage: server PORT N CERT KEY [TEMPLATE]"

// fail prints one line saying what was wrong and exits 2 (a usage or setup error).
func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "go-quic: "+format+"\n", args...)
	os.Exit(2)
}

// listen binds TCP and UDP on 127.0.0.1 with the same port number. With port 0,
// the kernel picks the TCP port and UDP takes the same number; if that number
// is taken on UDP, another is tried.
func listen(port uint16) (net.Listener, *net.UDPConn, error) {
	tries := 1
	if port == 0 {
		tries = 20
	}
	var err error
	for range tries {
		var ln net.Listener
		ln, err = net.Listen("tcp4", net.JoinHostPort("127.0.0.1", strconv.Itoa(int(port))))
		if err != nil {
			return nil, nil, err
		}
		addr := ln.Addr().(*net.TCPAddr)
		var udp *net.UDPConn
		udp, err = net.ListenUDP("udp4", &net.UDPAddr{IP: addr.IP, Port: addr.Port})
		if err == nil {
			return ln, udp, nil
		}
		ln.Close()
	}
	return nil, nil, err
}

func main() {
	if len(os.Args) < 5 || len(os.Args) > 6 {
		fail("%s", usage)
	}
	port, err := strconv.ParseUint(os.Args[1], 10, 16)
	if err != nil {
		fail("bad PORT %q: want 0..65535 (%s)", os.Args[1], usage)
	}
	n, err := strconv.Atoi(os.Args[2])
	if err != nil || n < 1 || n > 65535 {
		fail("bad N %q: want 1..65535 (%s)", os.Args[2], usage)
	}
	cert, err := tls.LoadX509KeyPair(os.Args[3], os.Args[4])
	if err != nil {
		fail("cannot load the certificate %s and key %s: %v", os.Args[3], os.Args[4], err)
	}
	template := "https://avatar.example/Renard-{n}.png"
	if len(os.Args) == 6 {
		template = os.Args[5]
	}
	// Every Location, made once rather than formatted per request.
	locations := make([]string, n)
	for i := range locations {
		locations[i] = strings.ReplaceAll(template, "{n}", strconv.Itoa(i+1))
	}

	// Not http.Redirect: for a GET it adds Content-Type and a small HTML body. A
	// handler that writes no body gets Content-Length: 0 from net/http and from
	// http3 alike.
	redirect := func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Location", locations[rand.IntN(n)])
		w.WriteHeader(http.StatusFound)
	}

	// Caught before the ports open, so a SIGTERM right after startup is graceful too.
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	ln, udp, err := listen(uint16(port))
	if err != nil {
		fail("cannot listen on 127.0.0.1:%d (TCP and UDP): %v: is another server on that port?", port, err)
	}

	// One certificate for both. net/http clones the config and adds ALPN h2 and
	// http/1.1; http3 hands QUIC a clone with ALPN h3.
	tlsConf := &tls.Config{Certificates: []tls.Certificate{cert}}
	// quic-go's defaults throughout (QUICConfig nil): 100 streams per
	// connection, 0-RTT allowed, GSO and ECN where the kernel has them.
	h3 := &http3.Server{Handler: http.HandlerFunc(redirect), TLSConfig: tlsConf}
	// As http3.ListenAndServeTLS does (SetQUICHeaders), the TCP side advertises
	// h3 on the same port; made once, so the first responses carry it too, before
	// the h3 goroutine has registered its listener.
	altSvc := []string{fmt.Sprintf(`h3=":%d"; ma=2592000`, ln.Addr().(*net.TCPAddr).Port)}
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header()["Alt-Svc"] = altSvc
			redirect(w, r)
		}),
		ReadHeaderTimeout: 10 * time.Second, // against slowloris; a benchmark never hits it
		TLSConfig:         tlsConf,
	}
	go func() {
		if err := h3.Serve(udp); !errors.Is(err, http.ErrServerClosed) {
			fmt.Fprintf(os.Stderr, "go-quic: serving h3: %v\n", err)
			os.Exit(1)
		}
	}()
	go func() {
		if err := srv.ServeTLS(ln, "", ""); !errors.Is(err, http.ErrServerClosed) {
			fmt.Fprintf(os.Stderr, "go-quic: serving TCP: %v\n", err)
			os.Exit(1)
		}
	}()
	fmt.Fprintln(os.Stderr, "listening on", ln.Addr(), "(TCP: HTTP/1.1 and h2 over TLS; UDP: h3)")

	// SIGTERM: both stop accepting and let in-flight requests finish (h3 sends
	// GOAWAY); after 500 ms whatever is left is closed (h3: CONNECTION_CLOSE).
	<-ctx.Done()
	stop() // a second signal kills at once
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	var wg sync.WaitGroup
	wg.Go(func() {
		if srv.Shutdown(shutdownCtx) != nil {
			srv.Close()
		}
	})
	wg.Go(func() { _ = h3.Shutdown(shutdownCtx) })
	wg.Wait()
	udp.Close()
}
