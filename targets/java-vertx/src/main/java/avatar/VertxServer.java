package avatar;

import io.vertx.core.AbstractVerticle;
import io.vertx.core.DeploymentOptions;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpServerOptions;

import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The avatar service on Vert.x core: every request gets a 302 to one of N fox avatars.
 * One verticle instance per CPU, each with its own HTTP server on the same port (Vert.x
 * shares the listening socket and spreads connections over the instances' event loops).
 *
 * <p>Usage: {@code java -jar avatar-vertx.jar PORT N [TEMPLATE]}
 */
public final class VertxServer extends AbstractVerticle {
    private static final AtomicBoolean ANNOUNCED = new AtomicBoolean();

    private final int port;
    private final int images;
    private final String[] location;

    VertxServer(int port, int images, String[] location) {
        this.port = port;
        this.images = images;
        this.location = location;
    }

    @Override
    public void start(Promise<Void> started) {
        HttpServerOptions options = new HttpServerOptions()
                .setHost("127.0.0.1")
                .setPort(port)
                .setAcceptBacklog(4096)
                .setTcpNoDelay(true);
        vertx.createHttpServer(options)
                .requestHandler(req -> {
                    String pick = Integer.toString(ThreadLocalRandom.current().nextInt(1, images + 1));
                    req.response()
                            .setStatusCode(302)
                            .putHeader(HttpHeaders.LOCATION, String.join(pick, location))
                            .putHeader(HttpHeaders.CACHE_CONTROL, "no-store")
                            .end();
                })
                .listen()
                .onSuccess(server -> {
                    if (!ANNOUNCED.getAndSet(true)) {
                        System.out.println("listening on 127.0.0.1:" + server.actualPort());
                    }
                })
                .<Void>mapEmpty()
                .onComplete(started);
    }

    public static void main(String[] args) {
        int port = -1, images = 0;
        try {
            port = Integer.parseInt(args[0]);
            images = Integer.parseInt(args[1]);
        } catch (RuntimeException e) { // missing or non-numeric argument
        }
        if (args.length < 2 || args.length > 3 || port < 0 || port > 65535 || images < 1 || images > 65535) {
            System.err.println("usage: java -jar avatar-vertx.jar PORT N [TEMPLATE]   (N in 1..65535, {n} in TEMPLATE)");
            System.exit(2);
        }
        String template = args.length > 2 ? args[2] : "https://avatar.example/Renard-{n}.png";
        String[] location = template.split("\\{n}", -1);
        int p = port, n = images;

        Vertx vertx = Vertx.vertx();
        // availableProcessors follows the affinity mask: one instance when pinned to one CPU.
        DeploymentOptions deployment = new DeploymentOptions().setInstances(Runtime.getRuntime().availableProcessors());
        vertx.deployVerticle(() -> new VertxServer(p, n, location), deployment)
                .onFailure(e -> {
                    System.err.println("cannot listen on 127.0.0.1:" + p + ": " + e.getMessage());
                    System.exit(1);
                });
    }
}
