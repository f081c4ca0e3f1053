package dev.tern.conformance.interop.programs;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.ServerSocket;
import java.net.Socket;

/**
 * An echo server on the classic {@code java.net.ServerSocket}, a thread per connection, knowing nothing of Tern:
 * {@code ClassicEchoServer PORT}. Prints "listening on PORT" once bound. Under {@code tern exec} it serves through
 * Tern.
 */
public final class ClassicEchoServer {
    private ClassicEchoServer() {
    }

    public static void main(String[] args) throws IOException {
        try (ServerSocket server = new ServerSocket(Integer.parseInt(args[0]))) {
            System.out.println("listening on " + server.getLocalPort());
            System.out.flush();
            while (true) {
                final Socket socket = server.accept();
                Thread.ofPlatform().start(() -> echo(socket));
            }
        }
    }

    private static void echo(Socket socket) {
        try (socket; InputStream in = socket.getInputStream(); OutputStream out = socket.getOutputStream()) {
            final byte[] buffer = new byte[65536];
            int n;
            while ((n = in.read(buffer)) >= 0) {
                out.write(buffer, 0, n);
            }
            socket.shutdownOutput();
        } catch (IOException e) {
            System.err.println("echo: " + e);
        }
    }
}
