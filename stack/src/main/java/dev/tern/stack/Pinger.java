package dev.tern.stack;

import dev.tern.core.memory.BigEndian;
import dev.tern.ipv4.EchoListener;
import dev.tern.ipv4.Ipv4Layer;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * An ICMP and ICMPv6 echo client on a {@link NetStack} (what {@code tern ping} uses): sends echo requests with a
 * known data pattern, matches replies by identifier and sequence, measures the round trip, and checks that the data
 * came back byte for byte (which exercises fragmentation and reassembly both ways for large payloads).
 *
 * <p>Owned by the stack's thread.
 */
public final class Pinger implements EchoListener, dev.tern.ipv6.Icmpv6Layer.EchoListener {
    /** Largest echo data: a 65535-byte datagram less the IPv4 and ICMP headers. */
    public static final int MAX_DATA = 65507;

    /** What the pinger reports. */
    public interface Listener {
        void onReply(int source, int sequence, int dataLength, int ttl, long roundTripNs, boolean dataIntact);

        void onError(int reporter, int type, int code, int sequence);

        /** An ICMPv6 echo reply from ({@code sourceHigh}, {@code sourceLow}). */
        default void onReply6(long sourceHigh, long sourceLow, int sequence, int dataLength, int hopLimit,
                              long roundTripNs, boolean dataIntact) {
        }
    }

    private final NetStack stack;
    private final Arena arena = Arena.ofShared();
    private final MemorySegment pattern = arena.allocate(MAX_DATA);
    private final long[] sentAtNs = new long[65536];
    private final int identifier;
    private Listener listener;
    private long replies;
    private long corrupted;

    Pinger(NetStack stack) {
        this.stack = stack;
        // Like ping(8): a recognisable incrementing pattern, so a reply's data can be checked.
        for (int i = 0; i < MAX_DATA; i++) {
            BigEndian.u8(pattern, i, i);
        }
        // On a shard of a sharded stack, an identifier that names the shard: shard 0 receives every echo reply and
        // hands each to the shard its identifier names.
        this.identifier = dev.tern.ethernet.link.ShardSteering.echoIdentifier(
            (int) (ProcessHandle.current().pid() ^ System.identityHashCode(this)), stack.shardIndex(), stack.shardCount());
        stack.ipv4().icmp().echoListener(this);
        if (stack.ipv6() != null) {
            stack.ipv6().icmp().echoListener(this);
        }
    }

    public void listener(Listener listener) {
        this.listener = listener;
    }

    public int identifier() {
        return identifier;
    }

    /** Sends echo request {@code sequence} with {@code dataLength} bytes; returns {@link Ipv4Layer#OK} or its error. */
    public int send(int destination, int sequence, int dataLength, long nowNs) {
        if (dataLength < 0 || dataLength > MAX_DATA) {
            throw new IllegalArgumentException("ping data must be 0.." + MAX_DATA + " bytes, got " + dataLength);
        }
        sentAtNs[sequence & 0xFFFF] = nowNs;
        return stack.ipv4().icmp().sendEchoRequest(destination, identifier, sequence & 0xFFFF, pattern, 0, dataLength,
            nowNs);
    }

    /**
     * Sends ICMPv6 echo request {@code sequence} to ({@code high}, {@code low}); returns
     * {@link dev.tern.ipv6.Ipv6Layer#OK} or its error. The stack must have IPv6.
     */
    public int send6(long high, long low, int sequence, int dataLength, long nowNs) {
        if (dataLength < 0 || dataLength > MAX_DATA) {
            throw new IllegalArgumentException("ping data must be 0.." + MAX_DATA + " bytes, got " + dataLength);
        }
        sentAtNs[sequence & 0xFFFF] = nowNs;
        return stack.ipv6().icmp().sendEchoRequest(high, low, identifier, sequence & 0xFFFF, pattern, 0, dataLength,
            nowNs);
    }

    @Override
    public void onEchoReply(long sourceHigh, long sourceLow, int id, int sequence, int hopLimit, MemorySegment data,
                            long offset, int length, long nowNs) {
        if (id != identifier) {
            return;
        }
        final boolean intact = check(data, offset, length);
        if (listener != null) {
            listener.onReply6(sourceHigh, sourceLow, sequence, length, hopLimit, nowNs - sentAtNs[sequence & 0xFFFF],
                intact);
        }
    }

    /** Counts a reply and whether its data is the pattern sent. */
    private boolean check(MemorySegment data, long offset, int length) {
        replies++;
        final boolean intact = length <= MAX_DATA && MemorySegment.mismatch(data, offset, offset + length, pattern, 0, length) < 0;
        if (!intact) {
            corrupted++;
        }
        return intact;
    }

    public long replies() {
        return replies;
    }

    /** Replies whose data differed from what was sent. */
    public long corrupted() {
        return corrupted;
    }

    @Override
    public void onEchoReply(int source, int id, int sequence, int ttl, MemorySegment data, long offset, int length,
                            long nowNs) {
        if (id != identifier) {
            return;
        }
        final boolean intact = check(data, offset, length);
        if (listener != null) {
            listener.onReply(source, sequence, length, ttl, nowNs - sentAtNs[sequence & 0xFFFF], intact);
        }
    }

    @Override
    public void onEchoError(int reporter, int type, int code, int destination, int id, int sequence, long nowNs) {
        if (id == identifier && listener != null) {
            listener.onError(reporter, type, code, sequence);
        }
    }

    void close() {
        arena.close();
    }
}
