package dev.tern.cli.programs;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.channels.spi.SelectorProvider;
import java.nio.charset.StandardCharsets;

/**
 * An ordinary NIO client that knows nothing of Tern: connects to HOST PORT, sends a line, reads it back, prints
 * "echoed LINE via PROVIDER", then (with "hold") waits for its standard input to close before it exits. The tests
 * run it under {@code tern exec}.
 */
public final class NioEchoClient {
    private NioEchoClient() {
    }

    public static void main(String[] args) throws IOException {
        final String line = "hello through whatever provider this JVM has";
        try (SocketChannel channel = SocketChannel.open(new InetSocketAddress(args[0], Integer.parseInt(args[1])))) {
            channel.write(ByteBuffer.wrap(line.getBytes(StandardCharsets.US_ASCII)));
            final ByteBuffer reply = ByteBuffer.allocate(line.length());
            while (reply.hasRemaining() && channel.read(reply) >= 0) {
                Thread.onSpinWait();
            }
            System.out.println("echoed " + new String(reply.array(), 0, reply.position(), StandardCharsets.US_ASCII)
                + " via " + SelectorProvider.provider().getClass().getName());
            System.out.flush();
            if (args.length > 2 && args[2].equals("hold")) {
                while (System.in.read() >= 0) {
                    Thread.onSpinWait();
                }
            }
        }
    }
}
