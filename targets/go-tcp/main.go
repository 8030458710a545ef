// Avatar redirector as a reader would write it on bare net: accept, read the
// request head, write a fixed 302, close, next. One connection at a time, no
// goroutine per connection, no HTTP parsing.
//
// Usage: server PORT N [TEMPLATE]
package main

import (
	"bytes"
	"fmt"
	"log"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"time"
)

// A real client sends its head in one write, microseconds after connecting.
// The deadline covers the whole connection, so a silent or trickling client
// stalls every other client for at most this long: the price of serving
// connections one at a time.
const deadline = time.Second

// Heads are a few hundred bytes; anything that does not end within this is
// not a request we want.
const maxHead = 8 << 10

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
	template := "https://avatar.example/Renard-{n}.png"
	if len(os.Args) == 4 {
		template = os.Args[3]
	}

	ln, err := net.Listen("tcp4", net.JoinHostPort("127.0.0.1", strconv.FormatUint(port, 10)))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Fprintln(os.Stderr, "listening on", ln.Addr())

	buf := make([]byte, maxHead)
	for {
		conn, err := ln.Accept()
		if err != nil {
			// Out of file descriptors or similar: back off, don't spin.
			time.Sleep(10 * time.Millisecond)
			continue
		}
		handle(conn, buf, template, n)
	}
}

func handle(conn net.Conn, buf []byte, template string, n int) {
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(deadline))
	end := 0
	for !bytes.Contains(buf[:end], []byte("\r\n\r\n")) {
		if end == len(buf) {
			return // head too long
		}
		m, err := conn.Read(buf[end:])
		if err != nil {
			return // EOF, reset or deadline before a whole head
		}
		end += m
	}
	url := strings.ReplaceAll(template, "{n}", strconv.Itoa(rand.IntN(n)+1))
	conn.Write([]byte("HTTP/1.1 302 Found\r\nLocation: " + url +
		"\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"))
}
