package dev.tern.script;

/**
 * {@code getsockopt SO_RCVBUF} and {@code SO_SNDBUF} as the script's system reports them ({@link ScriptDialect}).
 * Tern's buffers are rings of a power of two; what a script reads is the system's number for the same buffer:
 *
 * <ul>
 * <li>FreeBSD reports the size set (net.inet.tcp.recvspace and sendspace by default), and once the peer's MSS is
 * known (its SYN or SYN-ACK processed) a size above the MSS is rounded up to a whole number of segments of it, at
 * most kern.ipc.maxsockbuf, as its {@code tcp_mss()} does: 65536 becomes 65700 with an MSS of 1460.</li>
 * <li>Linux reports twice the size set, its bookkeeping overhead counted in; Tern's runner gives the size of Tern's
 * ring instead, which a Linux script cannot expect, and says so in docs/SCRIPTS.md.</li>
 * </ul>
 */
final class SocketBufferSizes {
    private SocketBufferSizes() {
    }

    /**
     * The size reported for a buffer of {@code bytes} (as set, or the default); {@code mss} is the connection's
     * MSS, or 0 while the peer's is not known.
     */
    static long reported(ScriptDialect dialect, long bytes, int mss) {
        if (dialect != ScriptDialect.FREEBSD || mss <= 0 || bytes <= mss) {
            return bytes;
        }
        final long rounded = (bytes + mss - 1) / mss * mss;
        return Math.min(rounded, ScriptProfile.FREEBSD_MAXSOCKBUF);
    }
}
