package dev.tern.tcp;

/**
 * How the receiving half offers its window and when it acknowledges in-order data: Linux's way by default
 * ({@link #LINUX}), or FreeBSD's ({@link #FREEBSD}). RFC 9293 leaves both to the implementation within bounds: the
 * window must avoid silly window syndrome (§3.8.6.2.2) and must not shrink (§3.8.6.2.2, RFC 7323 §2.4), and an ACK
 * may wait at most 500 ms and must go for at least every second full-sized segment (§3.8.6.3, RFC 5681 §4.2).
 *
 * @param window    the rule for the window each segment offers
 * @param acks      when in-order data is acknowledged at once rather than at the delayed ACK
 * @param quickAcks how many ACKs of data go at once at a connection's start, before the delayed ACK applies
 *                  (Linux's quick-ACK mode: 16; FreeBSD has none: 0)
 * @param bufferSpace when above 0, a connection with the default receive buffer counts that buffer, for its window,
 *                  as this many bytes rounded up to whole segments of the MSS it sends with, at most its ring: FreeBSD
 *                  sizes its buffer so once the MSS is known (its tcp_mss, net.inet.tcp.recvspace 65536 becoming
 *                  65700 for an MSS of 1460), where Tern's ring is a power of two. 0, the default, counts the ring
 */
public record ReceivePolicy(WindowRule window, AckRule acks, int quickAcks, int bufferSpace) {
    /** Linux's: the right edge moves in steps, every second full-sized segment acknowledged, 16 quick ACKs. */
    public static final ReceivePolicy LINUX = new ReceivePolicy(WindowRule.RIGHT_EDGE_STEP,
        AckRule.SECOND_FULL_SEGMENT, 16, 0);
    /** FreeBSD's: the free space offered, every second segment acknowledged, no quick ACKs. */
    public static final ReceivePolicy FREEBSD = new ReceivePolicy(WindowRule.FREE_SPACE, AckRule.SECOND_SEGMENT, 0, 0);

    /** The window a segment offers (docs/TCP.md, "The receive window"). */
    public enum WindowRule {
        /**
         * RFC 1122 §4.2.3.3's receiver silly window avoidance as Linux applies it: the right edge moves only in steps
         * of at least min(buffer / 2, MSS), and the window is a multiple of the scale unit, rounded down.
         */
        RIGHT_EDGE_STEP,
        /**
         * FreeBSD's (its tcp_output): the free buffer space, capped by what the field can say, on every segment;
         * a window below both a quarter of the buffer and one MSS is offered as 0, and never less than what remains
         * of the window offered before. A window update after a read goes when the window grows by two segments
         * and by a quarter of the buffer (or the window is small, or the buffer is), or by half the buffer.
         */
        FREE_SPACE
    }

    /** When in-order data is acknowledged at once (docs/TCP.md, "ACK policy"). */
    public enum AckRule {
        /** RFC 5681 §4.2's minimum, as Linux: once two full-sized segments' worth of bytes wait unacknowledged. */
        SECOND_FULL_SEGMENT,
        /**
         * FreeBSD's (its tcp_input DELAY_ACK): a segment is acknowledged at once when another already waits for the
         * delayed ACK, whatever their sizes, or when it is larger than the MSS.
         */
        SECOND_SEGMENT,
        /** No delayed ACK: every segment of in-order data is acknowledged at once (FreeBSD's delayed_ack=0). */
        EVERY_SEGMENT
    }

    public ReceivePolicy {
        if (window == null || acks == null) {
            throw new IllegalArgumentException("a receive policy needs its window rule and ACK rule");
        }
        if (quickAcks < 0) {
            throw new IllegalArgumentException("quickAcks must not be negative, got " + quickAcks);
        }
        if (bufferSpace < 0) {
            throw new IllegalArgumentException("bufferSpace must not be negative, got " + bufferSpace);
        }
    }

    /** This policy with another window rule. */
    public ReceivePolicy withWindow(WindowRule rule) {
        return new ReceivePolicy(rule, acks, quickAcks, bufferSpace);
    }

    /** This policy with another ACK rule. */
    public ReceivePolicy withAcks(AckRule rule) {
        return new ReceivePolicy(window, rule, quickAcks, bufferSpace);
    }

    /** This policy with another count of quick ACKs. */
    public ReceivePolicy withQuickAcks(int count) {
        return new ReceivePolicy(window, acks, count, bufferSpace);
    }

    /** This policy counting the default receive buffer as {@code bytes}, rounded up to whole segments (0: the ring). */
    public ReceivePolicy withBufferSpace(int bytes) {
        return new ReceivePolicy(window, acks, quickAcks, bytes);
    }
}
