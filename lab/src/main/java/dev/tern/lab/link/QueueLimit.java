package dev.tern.lab.link;

/**
 * A queue bound in bytes or in packets (exactly one of the two is positive): the buffer of a router port. Also used
 * for a marking threshold (DCTCP's K, RFC 8257 §3.1), in the same units.
 */
public record QueueLimit(long bytes, int packets) {
    public QueueLimit {
        if ((bytes > 0) == (packets > 0) || bytes < 0 || packets < 0) {
            throw new IllegalArgumentException("a queue limit is in bytes or in packets, got " + bytes + " bytes, "
                + packets + " packets");
        }
    }

    public static QueueLimit ofBytes(long bytes) {
        return new QueueLimit(bytes, 0);
    }

    public static QueueLimit ofPackets(int packets) {
        return new QueueLimit(0, packets);
    }

    /** Whether one more frame of {@code length} bytes still fits in a queue holding the given amount. */
    public boolean admits(int queuedPackets, long queuedBytes, int length) {
        return packets > 0 ? queuedPackets + 1 <= packets : queuedBytes + length <= bytes;
    }

    /** Whether a queue holding the given amount holds more than this bound. */
    public boolean exceeded(int queuedPackets, long queuedBytes) {
        return packets > 0 ? queuedPackets > packets : queuedBytes > bytes;
    }

    /** Whether a queue holding the given amount has reached this bound (a marking threshold). */
    public boolean reached(int queuedPackets, long queuedBytes) {
        return packets > 0 ? queuedPackets >= packets : queuedBytes >= bytes;
    }

    /** The most frames of {@code minFrame} bytes this bound can hold. */
    public int maxFrames(int minFrame) {
        return packets > 0 ? packets : (int) Math.min(1 << 20, bytes / minFrame + 1);
    }

    @Override
    public String toString() {
        return packets > 0 ? packets + " packets" : bytes + " bytes";
    }
}
