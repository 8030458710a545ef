// Avatar redirector on the standard library's net/http: every request gets a
// 302 to one of N fox avatars picked at random; /<rrggbb>.svg draws the fox
// in that colour, and /random.svg is a 302 to a random colour.
//
// Usage: server PORT N [TEMPLATE]
package main

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"log"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/signal"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"text/template"
	"time"
)

// The fox of crates/avatar/assets/fox.svg, with its {{color}} written {{.}}.
//
//go:embed fox.svg.tmpl
var foxSVG string

// Parsed once, at startup: the reader's version parsed the template in every
// request, which cost more than drawing the fox.
var fox = template.Must(template.New("fox").Parse(foxSVG))

// Exactly /rrggbb.svg, any case, as avatar takes it.
var svgPath = regexp.MustCompile(`^/([0-9a-fA-F]{6})\.svg$`)

// svg answers a *.svg path: the fox in the path's colour, a 302 to a random
// colour for /random.svg, or 404.
func svg(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/random.svg" {
		w.Header().Set("Location", fmt.Sprintf("/%06x.svg", rand.IntN(1<<24)))
		w.WriteHeader(http.StatusFound)
		return
	}
	m := svgPath.FindStringSubmatch(r.URL.Path)
	if m == nil {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "image/svg+xml; charset=utf-8")
	// text/template, not html/template: the colour is six hex digits (the
	// regexp says so), and an SVG is not an HTML page to escape for.
	// About 1.1 KB, under net/http's 4 KB buffer, so it sets Content-Length.
	if err := fox.Execute(w, "#"+strings.ToLower(m[1])); err != nil {
		log.Print(err)
	}
}

func main() {
	if len(os.Args) < 3 || len(os.Args) > 4 {
		fmt.Fprintln(os.Stderr, "usage: server PORT N [TEMPLATE]")
		os.Exit(2)
	}
	port, err := strconv.ParseUint(os.Args[1], 10, 16)
	if err != nil {
		log.Fatalf("bad PORT %q", os.Args[1])
	}
	n, err := strconv.Atoi(os.Args[2])
	if err != nil || n < 1 || n > 65535 {
		log.Fatalf("bad N %q: want 1..65535", os.Args[2])
	}
	location := "https://avatar.example/Renard-{n}.png"
	if len(os.Args) == 4 {
		location = os.Args[3]
	}

	// Not http.Redirect: for a GET it adds Content-Type and a small HTML
	// body ("<a href=...>Found</a>."). Writing no body makes net/http send
	// Content-Length: 0, which is what the contract asks for.
	redirect := func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, ".svg") {
			svg(w, r)
			return
		}
		url := strings.ReplaceAll(location, "{n}", strconv.Itoa(rand.IntN(n)+1))
		w.Header().Set("Location", url)
		w.WriteHeader(http.StatusFound)
	}

	// Caught before the port opens, so a SIGTERM right after startup is graceful too.
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	ln, err := net.Listen("tcp4", net.JoinHostPort("127.0.0.1", strconv.FormatUint(port, 10)))
	if err != nil {
		log.Fatal(err)
	}
	// HTTP/1.1 and h2c with prior knowledge on the same port (Go 1.24+): net/http
	// tells them apart by the HTTP/2 connection preface. Upgrade: h2c is not
	// supported; such a request is answered over HTTP/1.1.
	var protocols http.Protocols
	protocols.SetHTTP1(true)
	protocols.SetUnencryptedHTTP2(true)
	srv := &http.Server{
		Handler:           http.HandlerFunc(redirect),
		ReadHeaderTimeout: 10 * time.Second, // against slowloris; a benchmark never hits it
		Protocols:         &protocols,
	}
	fmt.Fprintln(os.Stderr, "listening on", ln.Addr())
	go func() {
		if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			log.Fatal(err)
		}
	}()

	// SIGTERM: stop accepting, let in-flight requests finish, close the rest.
	<-ctx.Done()
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	if srv.Shutdown(ctx) != nil {
		srv.Close()
	}
}
