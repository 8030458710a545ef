import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * The async servlet with an async client: the handler starts {@link HttpClient#sendAsync} and
 * returns at once; the exchange is completed in the callback, so no thread waits for the
 * backend and a few threads serve any number of requests in flight.
 */
public class AsyncFrontEnd {
    static final String USAGE =
            "usage: java AsyncFrontEnd PORT BACKEND_URL [THREADS]   (BACKEND_URL like http://127.0.0.1:8081, THREADS in 1..1000, default 2)";

    public static void main(String[] args) throws IOException {
        int port = -1, threads = 2;
        URI backend = null;
        try {
            port = Integer.parseInt(args[0]);
            backend = backendUri(args[1]);
            if (args.length > 2) {
                threads = Integer.parseInt(args[2]);
            }
        } catch (RuntimeException e) { // missing, non-numeric or malformed argument
        }
        if (args.length < 2 || args.length > 3 || port < 0 || port > 65535 || backend == null || threads < 1 || threads > 1000) {
            System.err.println(USAGE);
            System.exit(2);
        }
        // The JDK closes keep-alive connections beyond 200 idle ones; 10,000 clients need more.
        if (System.getProperty("sun.net.httpserver.maxIdleConnections") == null) {
            System.setProperty("sun.net.httpserver.maxIdleConnections", "20000");
        }
        // One small pool runs the server's handlers (which only start a call) and the
        // client's callbacks (which write the answer): nothing on it ever waits for the
        // backend, so a thread per CPU keeps both CPUs busy without a queue of threads.
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        HttpClient client = HttpClient.newBuilder()
                .version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(Duration.ofSeconds(5))
                .executor(pool)
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
        server.createContext("/", exchange -> start(exchange, client, base));
        server.setExecutor(pool);
        server.start();
        System.out.println("listening on 127.0.0.1:" + server.getAddress().getPort());
    }

    /** Starts the backend call for `GET /`; the callback answers. Returns without waiting. */
    static void start(HttpExchange exchange, HttpClient client, String base) throws IOException {
        if (!"/".equals(exchange.getRequestURI().getRawPath())) {
            finish(exchange, 404, "not found\n", null);
            return;
        }
        if (!"GET".equals(exchange.getRequestMethod())) {
            exchange.getResponseHeaders().set("Allow", "GET");
            finish(exchange, 405, "method not allowed\n", null);
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
            finish(exchange, 400, "bad X-Request-Id\n", null);
            return;
        }
        client.sendAsync(call.build(), HttpResponse.BodyHandlers.ofByteArray())
                .whenComplete((answer, failure) -> {
                    try {
                        if (failure != null) {
                            finish(exchange, 502, "backend failed: " + failure + "\n", null);
                        } else if (answer.statusCode() != 200) {
                            finish(exchange, 502, "backend answered " + answer.statusCode() + "\n", null);
                        } else {
                            finish(exchange, 200, answer.body(), answer.headers().firstValue("X-Request-Id").orElse(null));
                        }
                    } catch (IOException e) {
                        exchange.close(); // the client went away: nothing to answer
                    }
                });
    }

    static void finish(HttpExchange exchange, int status, String body, String id) throws IOException {
        finish(exchange, status, body.getBytes(StandardCharsets.UTF_8), id);
    }

    /** Writes the whole answer and closes the exchange, which frees the connection. */
    static void finish(HttpExchange exchange, int status, byte[] body, String id) throws IOException {
        try (exchange) {
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
