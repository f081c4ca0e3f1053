package dev.tern.conformance.interop.programs;

import java.io.IOException;
import java.net.DatagramPacket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.MulticastSocket;
import java.nio.charset.StandardCharsets;

/**
 * A receiver on the classic {@code java.net.MulticastSocket}, knowing nothing of Tern:
 * {@code ClassicMulticastReceiver GROUP PORT} joins GROUP, prints "joined", then prints "got TEXT from SOURCE" for the
 * first datagram (waiting at most 20 s).
 */
public final class ClassicMulticastReceiver {
    private ClassicMulticastReceiver() {
    }

    public static void main(String[] args) throws IOException {
        try (MulticastSocket socket = new MulticastSocket(Integer.parseInt(args[1]))) {
            socket.joinGroup(new InetSocketAddress(InetAddress.getByName(args[0]), 0), null);
            socket.setSoTimeout(20_000);
            System.out.println("joined");
            System.out.flush();
            final DatagramPacket packet = new DatagramPacket(new byte[1500], 1500);
            socket.receive(packet);
            System.out.println("got " + new String(packet.getData(), 0, packet.getLength(), StandardCharsets.US_ASCII)
                + " from " + packet.getAddress().getHostAddress());
        }
    }
}
