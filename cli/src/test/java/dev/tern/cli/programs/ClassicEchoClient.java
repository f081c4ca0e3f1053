package dev.tern.cli.programs;

import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;

/**
 * A client on the classic {@code java.net.Socket}, knowing nothing of Tern: connects to HOST PORT, sends a line,
 * reads it back and prints "classic echoed LINE". The tests run it under {@code tern exec}.
 */
public final class ClassicEchoClient {
    private ClassicEchoClient() {
    }

    public static void main(String[] args) throws IOException {
        final String line = "hello through a classic socket";
        try (Socket socket = new Socket(args[0], Integer.parseInt(args[1]))) {
            socket.setTcpNoDelay(true);
            socket.setSoTimeout(10_000);
            socket.getOutputStream().write(line.getBytes(StandardCharsets.US_ASCII));
            final InputStream in = socket.getInputStream();
            final byte[] reply = new byte[line.length()];
            int got = 0;
            while (got < reply.length) {
                final int n = in.read(reply, got, reply.length - got);
                if (n < 0) {
                    break;
                }
                got += n;
            }
            System.out.println("classic echoed " + new String(reply, 0, got, StandardCharsets.US_ASCII) + " from "
                + socket.getRemoteSocketAddress());
        }
    }
}
