// A stock JVM HTTP server for tests/integration/dual_stack.sh: binds
// InetSocketAddress(HOST, PORT) with the JVM's default flags (an AF_INET6
// socket bound to ::ffff:HOST), answers "java HOST" to every request and
// exits after SECONDS. Run as a source file: java HttpServe.java HOST PORT
// SECONDS.
import com.sun.net.httpserver.HttpServer;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;

public class HttpServe {
    public static void main(String[] args) throws Exception {
        HttpServer s = HttpServer.create(
            new InetSocketAddress(args[0], Integer.parseInt(args[1])), 64);
        byte[] body = ("java " + args[0] + "\n").getBytes(StandardCharsets.UTF_8);
        s.createContext("/", x -> {
            x.sendResponseHeaders(200, body.length);
            x.getResponseBody().write(body);
            x.close();
        });
        s.start();
        System.out.println("listening");
        System.out.flush();
        Thread.sleep(Long.parseLong(args[2]) * 1000L);
        s.stop(0);
    }
}
