import com.sun.net.httpserver.HttpServer;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.concurrent.ThreadLocalRandom;

/** Answers every request with a 302 to one of N fox avatars, picked at random. */
public class AvatarServer {
    public static void main(String[] args) throws IOException {
        int port = 0, images = 0;
        try {
            port = Integer.parseInt(args[0]);
            images = Integer.parseInt(args[1]);
        } catch (RuntimeException e) { // missing or non-numeric argument
        }
        if (args.length < 2 || args.length > 3 || images < 1 || images > 65535) {
            System.err.println("usage: java AvatarServer PORT N [TEMPLATE]   (N in 1..65535, {n} in TEMPLATE)");
            System.exit(2);
        }
        int n = images;
        String template = args.length > 2 ? args[2] : "https://avatar.example/Renard-{n}.png";

        // Backlog 0 takes the JDK default (50), as the post's one-liner did.
        HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", port), 0);
        server.createContext("/", exchange -> {
            int pick = ThreadLocalRandom.current().nextInt(1, n + 1);
            exchange.getResponseHeaders().set("Location", template.replace("{n}", Integer.toString(pick)));
            exchange.sendResponseHeaders(302, -1); // -1: no body, so "Content-length: 0"
            exchange.close();
        });
        // No setExecutor: each request runs on the one dispatcher thread.
        server.start();
        System.out.println("listening on 127.0.0.1:" + server.getAddress().getPort());
    }
}
