package dev.tern.udp;

/**
 * UDP settings.
 *
 * @param maxSockets          sockets open at once
 * @param receiveBufferBytes  receive ring per socket (a power of two); datagrams that do not fit are dropped and counted
 * @param sendBufferBytes     send ring per socket (a power of two); must hold the largest datagram, 64 KiB or more
 * @param ephemeralFirst      first port handed out for port 0 (Linux ip_local_port_range 32768-60999)
 * @param ephemeralLast       last such port
 */
public record UdpConfig(int maxSockets, int receiveBufferBytes, int sendBufferBytes, int ephemeralFirst,
                        int ephemeralLast) {
    public static final UdpConfig DEFAULT = new UdpConfig(1024, 256 * 1024, 128 * 1024, 32768, 60999);

    public UdpConfig {
        if (maxSockets < 1 || Integer.bitCount(receiveBufferBytes) != 1 || Integer.bitCount(sendBufferBytes) != 1
            || sendBufferBytes < 128 * 1024 || receiveBufferBytes < 128 * 1024 || ephemeralFirst < 1
            || ephemeralLast > 65535 || ephemeralFirst > ephemeralLast) {
            throw new IllegalArgumentException("invalid UDP configuration: " + this
                + " (buffers: powers of two of at least 128 KiB, so a 64 KiB datagram fits)");
        }
    }
}
