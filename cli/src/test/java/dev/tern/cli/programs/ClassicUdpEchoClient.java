package dev.tern.cli.programs;

import java.io.IOException;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;

/**
 * A client on the classic {@code java.net.DatagramSocket}, knowing nothing of Tern: sends a datagram to HOST PORT,
 * waits up to 10 s for the reply and prints "classic udp echoed TEXT from SOURCE".
 */
public final class ClassicUdpEchoClient {
    private ClassicUdpEchoClient() {
    }

    public static void main(String[] args) throws IOException {
        final byte[] line = "hello through a classic datagram socket".getBytes(StandardCharsets.US_ASCII);
        try (DatagramSocket socket = new DatagramSocket()) {
            socket.setSoTimeout(10_000);
            socket.send(new DatagramPacket(line, line.length, new InetSocketAddress(args[0], Integer.parseInt(args[1]))));
            final DatagramPacket reply = new DatagramPacket(new byte[100], 100);
            socket.receive(reply);
            System.out.println("classic udp echoed " + new String(reply.getData(), 0, reply.getLength(), StandardCharsets.US_ASCII)
                + " from " + reply.getSocketAddress());
        }
    }
}
