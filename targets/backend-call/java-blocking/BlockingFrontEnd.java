import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.Executors;

/**
 * The classic servlet model: a fixed pool of N threads, each handling one request at a time,
 * blocked in {@link HttpClient#send} while the backend answers.
 */
public class BlockingFrontEnd {
    static final String USAGE =
            "usage: java BlockingFrontEnd PORT BACKEND_URL THREADS   (BACKEND_URL like http://127.0.0.1:8081, THREADS in 1..100000)";

    public static void main(String[] args) throws IOException {
        int port = -1, threads = 0;
        URI backend = null;
        try {
            port = Integer.parseInt(args[0]);
            backend = backendUri(args[1]);
            threads = Integer.parseInt(args[2]);
        } catch (RuntimeException e) { // missing, non-numeric or malformed argument
        }
        if (args.length != 3 || port < 0 || port > 65535 || backend == null || threads < 1 || threads > 100_000) {
            System.err.println(USAGE);
            System.exit(2);
        }
        // The JDK closes keep-alive connections beyond 200 idle ones; 10,000 clients need more.
        if (System.getProperty("sun.net.httpserver.maxIdleConnections") == null) {
            System.setProperty("sun.net.httpserver.maxIdleConnections", "20000");
        }
        // One client for every thread: its pool keeps a connection to the backend alive per
        // request in flight, HTTP/1.1 so it never tries an h2c upgrade.
        HttpClient client = HttpClient.newBuilder()
                .version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(Duration.ofSeconds(5))
                .build();
        String base = backend.toString();
        HttpServer server;
        try {
            server = HttpServer.create(new InetSocketAddress("127.0.0.1", port), 4096);
        } catch (java.net.BindException e) {
            System.err.println("cannot listen on 127.0.0.1:" + port + ": " + e.getMessage() + " (is another server on that port?)");
            System.exit(2);
            return;
        }
        server.createContext("/", exchange -> {
            try (exchange) {
                handle(exchange, client, base);
            }
        });
        server.setExecutor(Executors.newFixedThreadPool(threads));
        server.start();
        System.out.println("listening on 127.0.0.1:" + server.getAddress().getPort());
    }

    /** Calls the backend once for `GET /`, and answers with its body and request id. */
    static void handle(HttpExchange exchange, HttpClient client, String base) throws IOException {
        if (!"/".equals(exchange.getRequestURI().getRawPath())) {
            reply(exchange, 404, "not found\n", null);
            return;
        }
        if (!"GET".equals(exchange.getRequestMethod())) {
            exchange.getResponseHeaders().set("Allow", "GET");
            reply(exchange, 405, "method not allowed\n", null);
            return;
        }
        String query = exchange.getRequestURI().getRawQuery();
        HttpRequest.Builder call = HttpRequest.newBuilder(URI.create(base + "/hello" + (query == null ? "" : "?" + query)))
                .timeout(Duration.ofSeconds(70)); // the backend's longest delay is 60 s
        String id = exchange.getRequestHeaders().getFirst("X-Request-Id");
        try {
            if (id != null) {
                call.header("X-Request-Id", id);
            }
        } catch (IllegalArgumentException e) {
            reply(exchange, 400, "bad X-Request-Id\n", null);
            return;
        }
        HttpResponse<byte[]> answer;
        try {
            answer = client.send(call.build(), HttpResponse.BodyHandlers.ofByteArray());
        } catch (IOException e) {
            reply(exchange, 502, "backend failed: " + e + "\n", null);
            return;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            reply(exchange, 502, "interrupted\n", null);
            return;
        }
        if (answer.statusCode() != 200) {
            reply(exchange, 502, "backend answered " + answer.statusCode() + "\n", null);
            return;
        }
        reply(exchange, 200, answer.body(), answer.headers().firstValue("X-Request-Id").orElse(null));
    }

    static void reply(HttpExchange exchange, int status, String body, String id) throws IOException {
        reply(exchange, status, body.getBytes(java.nio.charset.StandardCharsets.UTF_8), id);
    }

    static void reply(HttpExchange exchange, int status, byte[] body, String id) throws IOException {
        exchange.getResponseHeaders().set("Content-Type", "text/plain");
        if (id != null) {
            exchange.getResponseHeaders().set("X-Request-Id", id);
        }
        // -1: no body (0 would mean chunked).
        exchange.sendResponseHeaders(status, body.length == 0 ? -1 : body.length);
        if (body.length > 0) {
            exchange.getResponseBody().write(body);
        }
    }

    /** The backend's base URL: http, a host and a port, nothing after them. */
    static URI backendUri(String s) {
        URI u = URI.create(s.endsWith("/") ? s.substring(0, s.length() - 1) : s);
        if (!"http".equals(u.getScheme()) || u.getHost() == null || u.getPort() < 0
                || !(u.getRawPath() == null || u.getRawPath().isEmpty()) || u.getRawQuery() != null) {
            return null;
        }
        return u;
    }
}
