package dev.tern.afxdp;

/**
 * How to open an {@link AfXdpLink}.
 *
 * @param queue        the interface's RX/TX queue the socket binds to (the XSKMAP key)
 * @param ipv4         Tern's IPv4 address: the XDP program steers frames for it (and ARP asking for it) to Tern
 * @param mac          Tern's MAC, or {@link #INTERFACE_MAC} for the interface's own (shared with the kernel)
 * @param frameCount   UMEM chunks, half for receive and half for transmit; a power of two, at least 64
 * @param chunkSize    bytes per UMEM chunk: 2048 or 4096
 * @param bindMode     {@link BindMode#AUTO} tries zero-copy, then copy
 * @param genericXdp   attach the program in generic (SKB) mode without trying native mode
 * @param busyPollUs   0: no busy polling; else {@code SO_PREFER_BUSY_POLL}, {@code SO_BUSY_POLL} of this many
 *                     microseconds and {@code SO_BUSY_POLL_BUDGET} 64 on the socket, where the kernel offers them
 */
public record AfXdpOptions(int queue, int ipv4, long mac, int frameCount, int chunkSize, BindMode bindMode, boolean genericXdp,
                           int busyPollUs) {
    public static final long INTERFACE_MAC = -1;

    /** Which AF_XDP bind to ask for. */
    public enum BindMode { AUTO, COPY, ZEROCOPY }

    public AfXdpOptions {
        if (queue < 0) {
            throw new IllegalArgumentException("queue must be >= 0, got " + queue);
        }
        if (frameCount < 64 || Integer.bitCount(frameCount) != 1) {
            throw new IllegalArgumentException("frameCount must be a power of two >= 64, got " + frameCount);
        }
        if (chunkSize != 2048 && chunkSize != 4096) {
            throw new IllegalArgumentException("chunkSize must be 2048 or 4096, got " + chunkSize);
        }
        if (busyPollUs < 0) {
            throw new IllegalArgumentException("busyPollUs must be >= 0, got " + busyPollUs);
        }
        if (bindMode == null) {
            throw new IllegalArgumentException("bindMode");
        }
    }

    /**
     * Queue 0, the interface's MAC, 4096 chunks of 2048 bytes (8 MiB), zero-copy where offered, native XDP first, no
     * busy polling.
     */
    public static AfXdpOptions forAddress(int ipv4) {
        return new AfXdpOptions(0, ipv4, INTERFACE_MAC, 4096, 2048, BindMode.AUTO, false, 0);
    }

    public AfXdpOptions queue(int value) {
        return new AfXdpOptions(value, ipv4, mac, frameCount, chunkSize, bindMode, genericXdp, busyPollUs);
    }

    public AfXdpOptions mac(long value) {
        return new AfXdpOptions(queue, ipv4, value, frameCount, chunkSize, bindMode, genericXdp, busyPollUs);
    }

    public AfXdpOptions frames(int count, int size) {
        return new AfXdpOptions(queue, ipv4, mac, count, size, bindMode, genericXdp, busyPollUs);
    }

    public AfXdpOptions bindMode(BindMode value) {
        return new AfXdpOptions(queue, ipv4, mac, frameCount, chunkSize, value, genericXdp, busyPollUs);
    }

    public AfXdpOptions genericXdp(boolean value) {
        return new AfXdpOptions(queue, ipv4, mac, frameCount, chunkSize, bindMode, value, busyPollUs);
    }

    public AfXdpOptions busyPollUs(int value) {
        return new AfXdpOptions(queue, ipv4, mac, frameCount, chunkSize, bindMode, genericXdp, value);
    }
}
