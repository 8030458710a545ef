package db;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * GET /doc/{id}: the JSON document of that id, read by primary key from PostgreSQL through a
 * HikariCP pool of POOL connections, on the JDK's HttpServer with a thread pool of 200: the
 * servlet model, where each request holds a thread while it waits for a connection.
 *
 * <pre>java -jar db-jdbc.jar PORT PGHOST PGPORT POOL</pre>
 */
public final class DocServer {
    /** Tomcat's default maxThreads: the post's servlet container. */
    static final int THREADS = 200;

    static final String USAGE =
            "usage: java -jar db-jdbc.jar PORT PGHOST PGPORT POOL (PORT 0-65535, PGPORT 1-65535, POOL 1-1000)";
    static final String QUERY = "SELECT body::text FROM docs WHERE id = ?";
    static final Pattern DOC = Pattern.compile("/doc/([0-9]{1,10})");
    static final byte[] NOT_FOUND = "no such document\n".getBytes(StandardCharsets.US_ASCII);
    static final byte[] BAD_ID = "bad id: want a number\n".getBytes(StandardCharsets.US_ASCII);
    static final byte[] DB_ERROR = "database error\n".getBytes(StandardCharsets.US_ASCII);

    public static void main(String[] args) throws IOException {
        Integer port = args.length == 4 ? number(args[0], 0, 65535) : null;
        Integer pgport = args.length == 4 ? number(args[2], 1, 65535) : null;
        Integer pool = args.length == 4 ? number(args[3], 1, 1000) : null;
        if (port == null || pgport == null || pool == null || args[1].isEmpty()) {
            System.err.println(USAGE);
            System.exit(2);
        }

        HikariConfig config = new HikariConfig();
        config.setJdbcUrl("jdbc:postgresql://" + args[1] + ":" + pgport + "/postgres");
        config.setUsername("postgres");
        config.setMaximumPoolSize(pool); // minimumIdle defaults to the same: a fixed pool
        config.setPoolName("docs");
        // A request waits at most 5 s for a connection (HikariCP's default is 30 s), then
        // gets a 503: within the load's 10 s timeout, and prompt when PostgreSQL is gone.
        config.setConnectionTimeout(5000);
        HikariDataSource ds;
        try {
            ds = new HikariDataSource(config); // opens one connection now: fails fast
        } catch (RuntimeException e) {
            System.err.println("java-jdbc: cannot reach PostgreSQL at " + args[1] + ":" + pgport + ": "
                    + e.getMessage() + " (is it running?)");
            System.exit(2);
            return;
        }

        // The JDK server writes the head and the body of a response in two writes; with
        // Nagle's algorithm on, the body then waits for the client's delayed ACK (40 ms on
        // Linux): measured 52 ms p50 at 10 connections without this, under 1 ms with it.
        // Servlet containers (Tomcat's tcpNoDelay) set TCP_NODELAY by default.
        System.setProperty("sun.net.httpserver.nodelay", "true");
        HttpServer server;
        try {
            server = HttpServer.create(new InetSocketAddress("127.0.0.1", port), 4096);
        } catch (IOException e) {
            System.err.println("java-jdbc: cannot listen on 127.0.0.1:" + port + ": " + e.getMessage());
            System.exit(2);
            return;
        }
        ExecutorService threads = Executors.newFixedThreadPool(THREADS);
        server.setExecutor(threads);
        server.createContext("/", exchange -> handle(exchange, ds));
        server.start();
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            server.stop(0);
            threads.shutdownNow();
            ds.close();
        }));
        System.out.println("listening on 127.0.0.1:" + server.getAddress().getPort() + " (pool " + pool + ")");
    }

    static void handle(HttpExchange exchange, HikariDataSource ds) throws IOException {
        try (exchange) {
            String path = exchange.getRequestURI().getRawPath();
            if (!"GET".equals(exchange.getRequestMethod()) || !path.startsWith("/doc/")) {
                send(exchange, 404, "text/plain", NOT_FOUND);
                return;
            }
            Matcher m = DOC.matcher(path);
            long id = m.matches() ? Long.parseLong(m.group(1)) : -1;
            if (id < 0 || id > Integer.MAX_VALUE) {
                send(exchange, 400, "text/plain", BAD_ID);
                return;
            }
            String body;
            try (Connection c = ds.getConnection(); PreparedStatement ps = c.prepareStatement(QUERY)) {
                ps.setInt(1, (int) id);
                try (ResultSet rs = ps.executeQuery()) {
                    body = rs.next() ? rs.getString(1) : null;
                }
            } catch (SQLException e) {
                System.err.println("doc " + id + ": " + e.getMessage());
                send(exchange, 503, "text/plain", DB_ERROR);
                return;
            }
            if (body == null) {
                send(exchange, 404, "text/plain", NOT_FOUND);
            } else {
                send(exchange, 200, "application/json", body.getBytes(StandardCharsets.UTF_8));
            }
        }
    }

    static void send(HttpExchange exchange, int status, String type, byte[] body) throws IOException {
        exchange.getResponseHeaders().set("Content-Type", type);
        exchange.sendResponseHeaders(status, body.length);
        try (OutputStream out = exchange.getResponseBody()) {
            out.write(body);
        }
    }

    static Integer number(String s, int lo, int hi) {
        if (!s.matches("[0-9]{1,7}")) {
            return null;
        }
        int v = Integer.parseInt(s);
        return v >= lo && v <= hi ? v : null;
    }
}
